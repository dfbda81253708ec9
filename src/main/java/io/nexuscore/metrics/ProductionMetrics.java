package io.nexuscore.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.MetricsConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;

/**
 * The metrics of this package for one running router: page faults per tier pool and per-tenant
 * series always; in kernel mode also the in-kernel run-time histograms and tail-call depth (when
 * the data path was loaded with {@code metrics.kernelTiming}), the TLB flush counter and the
 * verdict-read timer. {@link #close} before the data path closes.
 */
public final class ProductionMetrics implements AutoCloseable {

    private static final Logger LOG = System.getLogger(ProductionMetrics.class.getName());

    private final MeterRegistry registry;
    private final TenantSeries tenants;
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final MetricsRefresher refresher;

    private ProductionMetrics(MetricsConfig config, MeterRegistry registry, Optional<KernelDataPath> kernel) {
        this.registry = registry;
        this.tenants = new TenantSeries(registry, config.tenantSeries());
        owned.add(tenants);
        List<KernelReading> readings = new ArrayList<>();
        readings.add(owned(new TierPageFaults().bindTo(registry)));
        if (kernel.isPresent()) {
            if (config.kernelTiming() && registry instanceof PrometheusMeterRegistry prometheus) {
                readings.add(owned(new DataPathTimings(kernel.get()).bindTo(registry, prometheus.getPrometheusRegistry())));
            }
            if (config.tlbFlushes()) {
                try {
                    readings.add(owned(TlbFlushCounter.attachToThisProcess().bindTo(registry)));
                } catch (RuntimeException | LinkageError e) {
                    LOG.log(Level.WARNING, "metrics: no TLB flush counter (" + e.getMessage() + ")");
                }
            }
        }
        this.refresher = new MetricsRefresher(readings, config.refreshMs());
    }

    public static ProductionMetrics start(MetricsConfig config, MeterRegistry registry, Optional<KernelDataPath> kernel) {
        return new ProductionMetrics(config, registry, kernel);
    }

    private <T extends AutoCloseable> T owned(T resource) {
        owned.add(resource);
        return resource;
    }

    /** Where completed requests go for the per-tenant series. */
    /** Tenants the router can authenticate (API keys): their series are outside metrics.tenantSeries' bound. */
    public void knownTenants(java.util.function.Predicate<String> known) {
        tenants.knownTenants(known);
    }

    public LatencyRecorder tenantSeries() {
        return tenants;
    }

    /** {@code verdicts}, timed into {@code nexus_verdict_read_seconds}. */
    public VerdictSource timed(VerdictSource verdicts) {
        return new TimedVerdicts(verdicts, registry);
    }

    @Override
    public void close() {
        refresher.close();
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception e) {
                LOG.log(Level.WARNING, "metrics: close failed: " + e, e);
            }
        }
    }
}
