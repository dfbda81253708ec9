package io.nexuscore;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.adapt.AdaptiveReporting;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelDataPathControl;
import io.nexuscore.kernel.ReloadObjects;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.LiveThresholds;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.EmbeddingsConfig;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.dataplane.ApiTargets;
import io.nexuscore.tiers.upstream.EmbeddingsUpstream;
import io.vertx.core.json.JsonObject;
import io.nexuscore.classify.TokenGain;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.ConfigException;
import io.nexuscore.config.KernelConfig;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.config.TierConfig;
import io.nexuscore.control.ControlPorts;
import io.nexuscore.control.ControlVerticle;
import io.nexuscore.control.TierStateView;
import io.nexuscore.dataplane.AcceptorVerticle;
import io.nexuscore.dataplane.DataPlaneHandler;
import io.nexuscore.dataplane.DataPlaneMetrics;
import io.nexuscore.dataplane.TierResolver;
import io.nexuscore.events.EventHub;
import io.nexuscore.events.EventSink;
import io.nexuscore.fleet.DeferredFleetStatus;
import io.nexuscore.fleet.Fleet;
import io.nexuscore.fleet.FleetKeys;
import io.nexuscore.fleet.FleetService;
import io.nexuscore.fleet.FleetStatus;
import io.nexuscore.fleet.RouterLocalPolicy;
import io.nexuscore.http.IoTransport;
import io.nexuscore.metrics.CoarseWallClock;
import io.nexuscore.metrics.ProductionMetrics;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.telemetry.SpanExporters;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.KernelPrefixFloors;
import io.nexuscore.tenants.PinnedTenantFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantFloors;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierPoolState;
import io.nexuscore.tiers.TierPools;
import io.nexuscore.tiers.upstream.UpstreamTierBackend;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.transport.Transport;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One running router: Vert.x, the metrics registry, the data path (kernel or user space), the tier
 * backends, the data-plane acceptors and the control plane. {@link #close()} releases all of it.
 *
 */
public final class RouterRuntime implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RouterRuntime.class.getName());

    /**
     * What differs between kernel and user-space mode, built once at start.
     *
     * @param control   what the control plane serves (thresholds, tenants, adaptive loop, programs)
     * @param verdicts  per-request kernel verdicts (NONE in user space)
     * @param floors    tenant floors by client address, per request (user space: memory; kernel: the pinned map)
     * @param reads     what reading verdicts and thresholds costs (a syscall in kernel mode)
     * @param latency   where completed-request latencies go (the kernel feedback loop)
     * @param tokenGain the token estimate's gain: the pinned token_model the kernel's calibration stage
     *                  refits; user space has no calibration, the built-in ratio ({@link TokenGain#UNIT})
     * @param resources what to release on close (detach programs, close maps)
     */
    public record ModeWiring(ControlPorts control, VerdictSource verdicts, TenantFloors floors, ReadCost reads,
                             LatencyRecorder latency, TokenGain tokenGain, AutoCloseable resources) {

        /** "kernel" or "user", for logs and /healthz. */
        public String mode() {
            return control.dataPath().mode();
        }

        /** The same wiring, its control plane showing the fleet. */
        public ModeWiring withFleet(FleetStatus fleet) {
            return new ModeWiring(control.withFleet(fleet), verdicts, floors, reads, latency, tokenGain, resources);
        }

        /** The live thresholds, shared by the data plane and the control plane. */
        public ThresholdStore thresholds() {
            return control.thresholds();
        }
    }

    private final Vertx vertx;
    private final PrometheusMeterRegistry registry;
    private final ModeWiring wiring;
    private final Map<Tier, TierBackend> backends;
    private final WorkerExecutor resolverPool;
    private final List<AcceptorVerticle> acceptors;
    private final AutoCloseable thresholdRefresh;
    private final RequestTracing tracing;
    private final Optional<FleetService> fleet;

    private RouterRuntime(Vertx vertx, PrometheusMeterRegistry registry, ModeWiring wiring,
                          Map<Tier, TierBackend> backends, WorkerExecutor resolverPool, List<AcceptorVerticle> acceptors,
                          AutoCloseable thresholdRefresh, RequestTracing tracing, Optional<FleetService> fleet) {
        this.vertx = vertx;
        this.registry = registry;
        this.wiring = wiring;
        this.backends = backends;
        this.resolverPool = resolverPool;
        this.acceptors = acceptors;
        this.thresholdRefresh = thresholdRefresh;
        this.tracing = tracing;
        this.fleet = fleet;
    }

    /** Starts everything from a validated config; on failure, releases what was started. */
    public static RouterRuntime start(RouterConfig config) {
        return start(config, null);
    }

    /** As {@link #start(RouterConfig)}, publishing events to {@code events} instead of the event hub. */
    public static RouterRuntime start(RouterConfig config, EventSink events) {
        return start(config, events, SpanExporters.OTLP);
    }

    /**
     * As {@link #start(RouterConfig, EventSink)}, finished spans going to the exporter {@code spanExporters}
     * makes (called only when {@code telemetry.otlp.enabled}); tests pass an in-memory exporter.
     */
    public static RouterRuntime start(RouterConfig config, EventSink events, SpanExporters spanExporters) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(),
                CoarseWallClock.INSTANCE);
        if (config.cluster().enabled()) {
            // Before any meter exists: every series of a fleet says which router it comes from.
            registry.config().commonTags("node", config.cluster().node());
        }
        // One event loop per acceptor: no loop sits idle beside the acceptors' own.
        VertxOptions options = new VertxOptions().setPreferNativeTransport(true)
                .setEventLoopPoolSize(config.dataPlane().effectiveInstances());
        IoTransport wanted = config.dataPlane().transport();
        Transport transport = wanted.select();
        String fallback = wanted.fallbackReason(transport);
        if (fallback != null) {
            LOG.log(Level.INFO, "dataPlane.transport auto: {0}; using {1}", fallback, IoTransport.nameOf(transport));
        }
        // Read and checked before joining: a router without a usable secret never enters the cluster.
        FleetKeys fleetKeys = config.cluster().enabled() ? FleetKeys.load(config.cluster().secretFile().orElseThrow()) : null;
        Vertx vertx = config.cluster().enabled() ? Fleet.startVertx(config.cluster(), options, transport)
                : Vertx.builder().with(options).withTransport(transport).build();
        List<AutoCloseable> started = new ArrayList<>();
        try {
            if (!vertx.isNativeTransportEnabled()) {
                LOG.log(Level.WARNING, "native transport unavailable ({0}): SO_MARK tenant floors are off",
                        String.valueOf(vertx.unavailableNativeTransportCause()));
            }
            Gauge.builder("nexus.io.transport", () -> 1).tag("transport", IoTransport.nameOf(transport))
                    .description("The socket I/O engine under the router's listeners and upstream clients")
                    .register(registry);
            EventHub hub = EventHub.from(config.control(), registry);
            EventSink sink = events != null ? events : hub;
            ModeWiring local = wiring(config, sink, registry, vertx);
            started.add(local.resources());
            DeferredFleetStatus fleetView = new DeferredFleetStatus(config.cluster().node(), config.cluster().name());
            ModeWiring wiring = config.cluster().enabled() ? local.withFleet(fleetView) : local;
            Map<Tier, TierBackend> pools = TierPools.create(config, registry);
            started.addAll(pools.values());

            // Event loops read the thresholds where they live (memory, or the mmap'ed kernel map).
            LiveThresholds thresholds = LiveThresholds.start(vertx, wiring.thresholds(), wiring.thresholds().readCost());
            started.add(thresholds);
            AutoCloseable thresholdRefresh = thresholds;
            Supplier<Thresholds> upstreamThresholds = thresholds.snapshot();
            Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
            Map<Tier, String> models = new EnumMap<>(Tier.class);
            for (Tier tier : Tier.values()) {
                TierConfig tierConfig = config.tier(tier);
                TierBackend backend = tierConfig.upstream().isPresent()
                        ? startedBy(started, new UpstreamTierBackend(vertx, tierConfig, upstreamThresholds, sink, registry,
                                config.dataPlane().effectiveInstances()))
                        : pools.get(tier);
                backends.put(tier, backend);
                models.put(tier, tierConfig.model());
            }

            int instances = config.dataPlane().effectiveInstances();
            WorkerExecutor resolverPool = wiring.reads().blocking()
                    ? vertx.createSharedWorkerExecutor("nexus-resolver", instances) : null;
            if (resolverPool != null) {
                started.add(resolverPool::close);
            }
            DataPlaneMetrics metrics = new DataPlaneMetrics(registry);
            TierResolver resolver = new TierResolver(new Scorer(config.scoring().weights(), wiring.tokenGain()), thresholds.store(),
                    thresholds.snapshot(), wiring.verdicts(), wiring.reads(), metrics);
            Map<Tier, Tier> fallbacks = new EnumMap<>(Tier.class);
            config.tiers().forEach((tier, tierConfig) -> tierConfig.fallback().ifPresent(f -> fallbacks.put(tier, f)));
            RequestTracing tracing = RequestTracing.start(config.telemetry(), spanExporters);
            started.add(tracing);
            DataPlaneHandler handler = new DataPlaneHandler(config.dataPlane(), resolver, backends, models, metrics,
                    sink, wiring.latency(), resolverPool, wiring.floors(), fallbacks, wiring.control().keys(), tracing,
                    apiTargets(config, vertx, registry, started));

            List<AcceptorVerticle> acceptors = new CopyOnWriteArrayList<>();
            Optional<FleetService> joined = Optional.empty();
            Supplier<Future<?>> deployDataPlane = () -> vertx.deployVerticle(() -> {
                AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), handler);
                acceptors.add(acceptor);
                return acceptor;
            }, new DeploymentOptions().setInstances(instances));
            if (config.cluster().enabled()) {
                // The control plane restores the state file, then the fleet's policy goes over it, and only
                // then does the data plane listen: a router that joins or restarts serves the fleet's policy.
                deployControlPlane(vertx, config, registry, wiring, hub, backends).await();
                FleetService fleet = FleetService.start(vertx, config.cluster(), config.adaptive().scope(),
                        new RouterLocalPolicy(wiring.thresholds(), wiring.control().tenants(), wiring.control().keys(),
                                wiring.control().adaptive()),
                        sink, wiring.mode(), config.control().stateFile(), registry, fleetKeys);
                started.add(fleet);
                fleetView.connect(fleet);
                joined = Optional.of(fleet);
                deployDataPlane.get().await();
            } else {
                deployDataPlane.get().await();
                deployControlPlane(vertx, config, registry, wiring, hub, backends).await();
            }

            LOG.log(Level.INFO, "nexuscore: data plane on {0}:{1} ({2} acceptors, transport {3}, {4} mode)",
                    config.dataPlane().host(), String.valueOf(acceptors.get(0).actualPort()), instances,
                    IoTransport.nameOf(transport), wiring.mode());
            return new RouterRuntime(vertx, registry, wiring, backends, resolverPool, List.copyOf(acceptors),
                    thresholdRefresh, tracing, joined);
        } catch (RuntimeException e) {
            for (int i = started.size() - 1; i >= 0; i--) {
                closeQuietly(started.get(i));
            }
            vertx.close().await();
            registry.close();
            throw e;
        }
    }

    /**
     * The kernel data path when the kernel can run it (see {@link KernelDataPath#open}: AUTO falls
     * back to user space with one log line saying why, KERNEL fails), else the Java scorer alone.
     * In kernel mode bpf_stats are switched on for the program run-time metrics and restored on close.
     */
    static ModeWiring wiring(RouterConfig config, EventSink events, MeterRegistry registry, Vertx vertx) {
        TenantKeys keys = tenantKeys(config); // first: a bad file fails the start before anything is attached
        Optional<KernelDataPath> kernel = KernelDataPath.open(config.kernel(), config.scoring(),
                Set.of(config.dataPlane().port()), config.metrics().kernelTiming());
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
                    TokenGain.UNIT, metrics);
        }
        KernelDataPath path = kernel.get();
        Optional<AutoCloseable> stats = enableBpfStats();
        AutoCloseable reporting = AdaptiveReporting.start(path, events, registry);
        // Every connection's floor comes from the pinned map (a copy in memory), not only the SYN mark.
        PinnedTenantFloors floors = new PinnedTenantFloors(vertx, new KernelPrefixFloors(path.tenantPolicy()));
        AutoCloseable release = () -> {
            closeQuietly(floors);
            closeQuietly(metrics);
            closeQuietly(reporting);
            path.close();
            stats.ifPresent(RouterRuntime::closeQuietly);
        };
        ControlPorts control = new ControlPorts(path.thresholds(), path.thresholdsFromConfig(),
                new PrefixTenantPolicies(floors), path.adaptive(),
                new KernelDataPathControl(path, new ReloadObjects(config.kernel().reloadDir())), keys);
        return new ModeWiring(control, metrics.timed(path.verdicts()), floors, ReadCost.SYSCALL,
                path.latencyRing().recorder().andThen(metrics.tenantSeries()), path.tokenModel(), release);
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

    /** The control plane, over the same thresholds, events and registry as the data plane. */
    static Future<?> deployControlPlane(Vertx vertx, RouterConfig config, PrometheusMeterRegistry registry,
                                        ModeWiring wiring, EventHub events, Map<Tier, TierBackend> backends) {
        TierStateView view = TierStateView.ofRecords(() -> {
            Map<Tier, TierPoolState> states = new EnumMap<>(Tier.class);
            backends.forEach((tier, backend) -> backend.poolState().ifPresent(state -> states.put(tier, state)));
            return states;
        });
        return vertx.deployVerticle(new ControlVerticle(config.control(), wiring.control(), view, events, registry));
    }

    private static TierBackend startedBy(List<AutoCloseable> started, TierBackend backend) {
        started.add(backend);
        return backend;
    }

    public Vertx vertx() {
        return vertx;
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    public ModeWiring wiring() {
        return wiring;
    }

    /** The request tracer ({@link RequestTracing#OFF} unless telemetry.otlp.enabled). */
    public RequestTracing tracing() {
        return tracing;
    }

    /** The data plane's bound port. */
    public int dataPlanePort() {
        return acceptors.get(0).actualPort();
    }

    /**
     * Stops accepting (undeploys every verticle), then closes the tiers, the data path (detaching
     * the kernel programs) and Vert.x, in that order, so no request meets a closed tier.
     */
    @Override
    public void close() {
        try {
            Future.all(vertx.deploymentIDs().stream().map(vertx::undeploy).toList()).await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.log(Level.WARNING, "verticles did not stop within 10 s", e);
        }
        // Before the stores it writes close; Vert.x's close below then leaves the cluster.
        fleet.ifPresent(RouterRuntime::closeQuietly);
        backends.values().forEach(RouterRuntime::closeQuietly);
        // After the last request: its span is in the final batch.
        closeQuietly(tracing);
        closeQuietly(thresholdRefresh);
        if (resolverPool != null) {
            closeQuietly(resolverPool::close);
        }
        closeQuietly(wiring.resources());
        try {
            vertx.close().await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.log(Level.WARNING, "vert.x did not close within 10 s", e);
        }
        registry.close();
    }

    private static void closeQuietly(AutoCloseable resource) {
        try {
            resource.close();
        } catch (Exception e) {
            LOG.log(Level.WARNING, "close failed: " + e, e);
        }
    }
    /**
     * The models a client may name beyond the tiers' (each upstream tier's upstream model, the
     * embeddings model) and the embeddings target, when one is configured.
     */
    private static ApiTargets apiTargets(RouterConfig config, Vertx vertx, MeterRegistry registry,
                                         List<AutoCloseable> started) {
        List<JsonObject> more = new ArrayList<>();
        for (Tier tier : Tier.values()) {
            config.tier(tier).upstream().ifPresent(u -> more.add(new JsonObject().put("id", u.model())
                    .put("object", "model").put("created", 0).put("owned_by", "upstream").put("tier", tier.label())));
        }
        EmbeddingsConfig embeddings = config.embeddings();
        if (embeddings.upstream().isEmpty()) {
            return new ApiTargets(more, Optional.empty());
        }
        UpstreamConfig upstream = embeddings.upstream().get();
        String listed = embeddings.listedModel().orElseThrow();
        more.add(new JsonObject().put("id", listed).put("object", "model").put("created", 0).put("owned_by", "nexuscore"));
        EmbeddingsUpstream target = new EmbeddingsUpstream(vertx, upstream, embeddings.maxConnections());
        started.add(target);
        return new ApiTargets(more, Optional.of(new ApiTargets.Embeddings(target, upstream.model(), listed, registry)));
    }
}
