package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The registry's clock: durations on the nanosecond clock, and a wall time that keeps following the
 * real one (a frozen wall time would stop every timer's max and percentile windows from rotating).
 */
class CoarseWallClockTest {

    private final CoarseWallClock clock = CoarseWallClock.INSTANCE;

    @Test
    void monotonicTimeIsTheNanosecondClock() {
        long before = System.nanoTime();
        long read = clock.monotonicTime();
        long after = System.nanoTime();
        assertTrue(before <= read && read <= after, "monotonicTime " + read + " outside [" + before + ", " + after + "]");
    }

    @Test
    void wallTimeCatchesUpWithTheWallClockAndIsNeverAheadOfIt() throws InterruptedException {
        long target = System.currentTimeMillis() + 3 * CoarseWallClock.TICK_MS;
        long deadline = System.nanoTime() + 10_000_000_000L; // a bound on a stalled machine, not a speed figure
        long seen = clock.wallTime();
        while (seen < target && System.nanoTime() < deadline) {
            Thread.sleep(1);
            seen = clock.wallTime();
        }
        assertTrue(seen >= target, "wallTime stayed at " + seen + ", the wall clock passed " + target);
        long now = System.currentTimeMillis();
        assertTrue(clock.wallTime() <= now, "wallTime " + clock.wallTime() + " ahead of the wall clock " + now);
    }
}
