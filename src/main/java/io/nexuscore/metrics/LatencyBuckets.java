package io.nexuscore.metrics;

/**
 * The in-kernel histograms' log-linear buckets in nanoseconds (LATNS_* in nexus_metrics.h, the C
 * rule in nexus_timing.bpf.h's latns_bucket): exact below 4 ns, then 4 equal sub-buckets per power
 * of two. {@link #EXPORTED_FIRST}..{@link #EXPORTED_LAST} become Prometheus buckets at full
 * resolution (40 ns .. 131 µs); everything faster folds into the first, slower into +Inf.
 */
final class LatencyBuckets {

    static final int SUB_BITS = 2;
    static final int BUCKETS = 128;
    /** Bucket [32, 40) ns. */
    static final int EXPORTED_FIRST = 16;
    /** Bucket [114688, 131072) ns. */
    static final int EXPORTED_LAST = 63;

    private LatencyBuckets() {
    }

    /** The bucket a duration falls in: what the C side computes. */
    static int bucketOf(long ns) {
        int sub = 1 << SUB_BITS;
        if (ns < sub) {
            return (int) Math.max(ns, 0);
        }
        int m = 63 - Long.numberOfLeadingZeros(ns);
        int b = ((m - SUB_BITS + 1) << SUB_BITS) + (int) ((ns >>> (m - SUB_BITS)) & (sub - 1));
        return Math.min(b, BUCKETS - 1);
    }

    /** Exclusive upper edge of bucket b, in ns: every duration in it is below this. */
    static long upperExclusiveNs(int b) {
        int sub = 1 << SUB_BITS;
        if (b < sub) {
            return b + 1L;
        }
        int octave = b >> SUB_BITS;
        int s = b & (sub - 1);
        return (long) (sub + s + 1) << (octave - 1);
    }
}
