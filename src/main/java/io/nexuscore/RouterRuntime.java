package io.nexuscore;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.classify.LiveThresholds;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.EmbeddingsConfig;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.dataplane.ApiTargets;
import io.nexuscore.tiers.upstream.EmbeddingsUpstream;
import io.vertx.core.json.JsonObject;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.config.TierConfig;
import io.nexuscore.control.ControlVerticle;
import io.nexuscore.control.TierStateView;
import io.nexuscore.dataplane.AcceptorVerticle;
import io.nexuscore.dataplane.DataPlaneDependencies;
import io.nexuscore.dataplane.DataPlaneHandler;
import io.nexuscore.dataplane.DataPlaneMetrics;
import io.nexuscore.dataplane.TierResolver;
import io.nexuscore.events.EventHub;
import io.nexuscore.events.EventSink;
import io.nexuscore.fleet.DeferredFleetStatus;
import io.nexuscore.fleet.Fleet;
import io.nexuscore.fleet.FleetKeys;
import io.nexuscore.fleet.FleetService;
import io.nexuscore.fleet.RouterLocalPolicy;
import io.nexuscore.http.IoTransport;
import io.nexuscore.metrics.CoarseWallClock;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.telemetry.SpanExporters;
import io.nexuscore.tenants.limits.FleetShare;
import io.nexuscore.tenants.limits.LimitGate;
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
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One running router: Vert.x, the metrics registry, the data path (kernel or user space), the tier
 * backends, the data-plane acceptors and the control plane. {@link #close()} releases all of it.
 * What differs between kernel and user-space mode is decided once, in {@link ModeWiring#start}.
 */
public final class RouterRuntime implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RouterRuntime.class.getName());

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
            ModeWiring local = ModeWiring.start(config, sink, registry, vertx);
            started.add(local.resources());
            DeferredFleetStatus fleetView = new DeferredFleetStatus(config.cluster().node(), config.cluster().name());
            // Tenant limits (io.nexuscore.tenants.limits): in a fleet each router holds its share of them.
            LimitGate limits = LimitGate.start(config, registry,
                    config.cluster().enabled() ? FleetShare.ofView(fleetView::view) : FleetShare.ALONE,
                    local.control().keys()::has, local.tenantLimitMaps(), local.control().tenants());
            // Tenants by prefix, and in kernel mode the limits XDP counts, follow the limits, the
            // prefixes and the fleet's size within a second (map writes: a worker thread).
            long prefixSync = vertx.setPeriodic(1000, id -> vertx.executeBlocking(() -> {
                try {
                    limits.syncPrefixes();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "tenant limits: syncing tenants by prefix failed: {0}", e.getMessage());
                }
                return null;
            }, false));
            started.add(() -> vertx.cancelTimer(prefixSync));
            ModeWiring wiring = (config.cluster().enabled() ? local.withFleet(fleetView) : local).withLimits(limits);
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
            DataPlaneHandler handler = new DataPlaneHandler(DataPlaneDependencies.of(config.dataPlane(), resolver,
                            backends, models, metrics, sink, wiring.latency(), resolverPool)
                    .withFloors(wiring.floors())
                    .withFallbacks(fallbacks)
                    .withKeys(wiring.control().keys())
                    .withLimits(limits)
                    .withTracing(tracing)
                    .withTargets(apiTargets(config, vertx, registry, started)));

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
                                wiring.control().adaptive(), limits.store()),
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

    static void closeQuietly(AutoCloseable resource) {
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
