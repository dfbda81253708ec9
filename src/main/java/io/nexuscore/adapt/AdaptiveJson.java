package io.nexuscore.adapt;

import io.nexuscore.http.JsonBodies;

import io.nexuscore.adapt.AdaptiveSettings;
import io.nexuscore.adapt.AdaptiveStatus;
import io.nexuscore.adapt.Recalibration;
import io.nexuscore.classify.Tier;
import io.nexuscore.http.ControlProblems.Kind;
import io.nexuscore.http.ControlProblems.Problem;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/** GET/PATCH /adaptive bodies: the loop's settings (targets in ms on the wire, µs in the kernel). */
public final class AdaptiveJson {

    public static final Set<String> FIELDS =
            Set.of("enabled", "period_ms", "nano_target_p95_ms", "step", "floor", "min_samples", "max_events",
                    "ceiling", "raise_below_pct", "raise_after");

    private AdaptiveJson() {
    }

    /** A JSON merge patch of the settings; absent fields keep their value. */
    public record Patch(Optional<Boolean> enabled, OptionalLong periodMs, OptionalLong nanoTargetP95Ms, OptionalLong step,
                 OptionalLong floor, OptionalLong minSamples, OptionalLong maxEvents, OptionalLong ceiling,
                 OptionalLong raiseBelowPct, OptionalLong raiseAfter) {

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
                        (int) raiseAfter.orElse(current.raiseAfter()));
            } catch (AdaptiveSettings.InvalidSetting e) {
                String field = e.field().equals("nano_target_p95_us") ? "nano_target_p95_ms" : e.field();
                throw new Problem(Kind.INVALID_VALUE, e.getMessage(), field);
            }
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
                JsonBodies.integer(body, "raise_after", 1, 1000));
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
                .put("raise_after", s.raiseAfter());
    }

    public static JsonObject toJson(AdaptiveStatus status) {
        JsonObject p95 = new JsonObject();
        JsonObject samples = new JsonObject();
        for (Tier tier : Tier.values()) {
            p95.put(tier.name().toLowerCase(java.util.Locale.ROOT), millis(status.lastP95Us().get(tier.wire())));
            samples.put(tier.name().toLowerCase(java.util.Locale.ROOT), status.lastSamples().get(tier.wire()));
        }
        return settingsJson(status.settings()).put("status", new JsonObject()
                .put("ticks", status.ticks())
                .put("drained", status.drained())
                .put("recalibrations", status.recalibrations())
                .put("good_periods", status.goodPeriods())
                .put("last_p95_ms", p95)
                .put("last_samples", samples)
                .put("last_recalibration", status.last().map(AdaptiveJson::recalibration).orElse(null)));
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
