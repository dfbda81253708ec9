package io.nexuscore.metrics;

import io.micrometer.core.instrument.Clock;

/**
 * The meter registry's clock: {@link #monotonicTime()} is {@link System#nanoTime()}, as Micrometer's
 * own, but {@link #wallTime()} is a value one daemon thread refreshes every {@link #TICK_MS} ms.
 *
 * <p>Why: every timer record reads the wall clock twice (the window rotation of its max and of its
 * histogram or percentiles, whose windows last tens of seconds), several timers record per request,
 * and on this VM a clock read through the vDSO costs tens of ns (pvclock): in profiles those reads
 * were ~0.4 µs of CPU per request. Rotations only ask "has the window's time passed", so a wall
 * time up to {@link #TICK_MS} ms old changes nothing they report. Durations never use it: timers
 * measure with {@link #monotonicTime()}.
 */
public final class CoarseWallClock implements Clock {

    /**
     * Refresh period of {@link #wallTime()}: far below the shortest rotation period (tens of seconds).
     * Not shorter: each refresh is a sleep and a wake of the thread, 33-55 µs of CPU on the benchmark
     * VM (a Java thread sleeping in a loop, 2026-12-06), so 10 ms cost 3.3 ms of CPU a second, idle or
     * not, and 100 ms costs 0.55.
     */
    public static final long TICK_MS = 100;

    /** One per process: the refresh thread is a daemon and never stops. */
    public static final CoarseWallClock INSTANCE = new CoarseWallClock();

    private volatile long wallTimeMs = System.currentTimeMillis();

    private CoarseWallClock() {
        Thread refresher = new Thread(this::refresh, "nexus-metrics-clock");
        refresher.setDaemon(true);
        refresher.start();
    }

    private void refresh() {
        while (true) {
            try {
                Thread.sleep(TICK_MS);
            } catch (InterruptedException e) {
                // Nothing outside holds this thread; a stray interrupt must not freeze the clock.
            }
            wallTimeMs = System.currentTimeMillis();
        }
    }

    @Override
    public long wallTime() {
        return wallTimeMs;
    }

    @Override
    public long monotonicTime() {
        return System.nanoTime();
    }
}
