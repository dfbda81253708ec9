package io.nexuscore.adapt;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.maps.AdaptiveStatus;
import io.nexuscore.kernel.maps.Calibration;
import io.nexuscore.kernel.maps.Recalibration;
import io.nexuscore.http.JsonBodies;

import io.nexuscore.classify.Tier;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.ProblemException;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * GET/PATCH /adaptive bodies: the loop's settings (targets in ms on the wire, µs in the kernel; the
 * gain bounds in Q10 both ways, 1024 = 1.0) and, read-only, what it did (the live token gain as a decimal).
 */
public final class AdaptiveJson {

    public static final Set<String> FIELDS =
            Set.of("enabled", "period_ms", "nano_target_p95_ms", "step", "floor", "min_samples", "max_events",
                    "ceiling", "raise_below_pct", "raise_after", "calibrate", "gain_min", "gain_max", "gain_step_max",
                    "calibration_min_samples");

    private AdaptiveJson() {
    }

    /** A JSON merge patch of the settings; absent fields keep their value. */
    public record Patch(Optional<Boolean> enabled, OptionalLong periodMs, OptionalLong nanoTargetP95Ms, OptionalLong step,
                 OptionalLong floor, OptionalLong minSamples, OptionalLong maxEvents, OptionalLong ceiling,
                 OptionalLong raiseBelowPct, OptionalLong raiseAfter, Optional<Boolean> calibrate, OptionalLong gainMin,
                 OptionalLong gainMax, OptionalLong gainStepMax, OptionalLong calibrationMinSamples) {

        public AdaptiveSettings mergeInto(AdaptiveSettings current) {
            try {
                return new AdaptiveSettings(
                        enabled.orElse(current.enabled()),
                        (int) periodMs.orElse(current.periodMs()),
                        (int) (nanoTargetP95Ms.isPresent() ? nanoTargetP95Ms.getAsLong() * 1000 : current.nanoTargetP95Us()),
                        (int) step.orElse(current.step()),
                        (int) floor.orElse(current.floor()),
                        (int) minSamples.orElse(current.minSamples()),
                        (int) maxEvents.orElse(current.maxEvents()),
                        (int) ceiling.orElse(current.ceiling()),
                        (int) raiseBelowPct.orElse(current.raiseBelowPct()),
                        (int) raiseAfter.orElse(current.raiseAfter()),
                        calibrate.orElse(current.calibrate()),
                        (int) gainMin.orElse(current.gainMinQ10()),
                        (int) gainMax.orElse(current.gainMaxQ10()),
                        (int) gainStepMax.orElse(current.gainStepMaxQ10()),
                        (int) calibrationMinSamples.orElse(current.calibrationMinSamples()));
            } catch (AdaptiveSettings.InvalidSetting e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, e.getMessage(), patchedField(e.field()));
            }
        }

        /** The field to name: the wire name, and for gain_max below gain_min the one this patch moved. */
        private String patchedField(String field) {
            if (field.equals("nano_target_p95_us")) {
                return "nano_target_p95_ms";
            }
            if (field.equals("gain_max") && gainMax.isEmpty() && gainMin.isPresent()) {
                return "gain_min";
            }
            return field;
        }
    }

    /** Types and ranges checked here (400 / 422 naming the field); nothing is written on failure. */
    public static Patch parse(JsonObject body) {
        JsonBodies.allowOnly(body, FIELDS);
        return new Patch(
                JsonBodies.bool(body, "enabled"),
                JsonBodies.integer(body, "period_ms", AdaptiveSettings.MIN_PERIOD_MS, AdaptiveSettings.MAX_PERIOD_MS),
                JsonBodies.integer(body, "nano_target_p95_ms", 1, 600_000),
                JsonBodies.integer(body, "step", 1, 255),
                JsonBodies.integer(body, "floor", 0, 255),
                JsonBodies.integer(body, "min_samples", 1, AdaptiveSettings.MAX_EVENTS),
                JsonBodies.integer(body, "max_events", 1, AdaptiveSettings.MAX_EVENTS),
                JsonBodies.integer(body, "ceiling", 0, 255),
                JsonBodies.integer(body, "raise_below_pct", 1, 100),
                JsonBodies.integer(body, "raise_after", 1, 1000),
                JsonBodies.bool(body, "calibrate"),
                JsonBodies.integer(body, "gain_min", AdaptiveSettings.MIN_GAIN_Q10, AdaptiveSettings.MAX_GAIN_Q10),
                JsonBodies.integer(body, "gain_max", AdaptiveSettings.MIN_GAIN_Q10, AdaptiveSettings.MAX_GAIN_Q10),
                JsonBodies.integer(body, "gain_step_max", 1, AdaptiveSettings.MAX_GAIN_STEP_Q10),
                JsonBodies.integer(body, "calibration_min_samples", 1, AdaptiveSettings.MAX_EVENTS));
    }

    public static JsonObject settingsJson(AdaptiveSettings s) {
        return new JsonObject()
                .put("enabled", s.enabled())
                .put("period_ms", s.periodMs())
                .put("nano_target_p95_ms", millis(s.nanoTargetP95Us()))
                .put("step", s.step())
                .put("floor", s.floor())
                .put("min_samples", s.minSamples())
                .put("max_events", s.maxEvents())
                .put("ceiling", s.ceiling())
                .put("raise_below_pct", s.raiseBelowPct())
                .put("raise_after", s.raiseAfter())
                .put("calibrate", s.calibrate())
                .put("gain_min", s.gainMinQ10())
                .put("gain_max", s.gainMaxQ10())
                .put("gain_step_max", s.gainStepMaxQ10())
                .put("calibration_min_samples", s.calibrationMinSamples());
    }

    public static JsonObject toJson(AdaptiveStatus status) {
        JsonObject p95 = new JsonObject();
        JsonObject samples = new JsonObject();
        for (Tier tier : Tier.values()) {
            p95.put(tier.name().toLowerCase(java.util.Locale.ROOT), millis(status.lastP95Us().get(tier.wire())));
            samples.put(tier.name().toLowerCase(java.util.Locale.ROOT), status.lastSamples().get(tier.wire()));
        }
        JsonObject json = settingsJson(status.settings()).put("valid", status.settingsProblem().isEmpty());
        status.settingsProblem().ifPresent(problem -> json.put("problem", problem));
        return json.put("status", new JsonObject()
                .put("ticks", status.ticks())
                .put("drained", status.drained())
                .put("recalibrations", status.recalibrations())
                .put("good_periods", status.goodPeriods())
                .put("last_p95_ms", p95)
                .put("last_samples", samples)
                .put("last_recalibration", status.last().map(AdaptiveJson::recalibration).orElse(null))
                .put("token_gain", Calibration.gain(status.tokenGainQ10()))
                .put("calibrations", status.calibrations())
                .put("last_calibration", status.lastCalibration().map(AdaptiveJson::calibration).orElse(null)));
    }

    /**
     * The `calibration` event's data (published by the router when the kernel reports one); {@code at}
     * is the change's CLOCK_MONOTONIC timestamp as wall-clock time.
     */
    public static JsonObject calibration(Calibration c) {
        Instant at = Instant.now().minusNanos(Math.max(0, System.nanoTime() - c.timestampNs()));
        return new JsonObject()
                .put("old_gain", Calibration.gain(c.oldGainQ10()))
                .put("new_gain", Calibration.gain(c.newGainQ10()))
                .put("samples", c.samples())
                .put("true_tokens", c.trueTokensSum())
                .put("estimate_tokens", c.estimateTokens())
                .put("at", at.toString())
                .put("timestamp_ns", c.timestampNs());
    }

    /** The `recalibration` event's data (published by the router when the kernel reports one). */
    public static JsonObject recalibration(Recalibration r) {
        return new JsonObject()
                .put("timestamp_ns", r.timestampNs())
                .put("old_nano_max", r.oldNanoMax())
                .put("new_nano_max", r.newNanoMax())
                .put("p95_ms", millis(r.p95Us()))
                .put("samples", r.samples());
    }

    private static Number millis(int micros) {
        return micros % 1000 == 0 ? (Number) (micros / 1000) : (Number) (micros / 1000.0);
    }

}
