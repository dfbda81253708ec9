package io.nexuscore.control;

import io.nexuscore.events.EventHub;
import io.nexuscore.http.Problem;
import io.nexuscore.http.Problems;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.classify.LiveThresholds;
import io.nexuscore.config.ControlConfig;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.StrictFramingDecoder;
import io.nexuscore.http.TlsOnPlainPort;
import io.nexuscore.tenants.limits.TenantLimitsRoutes;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.HttpException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The operator listener: thresholds, tiers, tenants, classifier reload, the SSE event stream,
 * Prometheus metrics and health, on its own HTTP server (default 127.0.0.1:8081). {@code openapi.yaml}
 * at the repository root is its contract.
 *
 * <p>Construct with {@code new ControlVerticle(config, ports, pools, events, registry)}:
 * <ul>
 *   <li>{@link ControlConfig} — listener, bearer token, state file;</li>
 *   <li>{@link ControlPorts} — one port per feature: thresholds, tenants, adaptive loop, programs;</li>
 *   <li>{@link TierStateView} — pool state per tier ({@link TierStateView#NONE} when there is none);</li>
 *   <li>{@link EventHub} — the shared event stream the data plane also publishes into;</li>
 *   <li>the shared {@link PrometheusMeterRegistry} that /metrics renders.</li>
 * </ul>
 * Deploy one instance. Start fails when the port cannot be bound or the state file is unreadable.
 * Every call into {@link ControlPorts} (syscalls) and the state file runs on a worker thread.
 *
 * <p>This class holds the listener's lifecycle and the route table (which route needs a body and
 * the token); the handlers live with their resource: {@link ThresholdRoutes} (thresholds, adaptive
 * loop), {@link TenantRoutes}, {@link DataPathRoutes} (tiers, reload, metrics, health),
 * {@link SseEndpoint}, {@link DashboardRoutes}; {@link ControlReplies} renders what they answer.
 */
public final class ControlVerticle extends VerticleBase {

    private static final System.Logger LOG = System.getLogger(ControlVerticle.class.getName());
    private static final long MAX_BODY_BYTES = 64 * 1024;

    /** How often the thresholds are re-read to catch changes made outside the API, and the SSE heartbeat. */
    public record Timings(Duration thresholdPoll, Duration sseHeartbeat) {
        public static final Timings DEFAULT = new Timings(LiveThresholds.CHANGE_POLL, Duration.ofSeconds(15));
    }

    private final ControlConfig config;
    private final ControlPorts ports;
    private final TierStateView pools;
    private final EventHub events;
    private final PrometheusMeterRegistry registry;
    private final Timings timings;
    private final ThresholdKeeper keeper;
    private ControlReplies replies;
    private ControlAuth auth;

    private ControlMetrics metrics;
    private Router router;
    private HttpServer server;
    private long pollTimer = -1;
    private boolean polling;

    public ControlVerticle(ControlConfig config, ControlPorts ports, TierStateView pools, EventHub events,
                           PrometheusMeterRegistry registry) {
        this(config, ports, pools, events, registry, Timings.DEFAULT);
    }

    public ControlVerticle(ControlConfig config, ControlPorts ports, TierStateView pools, EventHub events,
                           PrometheusMeterRegistry registry, Timings timings) {
        this.config = config;
        this.ports = ports;
        this.pools = pools;
        this.events = events;
        this.registry = registry;
        this.timings = timings;
        this.keeper = new ThresholdKeeper(ports.thresholds(), config.stateFile(), events);
    }

    @Override
    public Future<?> start() {
        replies = new ControlReplies(vertx, registry);
        return vertx.executeBlocking(() -> {
                    auth = ControlAuth.resolve(config, replies::sendProblem); // may create the token file
                    if (config.tls().isPresent()) {
                        ControlTls.checkKey(config.tls().get()); // root's own 0600 key, or no start
                    }
                    return keeper.start(ports.thresholdsFresh());
                })
                .compose(initial -> {
                    metrics = new ControlMetrics(registry, keeper::lastKnown);
                    router = routes();
                    // HTTP/1.1 only (h2c off), so that the connection handler runs at accept, before a
                    // byte is decoded: that is when the strict decoder can take the default's place.
                    HttpServerOptions options = new HttpServerOptions().setHost(config.host()).setPort(config.port())
                            .setHttp2ClearTextEnabled(false);
                    config.tls().ifPresent(tls -> ControlTls.apply(tls, options));
                    return vertx.createHttpServer(options)
                            .connectionHandler(connection -> {
                                StrictFramingDecoder.install(connection, options);
                                TlsOnPlainPort.install(connection, () -> replies.countError(TlsOnPlainPort.refusal()));
                            })
                            .invalidRequestHandler(this::invalid)
                            .requestHandler(router)
                            .listen();
                })
                .onSuccess(s -> {
                    server = s;
                    pollTimer = vertx.setPeriodic(timings.thresholdPoll().toMillis(), id -> pollThresholds());
                    LOG.log(Level.INFO, "control plane listening on " + (config.tls().isPresent() ? "https://" : "http://")
                            + config.host() + ":" + s.actualPort()
                            + " (mode " + ports.dataPath().mode() + ", auth " + auth.describe() + ")");
                })
                .onFailure(e -> {
                    if (metrics != null) {
                        metrics.close();
                    }
                });
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(pollTimer);
        if (metrics != null) {
            metrics.close();
        }
        return Future.succeededFuture();
    }

    /** The bound port (useful when configured as 0). */
    public int actualPort() {
        return server.actualPort();
    }

    /** The routes, for the test that keeps them equal to openapi.yaml. */
    Router router() {
        return router;
    }

    private Router routes() {
        ThresholdRoutes thresholds = new ThresholdRoutes(keeper, ports, replies);
        TenantRoutes tenants = new TenantRoutes(ports, replies);
        DataPathRoutes dataPath = new DataPathRoutes(keeper, ports, pools, metrics, registry, events, replies);
        Router r = Router.router(vertx);
        Handler<RoutingContext> token = auth::requireToken;
        Handler<RoutingContext> tokenOffLoopback = auth::requireTokenOffLoopback;
        Handler<RoutingContext> body = BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES);
        r.route().handler(auth::checkHostAndOrigin); // every request, /healthz and /metrics included
        r.route().handler(tokenOffLoopback); // off loopback: every route
        r.get("/thresholds").handler(thresholds::getThresholds);
        r.patch("/thresholds").handler(body).handler(token).handler(thresholds::patchThresholds);
        r.get("/adaptive").handler(thresholds::getAdaptive);
        r.patch("/adaptive").handler(body).handler(token).handler(thresholds::patchAdaptive);
        r.get("/tiers").handler(dataPath::getTiers);
        r.get("/tenants").handler(token).handler(tenants::list); // key prefixes and hashes
        r.put("/tenants/:id").handler(body).handler(token).handler(tenants::put);
        r.delete("/tenants/:id").handler(token).handler(tenants::delete);
        r.put("/tenants/:id/keys").handler(body).handler(token).handler(tenants::putKeys);
        TenantLimitsRoutes.mount(r, token, body, ports.limits(), ports.fleet()::changedHere);
        r.post("/classifier/reload").handler(body).handler(token).handler(dataPath::reload);
        // Tenant names, upstream URLs and error excerpts: the token, on loopback too.
        r.get("/events").handler(token).handler(new SseEndpoint(vertx, events, timings.sseHeartbeat(),
                config.maxSubscribersPerClient())::handle);
        r.get("/fleet").handler(token).handler(this::getFleet); // every member's cluster address
        r.get("/metrics").handler(dataPath::getMetrics);
        r.get("/healthz").handler(dataPath::getHealth);
        DashboardRoutes.mount(r, vertx);
        r.route().failureHandler(this::renderFailure);
        r.errorHandler(404, ctx -> replies.sendProblem(ctx, Problems.notFound(ctx.request().path())));
        r.errorHandler(405, ctx -> replies.sendProblem(ctx, Problems.methodNotAllowed(ctx.request().method().name(),
                ctx.request().path(), allowedMethods(r, ctx.request().path()))));
        return r;
    }

    /** The methods the router serves on a path, for the Allow header of a 405. */
    private static Set<String> allowedMethods(Router router, String path) {
        Set<String> allowed = new TreeSet<>();
        for (io.vertx.ext.web.Route route : router.getRoutes()) {
            String pattern = route.getPath();
            if (pattern != null && route.methods() != null
                    && path.matches(Pattern.quote(pattern).replaceAll(":[a-z]+", "\\\\E[^/]+\\\\Q"))) {
                route.methods().forEach(m -> allowed.add(m.name()));
            }
        }
        return allowed;
    }

    private void pollThresholds() {
        if (polling) {
            return; // a slow syscall must not pile up polls
        }
        polling = true;
        vertx.executeBlocking(keeper::refresh).onComplete(ar -> {
            polling = false;
            if (ar.failed()) {
                LOG.log(Level.WARNING, "reading the thresholds failed: " + ar.cause().getMessage());
            }
        });
    }

    /** A cached view: answers at once even while the fleet is unreachable (a partition). */
    private void getFleet(RoutingContext ctx) {
        ports.fleet().view().ifPresentOrElse(view -> ControlReplies.json(ctx, 200, view), () -> replies.sendProblem(ctx,
                ProblemType.NOT_IN_FLEET.problem("cluster.enabled is false: this router runs on its own")));
    }

    private void renderFailure(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        if (failure instanceof ProblemException p) {
            replies.sendProblem(ctx, p.problem());
        } else if (failure instanceof HttpException h && h.getStatusCode() == 413) {
            replies.sendProblem(ctx, ProblemType.BODY_TOO_LARGE.problem("bodies are limited to " + MAX_BODY_BYTES + " bytes"));
        } else if (failure == null && ctx.statusCode() == 413) {
            replies.sendProblem(ctx, ProblemType.BODY_TOO_LARGE.problem("bodies are limited to " + MAX_BODY_BYTES + " bytes"));
        } else {
            LOG.log(Level.ERROR, "control request " + ctx.request().method() + " " + ctx.request().path() + " failed",
                    failure);
            replies.sendProblem(ctx, ProblemType.INTERNAL.problem(failure == null ? "status " + ctx.statusCode()
                    : String.valueOf(failure.getMessage())));
        }
    }

    /** A request head the decoder refused: the same problem the data plane sends, counted, then closed. */
    private void invalid(HttpServerRequest request) {
        Problem problem = Problems.undecodable(request.decoderResult().cause());
        replies.countError(problem);
        HttpConnection connection = request.connection();
        problem.withHeader("Connection", "close").send(request.response(), null).onComplete(ar -> connection.close());
    }
}
