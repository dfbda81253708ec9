package io.nexuscore.config;

import java.util.Set;

/**
 * The production metrics of io.nexuscore.metrics (issue 18).
 *
 * @param kernelTiming  time the XDP program and the TC chain inside the kernel and observe the
 *                      chain's tail-call depth (a load-time switch: off costs nothing, on ~60 ns a packet)
 * @param tlbFlushes    count the router's TLB flushes with nexus_tlb.bpf.o on tlb:tlb_flush (kernel mode)
 * @param tenantSeries  tenants with their own latency and misroute series; later ones count as "other"
 * @param refreshMs     how often kernel and /proc figures are read for /metrics
 */
public record MetricsConfig(boolean kernelTiming, boolean tlbFlushes, int tenantSeries, int refreshMs) {

    public static final MetricsConfig DEFAULT = new MetricsConfig(true, true, 32, 1000);

    public MetricsConfig {
        if (tenantSeries < 0 || tenantSeries > 10_000) {
            throw new ConfigException("metrics.tenantSeries must be in 0..10000, got " + tenantSeries);
        }
        if (refreshMs < 100 || refreshMs > 60_000) {
            throw new ConfigException("metrics.refreshMs must be in 100..60000, got " + refreshMs);
        }
    }

    static MetricsConfig from(Json json) {
        json.allowOnly(Set.of("kernelTiming", "tlbFlushes", "tenantSeries", "refreshMs"));
        return new MetricsConfig(
                json.bool("kernelTiming", DEFAULT.kernelTiming()),
                json.bool("tlbFlushes", DEFAULT.tlbFlushes()),
                json.integer("tenantSeries", DEFAULT.tenantSeries(), 0, 10_000),
                json.integer("refreshMs", DEFAULT.refreshMs(), 100, 60_000));
    }
}
