package io.nexuscore.control;

import io.micrometer.core.instrument.Counter;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.adapt.AdaptiveJson;
import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.ForbiddenObject;
import io.nexuscore.kernel.maps.NotInKernelMode;
import io.nexuscore.events.EventHub;
import io.nexuscore.http.Problem;
import io.nexuscore.http.Problems;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.TenantId;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.TenantPolicies;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.classify.LiveThresholds;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.MisrouteMeters;
import io.nexuscore.config.ControlConfig;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.StrictFramingDecoder;
import io.nexuscore.http.TlsOnPlainPort;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.HttpException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.Callable;
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
 */
public final class ControlVerticle extends VerticleBase {

    private static final System.Logger LOG = System.getLogger(ControlVerticle.class.getName());
    private static final Set<String> JSON_TYPES = Set.of("application/json");
    private static final Set<String> PATCH_TYPES = Set.of("application/merge-patch+json", "application/json");
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
        return vertx.executeBlocking(() -> {
                    auth = ControlAuth.resolve(config, this::sendProblem); // may create the token file
                    if (config.tls().isPresent()) {
                        ControlTls.checkKey(config.tls().get()); // root's own 0600 key, or no start
                    }
                    return keeper.start(ports.thresholdsFresh());
                })
                .compose(initial -> {
                    router = routes();
                    metrics = new ControlMetrics(registry, keeper::lastKnown);
                    // HTTP/1.1 only (h2c off), so that the connection handler runs at accept, before a
                    // byte is decoded: that is when the strict decoder can take the default's place.
                    HttpServerOptions options = new HttpServerOptions().setHost(config.host()).setPort(config.port())
                            .setHttp2ClearTextEnabled(false);
                    config.tls().ifPresent(tls -> ControlTls.apply(tls, options));
                    return vertx.createHttpServer(options)
                            .connectionHandler(connection -> {
                                StrictFramingDecoder.install(connection, options);
                                TlsOnPlainPort.install(connection, () -> countError(TlsOnPlainPort.refusal()));
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
        Router r = Router.router(vertx);
        Handler<RoutingContext> token = auth::requireToken;
        Handler<RoutingContext> tokenOffLoopback = auth::requireTokenOffLoopback;
        Handler<RoutingContext> body = BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES);
        r.route().handler(auth::checkHostAndOrigin); // every request, /healthz and /metrics included
        r.route().handler(tokenOffLoopback); // off loopback: every route
        r.get("/thresholds").handler(this::getThresholds);
        r.patch("/thresholds").handler(body).handler(token).handler(this::patchThresholds);
        r.get("/adaptive").handler(this::getAdaptive);
        r.patch("/adaptive").handler(body).handler(token).handler(this::patchAdaptive);
        r.get("/tiers").handler(this::getTiers);
        r.get("/tenants").handler(token).handler(this::getTenants); // key prefixes and hashes
        r.put("/tenants/:id").handler(body).handler(token).handler(this::putTenant);
        r.delete("/tenants/:id").handler(token).handler(this::deleteTenant);
        r.put("/tenants/:id/keys").handler(body).handler(token).handler(this::putTenantKeys);
        r.post("/classifier/reload").handler(body).handler(token).handler(this::reload);
        // Tenant names, upstream URLs and error excerpts: the token, on loopback too.
        r.get("/events").handler(token).handler(new SseEndpoint(vertx, events, timings.sseHeartbeat(),
                config.maxSubscribersPerClient())::handle);
        r.get("/fleet").handler(token).handler(this::getFleet); // every member's cluster address
        r.get("/metrics").handler(this::getMetrics);
        r.get("/healthz").handler(this::getHealth);
        DashboardRoutes.mount(r, vertx);
        r.route().failureHandler(this::renderFailure);
        r.errorHandler(404, ctx -> sendProblem(ctx, Problems.notFound(ctx.request().path())));
        r.errorHandler(405, ctx -> sendProblem(ctx, Problems.methodNotAllowed(ctx.request().method().name(),
                ctx.request().path(), allowedMethods(r, ctx.request().path()))));
        return r;
    }

    /** The methods the router serves on a path, for the Allow header of a 405. */
    private static Set<String> allowedMethods(Router router, String path) {
        Set<String> allowed = new java.util.TreeSet<>();
        for (io.vertx.ext.web.Route route : router.getRoutes()) {
            String pattern = route.getPath();
            if (pattern != null && route.methods() != null
                    && path.matches(Pattern.quote(pattern).replaceAll(":[a-z]+", "\\\\E[^/]+\\\\Q"))) {
                route.methods().forEach(m -> allowed.add(m.name()));
            }
        }
        return allowed;
    }

    // --- thresholds -------------------------------------------------------------------------------

    private void getThresholds(RoutingContext ctx) {
        blocking(ctx, keeper::refresh).onSuccess(t -> json(ctx, 200, ThresholdKeeper.toJson(t)));
    }

    private void patchThresholds(RoutingContext ctx) {
        JsonObject patch = JsonBodies.object(ctx, false, PATCH_TYPES).orElseThrow();
        JsonBodies.allowOnly(patch, Set.of("nano_max", "small_max"));
        ThresholdKeeper.Patch p = new ThresholdKeeper.Patch(
                JsonBodies.score(patch, "nano_max"), JsonBodies.score(patch, "small_max"));
        blocking(ctx, () -> {
            try {
                ThresholdState written = keeper.apply(p);
                if (p.nanoMax().isPresent()) {
                    raiseBackCeilingFollows(p.nanoMax().getAsInt());
                }
                return written;
            } catch (ThresholdKeeper.OrderViolation e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, e.getMessage(), e.field);
            }
        }).onSuccess(t -> {
            ports.fleet().changedHere();
            json(ctx, 200, ThresholdKeeper.toJson(t));
        });
    }

    /**
     * The adaptive loop raises nano_max back up to its ceiling, the operator's value: after a PATCH of
     * nano_max that is the new value (a loop configured to only lower, ceiling 0, stays so).
     */
    private void raiseBackCeilingFollows(int nanoMax) {
        try {
            AdaptiveSettings settings = ports.adaptive().status().settings();
            if (settings.ceiling() != 0 && settings.ceiling() != nanoMax) {
                ports.adaptive().configure(settings.withCeiling(nanoMax));
            }
        } catch (NotInKernelMode e) {
            // user space: no loop, no ceiling
        }
    }

    // --- adaptive loop ----------------------------------------------------------------------------

    private void getAdaptive(RoutingContext ctx) {
        blocking(ctx, () -> inKernelMode(ports.adaptive()::status)).onSuccess(s -> json(ctx, 200, AdaptiveJson.toJson(s)));
    }

    private void patchAdaptive(RoutingContext ctx) {
        JsonObject patch = JsonBodies.object(ctx, false, PATCH_TYPES).orElseThrow();
        AdaptiveJson.Patch p = AdaptiveJson.parse(patch);
        blocking(ctx, () -> inKernelMode(() -> {
            ports.adaptive().configure(p.mergeInto(ports.adaptive().status().settings()));
            return ports.adaptive().status();
        })).onSuccess(s -> {
            ports.fleet().changedHere();
            json(ctx, 200, AdaptiveJson.toJson(s));
        });
    }

    private static <T> T inKernelMode(Callable<T> work) throws Exception {
        try {
            return work.call();
        } catch (NotInKernelMode e) {
            throw new ProblemException(ProblemType.NOT_IN_KERNEL_MODE, e.getMessage());
        }
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

    // --- tiers ------------------------------------------------------------------------------------

    private void getTiers(RoutingContext ctx) {
        blocking(ctx, () -> {
            ThresholdState thresholds = keeper.refresh();
            Map<Tier, Long> counters = ports.dataPath().tierCounters();
            Map<Tier, Map<String, Object>> poolState = pools.snapshot();
            JsonArray tiers = new JsonArray();
            for (Tier tier : Tier.values()) {
                Map<String, Object> pool = poolState.get(tier);
                tiers.add(new JsonObject()
                        .put("tier", tier.label())
                        .put("kernel_classified", counters.get(tier))
                        .put("pool", pool == null ? null : new JsonObject(new LinkedHashMap<>(pool)))
                        .put("latency", metrics.latency(tier))
                        .put("misroutes", MisrouteMeters.summary(registry, tier)));
            }
            return new JsonObject().put("mode", ports.dataPath().mode())
                    .put("thresholds", ThresholdKeeper.toJson(thresholds)).put("tiers", tiers);
        }).onSuccess(body -> json(ctx, 200, body));
    }

    // --- tenants ----------------------------------------------------------------------------------

    /** Tenants with a prefix policy, API keys or both; keys only as their hashes. */
    private void getTenants(RoutingContext ctx) {
        blocking(ctx, () -> {
            Map<String, TenantPolicy> policies = ports.tenants().list();
            Map<String, List<String>> keys = ports.keys().list();
            SortedSet<String> ids = new TreeSet<>(policies.keySet());
            ids.addAll(keys.keySet());
            JsonArray list = new JsonArray();
            ids.forEach(id -> list.add(tenantJson(id, policies.get(id), keys.getOrDefault(id, List.of()))));
            return new JsonObject().put("tenants", list);
        }).onSuccess(body -> json(ctx, 200, body));
    }

    /** Replaces the tenant's API key hashes ({@code sha256:<hex>} each; an empty list removes them). */
    private void putTenantKeys(RoutingContext ctx) {
        String id = tenantId(ctx);
        JsonObject body = JsonBodies.object(ctx, false, JSON_TYPES).orElseThrow();
        JsonBodies.allowOnly(body, Set.of("keys"));
        if (!(body.getValue("keys") instanceof JsonArray array)) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "keys must be an array of strings", "keys");
        }
        List<String> hashes = new ArrayList<>();
        for (Object o : array) {
            if (!(o instanceof String hash)) {
                throw new ProblemException(ProblemType.INVALID_REQUEST, "keys must be an array of strings", "keys");
            }
            hashes.add(hash);
        }
        blocking(ctx, () -> {
            try {
                return ports.keys().put(id, hashes);
            } catch (TenantKeys.KeyInUse e) {
                throw new ProblemException(ProblemType.CONFLICT, e.getMessage(), "keys");
            } catch (IllegalArgumentException e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, "keys: " + e.getMessage(), "keys");
            }
        }).onSuccess(stored -> {
            ports.fleet().changedHere();
            json(ctx, 200, new JsonObject().put("id", id).put("keys", new JsonArray(stored)));
        });
    }

    private void putTenant(RoutingContext ctx) {
        String id = tenantId(ctx);
        JsonObject body = JsonBodies.object(ctx, false, JSON_TYPES).orElseThrow();
        JsonBodies.allowOnly(body, Set.of("prefix", "floor"));
        String prefixText = JsonBodies.string(body, "prefix", true).orElseThrow();
        String floorText = JsonBodies.string(body, "floor", true).orElseThrow();
        TenantPolicy policy;
        try {
            policy = new TenantPolicy(Ipv4Prefix.parse(prefixText), Tier.fromLabel(floorText));
        } catch (IllegalArgumentException e) {
            String field = e.getMessage().startsWith("unknown tier") ? "floor" : "prefix";
            throw new ProblemException(ProblemType.INVALID_VALUE, field + ": " + e.getMessage(), field);
        }
        blocking(ctx, () -> {
            try {
                return ports.tenants().put(id, policy);
            } catch (TenantPolicies.PrefixInUse | TenantPolicies.Full e) {
                throw new ProblemException(ProblemType.CONFLICT, e.getMessage(), "prefix");
            }
        }).onSuccess(created -> {
            ports.fleet().changedHere();
            if (created) {
                ctx.response().putHeader(HttpHeaders.LOCATION, "/tenants/" + id);
            }
            json(ctx, created ? 201 : 200, tenantJson(id, policy, ports.keys().get(id)));
        });
    }

    private void deleteTenant(RoutingContext ctx) {
        String id = tenantId(ctx);
        // Its keys go with it: a key must not name a tenant that no longer exists.
        blocking(ctx, () -> ports.tenants().delete(id) | ports.keys().delete(id)).onSuccess(existed -> {
            if (existed) {
                ports.fleet().changedHere();
                ctx.response().setStatusCode(204).end();
            } else {
                sendProblem(ctx, ProblemType.NOT_FOUND.problem("no tenant '" + id + "'"));
            }
        });
    }

    private static String tenantId(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        if (!TenantId.valid(id)) {
            throw new ProblemException(ProblemType.INVALID_VALUE, "tenant id must be " + TenantId.RULE, "id");
        }
        return id;
    }

    /** @param policy null for a tenant known by its API keys only */
    private static JsonObject tenantJson(String id, TenantPolicy policy, List<String> keys) {
        JsonObject json = new JsonObject().put("id", id);
        if (policy != null) {
            json.put("prefix", policy.prefix().toString()).put("floor", policy.floor().label());
        }
        return json.put("keys", new JsonArray(keys));
    }

    // --- reload -----------------------------------------------------------------------------------

    private void reload(RoutingContext ctx) {
        Optional<JsonObject> body = JsonBodies.object(ctx, true, JSON_TYPES);
        Optional<Path> object = Optional.empty();
        if (body.isPresent()) {
            JsonBodies.allowOnly(body.get(), Set.of("object"));
            Optional<String> path = JsonBodies.string(body.get(), "object", false);
            if (path.isPresent()) {
                Path p = Path.of(path.get());
                if (!p.isAbsolute()) {
                    throw new ProblemException(ProblemType.INVALID_VALUE, "object must be an absolute path on the router's host", "object");
                }
                object = Optional.of(p);
            }
        }
        Optional<Path> requested = object;
        blocking(ctx, () -> {
            try {
                return ports.dataPath().reload(requested);
            } catch (NotInKernelMode e) {
                throw new ProblemException(ProblemType.NOT_IN_KERNEL_MODE, e.getMessage());
            } catch (ForbiddenObject e) {
                throw new ProblemException(ProblemType.FORBIDDEN_OBJECT, "rule " + e.getMessage(), "object");
            } catch (IllegalArgumentException e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, e.getMessage(), "object");
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "classifier reload failed", e);
                throw new ProblemException(ProblemType.RELOAD_FAILED, String.valueOf(e.getMessage()));
            }
        }).onSuccess(result -> {
            JsonObject json = new JsonObject()
                    .put("object", requested.map(Path::toString).orElse(null))
                    .put("old_program_ids", new JsonObject(new LinkedHashMap<>(result.oldProgramIds())))
                    .put("new_program_ids", new JsonObject(new LinkedHashMap<>(result.newProgramIds())));
            events.publish("reload", json);
            json(ctx, 200, json);
        });
    }

    // --- fleet --------------------------------------------------------------------------------------

    /** A cached view: answers at once even while the fleet is unreachable (a partition). */
    private void getFleet(RoutingContext ctx) {
        ports.fleet().view().ifPresentOrElse(view -> json(ctx, 200, view), () -> sendProblem(ctx,
                ProblemType.NOT_IN_FLEET.problem("cluster.enabled is false: this router runs on its own")));
    }

    // --- metrics and health -----------------------------------------------------------------------

    private void getMetrics(RoutingContext ctx) {
        blocking(ctx, () -> {
            keeper.refresh();
            metrics.refresh(ports.dataPath());
            metrics.refreshAdaptive(ports.adaptive());
            return registry.scrape();
        }).onSuccess(text -> ctx.response()
                .putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .end(text));
    }

    private void getHealth(RoutingContext ctx) {
        blocking(ctx, ports.dataPath()::attachment).onSuccess(attachment -> json(ctx, 200, new JsonObject()
                .put("status", "ok")
                .put("mode", ports.dataPath().mode())
                .put("attachment", new JsonObject(new LinkedHashMap<>(attachment)))));
    }

    // --- plumbing ---------------------------------------------------------------------------------

    /**
     * Runs blocking work on a worker; a failure goes to the failure handler. Unordered: a slow reload
     * must not hold up GET /thresholds or a scrape (the keeper and the ports synchronize).
     */
    private <T> Future<T> blocking(RoutingContext ctx, Callable<T> work) {
        return vertx.executeBlocking(work, false).onFailure(ctx::fail);
    }

    private static void json(RoutingContext ctx, int status, JsonObject body) {
        ctx.response().setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(body.encode());
    }

    private void renderFailure(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        if (failure instanceof ProblemException p) {
            sendProblem(ctx, p.problem());
        } else if (failure instanceof HttpException h && h.getStatusCode() == 413) {
            sendProblem(ctx, ProblemType.BODY_TOO_LARGE.problem("bodies are limited to " + MAX_BODY_BYTES + " bytes"));
        } else if (failure == null && ctx.statusCode() == 413) {
            sendProblem(ctx, ProblemType.BODY_TOO_LARGE.problem("bodies are limited to " + MAX_BODY_BYTES + " bytes"));
        } else {
            LOG.log(Level.ERROR, "control request " + ctx.request().method() + " " + ctx.request().path() + " failed",
                    failure);
            sendProblem(ctx, ProblemType.INTERNAL.problem(failure == null ? "status " + ctx.statusCode()
                    : String.valueOf(failure.getMessage())));
        }
    }

    /**
     * One renderer for every control-plane error, each counted in {@code nexus_control_errors_total{type}};
     * a response already under way can only be reset.
     */
    private void sendProblem(RoutingContext ctx, Problem problem) {
        countError(problem);
        if (ctx.response().headWritten()) {
            ctx.response().reset();
            return;
        }
        problem.send(ctx.response(), ctx.request().path());
    }

    /** A request head the decoder refused: the same problem the data plane sends, counted, then closed. */
    private void invalid(HttpServerRequest request) {
        Problem problem = Problems.undecodable(request.decoderResult().cause());
        countError(problem);
        HttpConnection connection = request.connection();
        problem.withHeader("Connection", "close").send(request.response(), null).onComplete(ar -> connection.close());
    }

    private void countError(Problem problem) {
        Counter.builder("nexus.control.errors").tag("type", problem.slug())
                .description("Control-plane requests answered with a problem, by problem type")
                .register(registry).increment();
    }
}
