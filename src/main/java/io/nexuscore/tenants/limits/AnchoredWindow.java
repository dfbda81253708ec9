package io.nexuscore.tenants.limits;

/**
 * One limit kind's count for one tenant over an anchored window: the window starts at the first
 * counted request (not at a clock boundary) and lasts {@link #LENGTH_NANOS}; the first request at or
 * after its end finds it empty and, when counted, starts the next one. Not thread-safe: the owner
 * ({@link WindowLimiter}'s per-tenant lock) serializes it. The kernel keeps the same two words per
 * tenant and kind (start in ns of CLOCK_MONOTONIC, count) and must follow the same rules.
 */
final class AnchoredWindow {

    static final long LENGTH_NANOS = 60_000_000_000L;

    /** When the window started; meaningful only while {@link #open} is true. */
    private long start;
    private long count;
    private boolean open;

    /** True while a window started and {@code now} is before its end. */
    boolean current(long now) {
        return open && now - start < LENGTH_NANOS;
    }

    /** What the window counted so far; 0 once it ended. */
    long count(long now) {
        return current(now) ? count : 0;
    }

    /** Adds {@code amount}, starting a new window at {@code now} when none is current. @return the window's start */
    long add(long now, long amount) {
        if (!current(now)) {
            start = now;
            count = 0;
            open = true;
        }
        count += amount;
        return start;
    }

    /**
     * Corrects the count by {@code delta} (real usage less the charge), floored at 0, but only while
     * the window that took the charge ({@code startedAt}) is still current: a charge from an ended
     * window is gone with it.
     */
    void settle(long now, long startedAt, long delta) {
        if (current(now) && start == startedAt) {
            count = Math.max(0, count + delta);
        }
    }

    /** Nanoseconds until the current window ends; 0 when none is current. */
    long resetNanos(long now) {
        return current(now) ? LENGTH_NANOS - (now - start) : 0;
    }
}
