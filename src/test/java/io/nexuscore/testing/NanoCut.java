package io.nexuscore.testing;

import io.nexuscore.kernel.maps.AdaptiveSettings;

/**
 * How far the kernel loop lowers nano_max in one period over target (nano_cut in nexus_adapt.bpf.h),
 * written out again so that tests assert the rule rather than whatever the kernel happens to do.
 */
public final class NanoCut {

    private NanoCut() {
    }

    /** step * p95 / target rounded down, at least one step, at most {@link AdaptiveSettings#CUT_MAX_STEPS} steps. */
    public static int expected(int step, int p95Us, int targetUs) {
        long cut = (long) step * p95Us / targetUs;
        return (int) Math.min(Math.max(cut, step), (long) step * AdaptiveSettings.CUT_MAX_STEPS);
    }

    /** nano_max after one period over target: lowered by the cut, never below the floor. */
    public static int next(int nanoMax, int floor, int step, int p95Us, int targetUs) {
        if (nanoMax <= floor) {
            return nanoMax;
        }
        return Math.max(nanoMax - expected(step, p95Us, targetUs), floor);
    }
}
