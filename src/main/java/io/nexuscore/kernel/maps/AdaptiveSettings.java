package io.nexuscore.kernel.maps;

import io.nexuscore.classify.TokenGain;

/**
 * Settings of the kernel's latency feedback loop (struct adaptive_settings in nexus_shared.h, the
 * pinned {@code adaptive_settings} map). Read by the timer callback every period, so a change
 * applies at the next period.
 *
 * @param enabled         false: the loop drains and discards latency events, never changes thresholds
 * @param periodMs        timer period
 * @param nanoTargetP95Us nano's P95 target; above it nano_max goes down by {@code step * p95 / target}
 *                        (at least {@code step}, at most {@link #CUT_MAX_STEPS} {@code * step})
 * @param step            unit of nano_max's cut per period over target, and of the raise-back
 * @param floor           nano_max never goes below this
 * @param minSamples      periods with fewer nano samples make no decision
 * @param maxEvents       latency events drained per period
 * @param ceiling         raise-back: nano_max goes back up to this (the operator's value); 0 = only lower
 * @param raiseBelowPct   raise-back: a period counts as good when nano's P95 is under this % of the target
 * @param raiseAfter      raise-back: consecutive good periods before nano_max goes up by {@code step}
 * @param calibrate       self-calibration of the token estimate: false leaves token_model.gain alone
 * @param gainMinQ10      the gain never goes below this (Q10, {@link TokenGain#ONE_Q10} = 1.0)
 * @param gainMaxQ10      nor above this (Q10)
 * @param gainStepMaxQ10  the most the gain moves in one period (Q10)
 * @param calibrationMinSamples periods with fewer samples carrying a true count leave the gain alone
 */
public record AdaptiveSettings(boolean enabled, int periodMs, int nanoTargetP95Us, int step, int floor,
                               int minSamples, int maxEvents, int ceiling, int raiseBelowPct, int raiseAfter,
                               boolean calibrate, int gainMinQ10, int gainMaxQ10, int gainStepMaxQ10,
                               int calibrationMinSamples) {

    /** ADAPT_MAX_EVENTS in nexus_shared.h. */
    public static final int MAX_EVENTS = 100_000;
    /** ADAPT_CUT_MAX_STEPS in nexus_shared.h: the most one period over target cuts, in steps. */
    public static final int CUT_MAX_STEPS = 4;
    public static final int MIN_PERIOD_MS = 50;
    public static final int MAX_PERIOD_MS = 3_600_000;

    /** Bounds of the gain bounds (Q10): 1/16 .. 8. */
    public static final int MIN_GAIN_Q10 = 64;
    public static final int MAX_GAIN_Q10 = io.nexuscore.classify.TokenGain.MAX_Q10;
    public static final int MAX_GAIN_STEP_Q10 = 1024;

    /** Defaults; the loader sets the ceiling to the configured nano_max ({@link #withCeiling}). */
    public static final AdaptiveSettings DEFAULT = new AdaptiveSettings(true, 10_000, 50_000, 5, 20, 20, 10_000, 0, 50, 3,
            true, 512, 2048, 64, 50);

    public AdaptiveSettings {
        check("period_ms", periodMs, MIN_PERIOD_MS, MAX_PERIOD_MS);
        check("nano_target_p95_us", nanoTargetP95Us, 1, 600_000_000);
        check("step", step, 1, 255);
        check("floor", floor, 0, 255);
        check("min_samples", minSamples, 1, MAX_EVENTS);
        check("max_events", maxEvents, 1, MAX_EVENTS);
        check("ceiling", ceiling, 0, 255);
        check("raise_below_pct", raiseBelowPct, 1, 100);
        check("raise_after", raiseAfter, 1, 1000);
        check("gain_min", gainMinQ10, MIN_GAIN_Q10, MAX_GAIN_Q10);
        check("gain_max", gainMaxQ10, MIN_GAIN_Q10, MAX_GAIN_Q10);
        if (gainMaxQ10 < gainMinQ10) {
            throw new InvalidSetting("gain_max", "gain_max (" + gainMaxQ10 + ") must not be below gain_min ("
                    + gainMinQ10 + ")");
        }
        check("gain_step_max", gainStepMaxQ10, 1, MAX_GAIN_STEP_Q10);
        check("calibration_min_samples", calibrationMinSamples, 1, MAX_EVENTS);
    }

    /** A bad value, naming the field (the control plane turns it into a 422). */
    public static final class InvalidSetting extends IllegalArgumentException {
        private final String field;

        public InvalidSetting(String field, String message) {
            super(message);
            this.field = field;
        }

        public String field() {
            return field;
        }
    }

    private static void check(String field, long value, long min, long max) {
        if (value < min || value > max) {
            throw new InvalidSetting(field, field + " must be in " + min + ".." + max + ", got " + value);
        }
    }

    public AdaptiveSettings withPeriodMs(int periodMs) {
        return new AdaptiveSettings(enabled, periodMs, nanoTargetP95Us, step, floor, minSamples, maxEvents,
                ceiling, raiseBelowPct, raiseAfter, calibrate, gainMinQ10, gainMaxQ10, gainStepMaxQ10,
                calibrationMinSamples);
    }

    public AdaptiveSettings withEnabled(boolean enabled) {
        return new AdaptiveSettings(enabled, periodMs, nanoTargetP95Us, step, floor, minSamples, maxEvents,
                ceiling, raiseBelowPct, raiseAfter, calibrate, gainMinQ10, gainMaxQ10, gainStepMaxQ10,
                calibrationMinSamples);
    }

    public AdaptiveSettings withCeiling(int ceiling) {
        return new AdaptiveSettings(enabled, periodMs, nanoTargetP95Us, step, floor, minSamples, maxEvents,
                ceiling, raiseBelowPct, raiseAfter, calibrate, gainMinQ10, gainMaxQ10, gainStepMaxQ10,
                calibrationMinSamples);
    }

    /** The self-calibration's settings replaced, the latency loop's kept. */
    public AdaptiveSettings withCalibration(boolean calibrate, int gainMinQ10, int gainMaxQ10, int gainStepMaxQ10,
                                            int calibrationMinSamples) {
        return new AdaptiveSettings(enabled, periodMs, nanoTargetP95Us, step, floor, minSamples, maxEvents,
                ceiling, raiseBelowPct, raiseAfter, calibrate, gainMinQ10, gainMaxQ10, gainStepMaxQ10,
                calibrationMinSamples);
    }
}
