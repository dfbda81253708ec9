package io.nexuscore.adapt;

/**
 * Settings of the kernel's latency feedback loop (struct adaptive_settings in nexus_shared.h, the
 * pinned {@code adaptive_settings} map). Read by the timer callback every period, so a change
 * applies at the next period.
 *
 * @param enabled         false: the loop drains and discards latency events, never changes thresholds
 * @param periodMs        timer period
 * @param nanoTargetP95Us nano's P95 target; above it nano_max goes down by {@code step}
 * @param step            nano_max decrement per period over target
 * @param floor           nano_max never goes below this
 * @param minSamples      periods with fewer nano samples make no decision
 * @param maxEvents       latency events drained per period
 * @param ceiling         raise-back: nano_max goes back up to this (the operator's value); 0 = only lower
 * @param raiseBelowPct   raise-back: a period counts as good when nano's P95 is under this % of the target
 * @param raiseAfter      raise-back: consecutive good periods before nano_max goes up by {@code step}
 */
public record AdaptiveSettings(boolean enabled, int periodMs, int nanoTargetP95Us, int step, int floor,
                               int minSamples, int maxEvents, int ceiling, int raiseBelowPct, int raiseAfter) {

    /** ADAPT_MAX_EVENTS in nexus_shared.h. */
    public static final int MAX_EVENTS = 100_000;
    public static final int MIN_PERIOD_MS = 50;
    public static final int MAX_PERIOD_MS = 3_600_000;

    /** Defaults; the loader sets the ceiling to the configured nano_max ({@link #withCeiling}). */
    public static final AdaptiveSettings DEFAULT = new AdaptiveSettings(true, 10_000, 50_000, 5, 20, 20, 10_000, 0, 50, 3);

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
                ceiling, raiseBelowPct, raiseAfter);
    }

    public AdaptiveSettings withEnabled(boolean enabled) {
        return new AdaptiveSettings(enabled, periodMs, nanoTargetP95Us, step, floor, minSamples, maxEvents,
                ceiling, raiseBelowPct, raiseAfter);
    }

    public AdaptiveSettings withCeiling(int ceiling) {
        return new AdaptiveSettings(enabled, periodMs, nanoTargetP95Us, step, floor, minSamples, maxEvents,
                ceiling, raiseBelowPct, raiseAfter);
    }
}
