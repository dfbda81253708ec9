package io.nexuscore.config;

import java.util.Set;

/**
 * The production metrics of io.nexuscore.metrics (issue 18).
 *
 * @param kernelTiming  time the XDP program and the TC chain inside the kernel and observe the
 *                      chain's tail-call depth (a load-time switch: off costs nothing)
 * @param kernelTimingSample time one packet in this many, drawn at random (a power of two, 1..1024):
 *                      a timed packet pays ~80 ns for its two clock reads and the histogram, an untimed
 *                      one a pseudo-random draw; 1 times every packet
 * @param tlbFlushes    count the router's TLB flushes with nexus_tlb.bpf.o on tlb:tlb_flush (kernel mode)
 * @param tenantSeries  tenants with their own latency and misroute series; later ones count as "other"
 * @param refreshMs     how often kernel and /proc figures are read for /metrics
 */
public record MetricsConfig(boolean kernelTiming, int kernelTimingSample, boolean tlbFlushes, int tenantSeries, int refreshMs) {

    public static final MetricsConfig DEFAULT = new MetricsConfig(true, 16, true, 32, 1000);

    public MetricsConfig {
        if (kernelTimingSample < 1 || kernelTimingSample > 1024 || Integer.bitCount(kernelTimingSample) != 1) {
            throw new ConfigException("metrics.kernelTimingSample must be a power of two in 1..1024, got " + kernelTimingSample);
        }
        if (tenantSeries < 0 || tenantSeries > 10_000) {
            throw new ConfigException("metrics.tenantSeries must be in 0..10000, got " + tenantSeries);
        }
        if (refreshMs < 100 || refreshMs > 60_000) {
            throw new ConfigException("metrics.refreshMs must be in 100..60000, got " + refreshMs);
        }
    }

    /** The load-time value of nexus_observe: one packet in kernelTimingSample, 0 when timing is off. */
    public int kernelTimingEvery() {
        return kernelTiming ? kernelTimingSample : 0;
    }

    static MetricsConfig from(Json json) {
        json.allowOnly(Set.of("kernelTiming", "kernelTimingSample", "tlbFlushes", "tenantSeries", "refreshMs"));
        return new MetricsConfig(
                json.bool("kernelTiming", DEFAULT.kernelTiming()),
                json.integer("kernelTimingSample", DEFAULT.kernelTimingSample(), 1, 1024),
                json.bool("tlbFlushes", DEFAULT.tlbFlushes()),
                json.integer("tenantSeries", DEFAULT.tenantSeries(), 0, 10_000),
                json.integer("refreshMs", DEFAULT.refreshMs(), 100, 60_000));
    }
}
