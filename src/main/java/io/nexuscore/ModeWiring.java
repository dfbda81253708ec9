package io.nexuscore;

import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.adapt.AdaptiveReporting;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.kernel.maps.TenantLimitMaps;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelDataPathControl;
import io.nexuscore.kernel.ReloadObjects;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.TokenGain;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.KernelConfig;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.control.ControlPorts;
import io.nexuscore.events.EventSink;
import io.nexuscore.fleet.FleetStatus;
import io.nexuscore.metrics.ProductionMetrics;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.KernelPrefixFloors;
import io.nexuscore.tenants.PinnedTenantFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantFloors;
import io.nexuscore.tenants.TenantKeys;
import io.vertx.core.Vertx;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.Set;

/**
 * What differs between kernel and user-space mode, built once at start ({@link #start}) for
 * {@link RouterRuntime}: the only place that decides between the eBPF data path and the Java scorer.
 *
 * @param control   what the control plane serves (thresholds, tenants, adaptive loop, programs)
 * @param verdicts  per-request kernel verdicts (NONE in user space)
 * @param floors    tenant floors by client address, per request (user space: memory; kernel: the pinned map)
 * @param reads     what reading verdicts and thresholds costs (a syscall in kernel mode)
 * @param latency   where completed-request latencies go (the kernel feedback loop)
 * @param tokenGain the token estimate's gain: the pinned token_model the kernel's calibration stage
 *                  refits; user space has no calibration, the built-in ratio ({@link TokenGain#UNIT})
 * @param tenantLimitMaps the kernel's tenant-limit maps (XDP counts prefix tenants' minute limits); empty in user space
 * @param resources what to release on close (detach programs, close maps)
 */
public record ModeWiring(ControlPorts control, VerdictSource verdicts, TenantFloors floors, ReadCost reads,
                         LatencyRecorder latency, TokenGain tokenGain, Optional<TenantLimitMaps> tenantLimitMaps,
                         AutoCloseable resources) {

    private static final System.Logger LOG = System.getLogger(ModeWiring.class.getName());

    /** "kernel" or "user", for logs and /healthz. */
    public String mode() {
        return control.dataPath().mode();
    }

    /** The same wiring, its control plane showing the fleet. */
    public ModeWiring withFleet(FleetStatus fleet) {
        return new ModeWiring(control.withFleet(fleet), verdicts, floors, reads, latency, tokenGain, tenantLimitMaps, resources);
    }

    /** The same wiring, its control plane serving the data plane's tenant limits. */
    public ModeWiring withLimits(io.nexuscore.tenants.limits.LimitGate limits) {
        return new ModeWiring(control.withLimits(limits), verdicts, floors, reads, latency, tokenGain, tenantLimitMaps, resources);
    }

    /** The live thresholds, shared by the data plane and the control plane. */
    public ThresholdStore thresholds() {
        return control.thresholds();
    }

    /**
     * The kernel data path when the kernel can run it (see {@link KernelDataPath#open}: AUTO falls
     * back to user space with one log line saying why, KERNEL fails), else the Java scorer alone.
     * In kernel mode bpf_stats are switched on for the program run-time metrics and restored on close.
     */
    static ModeWiring start(RouterConfig config, EventSink events, MeterRegistry registry, Vertx vertx) {
        TenantKeys keys = tenantKeys(config); // first: a bad file fails the start before anything is attached
        Optional<KernelDataPath> kernel = KernelDataPath.open(config.kernel(), config.scoring(),
                Set.of(config.dataPlane().port()), config.metrics().kernelTimingEvery());
        ProductionMetrics metrics = ProductionMetrics.start(config.metrics(), registry, kernel);
        metrics.knownTenants(keys::has); // a key-proven tenant's series cannot be crowded out by header names
        if (kernel.isEmpty()) {
            String reason = config.kernel().mode() == KernelConfig.Mode.USER
                    ? "kernel.mode is user" : "the eBPF data path could not load (see the log)";
            InMemoryPrefixFloors prefixFloors = new InMemoryPrefixFloors();
            ControlPorts control = ControlPorts.userSpace(new InMemoryThresholdStore(config.scoring().thresholds()),
                    prefixFloors, keys, reason);
            TenantFloors floors = client -> prefixFloors.floorFor(ByteBuffer.wrap(client.getAddress()).getInt());
            return new ModeWiring(control, VerdictSource.NONE, floors, ReadCost.MEMORY, metrics.tenantSeries(),
                    TokenGain.UNIT, Optional.empty(), metrics);
        }
        KernelDataPath path = kernel.get();
        Optional<AutoCloseable> stats = enableBpfStats();
        AutoCloseable reporting = AdaptiveReporting.start(path, events, registry);
        // Every connection's floor comes from the pinned map (a copy in memory), not only the SYN mark.
        PinnedTenantFloors floors = new PinnedTenantFloors(vertx, new KernelPrefixFloors(path.tenantPolicy()));
        AutoCloseable release = () -> {
            RouterRuntime.closeQuietly(floors);
            RouterRuntime.closeQuietly(metrics);
            RouterRuntime.closeQuietly(reporting);
            path.close();
            stats.ifPresent(RouterRuntime::closeQuietly);
        };
        ControlPorts control = new ControlPorts(path.thresholds(), path.thresholdsFromConfig(),
                new PrefixTenantPolicies(floors), path.adaptive(),
                new KernelDataPathControl(path, new ReloadObjects(config.kernel().reloadDir())), keys);
        return new ModeWiring(control, metrics.timed(path.verdicts()), floors, ReadCost.SYSCALL,
                path.latencyRing().recorder().andThen(metrics.tenantSeries()), path.tokenModel(),
                Optional.of(path.tenantLimits()), release);
    }

    /** The data plane's API keys, saved beside the control plane's state file. */
    private static TenantKeys tenantKeys(RouterConfig config) {
        return TenantKeys.load(TenantKeys.besideStateFile(config.control().stateFile()));
    }

    /**
     * Program run-time metrics need BPF run-time stats, on while the returned fd is open (the kernel
     * turns them off when the process ends, crash included); without them the router still runs,
     * only the eBPF run-time metrics stay at zero.
     *
     * @return the handle to close at shutdown; empty when stats could not be enabled
     */
    private static Optional<AutoCloseable> enableBpfStats() {
        try {
            return Optional.of(KernelDataPath.enableStats());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "eBPF run-time metrics are off: BPF_ENABLE_STATS failed ({0})", e.getMessage());
            return Optional.empty();
        }
    }
}
