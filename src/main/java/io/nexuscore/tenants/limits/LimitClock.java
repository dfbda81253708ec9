package io.nexuscore.tenants.limits;

/**
 * The two clocks the limits use: the monotonic one for the minute windows (System.nanoTime, which is
 * CLOCK_MONOTONIC on Linux, the clock bpf_ktime_get_ns reads: the kernel can count the same windows)
 * and the wall clock for the UTC calendar day of {@code tokens_per_day}.
 */
public interface LimitClock {

    LimitClock SYSTEM = new LimitClock() {
        @Override
        public long monotonicNanos() {
            return System.nanoTime();
        }

        @Override
        public long epochMillis() {
            return System.currentTimeMillis();
        }
    };

    long monotonicNanos();

    long epochMillis();
}
