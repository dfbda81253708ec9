package io.nexuscore.dataplane;

import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.dataplane.apis.StreamTranslator;
import io.nexuscore.dataplane.apis.TranslatedRequest;
import io.nexuscore.tenants.TenantFloors;
import io.nexuscore.tenants.TenantKeys;

import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.http.ByteBudget;
import io.nexuscore.http.Problem;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemType;
import io.nexuscore.tenants.TenantId;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.Problems;
import io.nexuscore.http.TlsOnPlainPort;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.tiers.StreamingBackend;
import io.nexuscore.tiers.UpstreamStream;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.JsonObject;
import io.vertx.core.streams.ReadStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * The per-request pipeline, shared by every acceptor instance (it holds no per-connection state):
 * route, bound and read the body, parse, resolve the tier, dispatch, answer, account.
 *
 * Threading: everything runs on the request's event loop, tier resolution included when the kernel's
 * verdict is in its mmap'ed slot; only a resolution that needs a syscall (slot miss in kernel mode)
 * hops to a worker pool and comes back. Tier backends never block.
 */
public final class DataPlaneHandler {

    public static final String HEADER_TIER = "X-NX-Tier";
    public static final String HEADER_ASSIGNED_TIER = "X-NX-Assigned-Tier";
    public static final String HEADER_SCORE = "X-NX-Score";
    public static final String HEADER_ROUTE_SOURCE = "X-NX-Route-Source";
    /** Set when the assigned tier could not take the request and its fallback tier served it: the assigned tier. */
    public static final String HEADER_FALLBACK_FROM = "X-NX-Fallback-From";
    /** The tier's own count of the prompt's tokens (cl100k_base in the Wasm guests). */
    public static final String HEADER_TOKENS = "X-NX-Tokens";
    /** How wrong the assignment was: "none", or the kinds that apply, e.g. "strict,banded". */
    public static final String HEADER_MISROUTE = "X-NX-Misroute";
    static final String ANONYMOUS_TENANT = "anonymous";
    /*
     * The names as the response puts them: AsciiStrings keep their (case-insensitive) hash, which
     * the header map otherwise computes anew from a String for every header of every answer.
     */
    private static final CharSequence TIER_NAME = HttpHeaders.createOptimized(HEADER_TIER);
    private static final CharSequence ASSIGNED_TIER_NAME = HttpHeaders.createOptimized(HEADER_ASSIGNED_TIER);
    private static final CharSequence SCORE_NAME = HttpHeaders.createOptimized(HEADER_SCORE);
    private static final CharSequence ROUTE_SOURCE_NAME = HttpHeaders.createOptimized(HEADER_ROUTE_SOURCE);
    private static final CharSequence TOKENS_NAME = HttpHeaders.createOptimized(HEADER_TOKENS);
    private static final CharSequence MISROUTE_NAME = HttpHeaders.createOptimized(HEADER_MISROUTE);
    private static final CharSequence APPLICATION_JSON = HttpHeaders.createOptimized("application/json");
    private static final String BEARER = "Bearer ";
    /** Anthropic's API key header, taken as a tenant key like {@code Authorization: Bearer}. */
    static final String API_KEY_HEADER = "x-api-key";
    /** Status recorded (never sent) when the client left before its answer was ready, as nginx logs it. */
    static final int CLIENT_CLOSED = 499;

    private static final System.Logger LOG = System.getLogger(DataPlaneHandler.class.getName());

    private final long maxBodyBytes;
    /** Body bytes held while bodies arrive, over every connection of every acceptor (one handler serves them all). */
    private final ByteBudget heldBodies;
    private final DataPlaneConfig config;
    private final String tenantHeader;
    private final RequestGuard guard;
    private final TenantKeys keys;
    private final boolean keysRequired;
    private final boolean testHooks;
    private final long bodyTimeoutMs;
    private final Map<Tier, Tier> fallbacks;
    private final HeadTimeouts headTimeouts;
    private final TierResolver resolver;
    private final Map<Tier, TierBackend> backends;
    /** Tiers a Wasm guest answers: only their prompt-token count is cl100k, a calibration sample. */
    private final Set<Tier> guestTiers = EnumSet.noneOf(Tier.class);
    private final Buffer models;
    private final DataPlaneMetrics metrics;
    private final EventSink events;
    private final LatencyRecorder latencyRecorder;
    private final WorkerExecutor resolverPool;
    private final ConnectionInspector connections;
    private final double misrouteBand;
    private final InferenceSpans spans;
    private final Optional<EmbeddingsRoute> embeddings;
    /** Each tier's model, as answers name it. */
    private final Map<Tier, String> tierModels;

    /**
     * @param resolverPool where kernel-mode resolution runs; required when {@code resolver.blocking()}
     */
    public DataPlaneHandler(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                            Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                            LatencyRecorder latencyRecorder, WorkerExecutor resolverPool) {
        this(config, resolver, backends, models, metrics, events, latencyRecorder, resolverPool, TenantFloors.NONE);
    }

    /**
     * @param resolverPool   where kernel-mode resolution runs; required when {@code resolver.blocking()}
     * @param unmarkedFloors tenant floors for connections whose socket carries no kernel mark
     */
    public DataPlaneHandler(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                            Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                            LatencyRecorder latencyRecorder, WorkerExecutor resolverPool, TenantFloors unmarkedFloors) {
        this(config, resolver, backends, models, metrics, events, latencyRecorder, resolverPool, unmarkedFloors, Map.of());
    }

    /**
     * @param resolverPool   where kernel-mode resolution runs; required when {@code resolver.blocking()}
     * @param floors         tenant floors by client address (see {@link TenantFloors#authoritative()})
     * @param fallbacks      per tier, the tier that serves its requests when it is full or has no
     *                       admitted upstream endpoint
     */
    public DataPlaneHandler(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                            Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                            LatencyRecorder latencyRecorder, WorkerExecutor resolverPool, TenantFloors floors,
                            Map<Tier, Tier> fallbacks) {
        this(config, resolver, backends, models, metrics, events, latencyRecorder, resolverPool, floors, fallbacks,
                TenantKeys.inMemory());
    }

    /**
     * @param resolverPool   where kernel-mode resolution runs; required when {@code resolver.blocking()}
     * @param floors         tenant floors by client address (see {@link TenantFloors#authoritative()})
     * @param fallbacks      per tier, the tier that serves its requests when it is full or has no
     *                       admitted upstream endpoint
     * @param keys           API keys naming tenants ({@code Authorization: Bearer}), managed by the control plane
     */
    public DataPlaneHandler(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                            Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                            LatencyRecorder latencyRecorder, WorkerExecutor resolverPool, TenantFloors floors,
                            Map<Tier, Tier> fallbacks, TenantKeys keys) {
        this(config, resolver, backends, models, metrics, events, latencyRecorder, resolverPool, floors, fallbacks,
                keys, RequestTracing.OFF);
    }

    /** As above, with one span per inference request recorded by {@code tracing}. */
    public DataPlaneHandler(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                            Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                            LatencyRecorder latencyRecorder, WorkerExecutor resolverPool, TenantFloors floors,
                            Map<Tier, Tier> fallbacks, TenantKeys keys, RequestTracing tracing) {
        this(config, resolver, backends, models, metrics, events, latencyRecorder, resolverPool, floors, fallbacks, keys,
                tracing, ApiTargets.NONE);
    }

    /** As above, with the models and the embeddings target beyond the tiers ({@code targets}). */
    public DataPlaneHandler(DataPlaneConfig config, TierResolver resolver, Map<Tier, TierBackend> backends,
                            Map<Tier, String> models, DataPlaneMetrics metrics, EventSink events,
                            LatencyRecorder latencyRecorder, WorkerExecutor resolverPool, TenantFloors floors,
                            Map<Tier, Tier> fallbacks, TenantKeys keys, RequestTracing tracing, ApiTargets targets) {
        this.spans = new InferenceSpans(tracing);
        this.embeddings = targets.embeddings().map(e -> new EmbeddingsRoute(e.upstream(), e.upstreamModel(),
                e.listedModel(), e.registry(), events, metrics, spans));
        this.keys = keys;
        this.keysRequired = config.tenantKeys() == DataPlaneConfig.TenantKeys.REQUIRED;
        this.connections = new ConnectionInspector(floors);
        this.maxBodyBytes = config.maxBodyBytes();
        this.heldBodies = new ByteBudget(config.maxHeldBodyBytes());
        metrics.heldBodyBytes(heldBodies);
        this.config = config;
        this.tenantHeader = config.tenantHeader();
        this.guard = new RequestGuard(config.requestLimits());
        this.testHooks = config.testHooks();
        this.bodyTimeoutMs = config.bodyTimeoutMs();
        this.headTimeouts = new HeadTimeouts(config.headerTimeoutMs());
        this.fallbacks = fallbacks.isEmpty() ? Map.of() : new EnumMap<>(fallbacks);
        this.misrouteBand = config.misrouteBand();
        this.resolver = resolver;
        this.backends = new EnumMap<>(backends);
        for (Tier tier : Tier.values()) {
            Objects.requireNonNull(this.backends.get(tier), () -> "no backend for tier " + tier.label());
            if (this.backends.get(tier).poolState().isPresent()) {
                guestTiers.add(tier);
            }
        }
        this.tierModels = models.isEmpty() ? new EnumMap<>(Tier.class) : new EnumMap<>(models);
        LinkedHashMap<String, JsonObject> listed = new LinkedHashMap<>();
        models.forEach((tier, model) -> listed.putIfAbsent(model, new JsonObject().put("id", model).put("object", "model")
                .put("created", 0).put("owned_by", "nexuscore").put("tier", tier.label())));
        // Names that several tiers (or a tier and its upstream) share are listed once.
        targets.moreModels().forEach(m -> listed.putIfAbsent(m.getString("id"), m));
        this.models = OpenAiResponses.models(listed.values()).toBuffer();
        this.metrics = metrics;
        this.events = events;
        this.latencyRecorder = latencyRecorder;
        if (resolver.blocking() && resolverPool == null) {
            throw new IllegalArgumentException("a blocking tier resolver needs a worker pool");
        }
        this.resolverPool = resolverPool;
    }

    /** Connection accepted: read its connection-level facts (SO_MARK) once; start the head timeout. */
    public void accepted(HttpConnection connection) {
        connections.accepted(connection);
        headTimeouts.accepted(connection);
        MalformedBodyGuard.install(ConnectionInspector.channelOf(connection));
        TlsOnPlainPort.install(connection, () -> metrics.httpError(TlsOnPlainPort.refusal().slug()));
    }

    /** A request Netty could not decode: answer in problem+json, count it, close the connection. */
    public void invalid(HttpServerRequest request) {
        rejectAndClose(request, Problems.undecodable(request.decoderResult().cause()));
    }

    public void handle(HttpServerRequest request) {
        long start = System.nanoTime();
        headTimeouts.headReceived(request);
        if (request.version() == HttpVersion.HTTP_1_1 && request.authority() == null) {
            rejectAndClose(request, Problems.malformedHttp(400, "an HTTP/1.1 request needs a Host header (RFC 9112 §3.2)"));
            return;
        }
        String origin = request.getHeader("Origin");
        if (origin != null && !config.originAllowed(origin)) {
            // A page in a browser on this machine (or a DNS-rebound one) posting to the router:
            // refused before the body is read, so no model runs on its behalf.
            rejectAndClose(request, ProblemType.FORBIDDEN_ORIGIN.problem("Origin '" + Problems.clientToken(origin, 100)
                    + "' may not use this data plane (dataPlane.allowedOrigins); API clients send no Origin"));
            return;
        }
        String tenant = tenant(request);
        if (tenant == null) {
            return;
        }
        Endpoint endpoint;
        try {
            endpoint = Endpoint.match(request.method(), request.path());
        } catch (ProblemException e) {
            reject(request, e.problem());
            return;
        }
        if (endpoint.kind() == Endpoint.Kind.MODELS) {
            request.response().putHeader("Content-Type", "application/json").end(models.copy());
            return;
        }
        if (endpoint.kind() == Endpoint.Kind.EMBEDDINGS && embeddings.isEmpty()) {
            reject(request, ProblemType.NOT_FOUND.problem("no embeddings target is configured on this router "
                    + "(embeddings.upstream)"));
            return;
        }
        long declared = declaredLength(request);
        if (declared > maxBodyBytes) {
            // Refuse before reading a byte of it; closing is the only way not to read the rest.
            refuse(request, endpoint, start, Problems.bodyTooLarge(maxBodyBytes), true);
            return;
        }
        if (request.headers().contains("Expect", "100-continue", true)) {
            // Only now that the declared size is acceptable: a client told 413 never sends the body.
            request.response().writeContinue();
        }
        new BodyReader(request, endpoint, tenant, start, declared).start();
    }

    /**
     * The request's tenant: the owner of its API key ({@code Authorization: Bearer <key>}) when the
     * key is known; otherwise, with keys optional, the tenant header (or anonymous). With keys
     * required, a missing or unknown key is answered 401 here, before the body is read, and null
     * returned. The key itself is never logged, echoed or kept.
     */
    private String tenant(HttpServerRequest request) {
        String authorization = request.getHeader("Authorization");
        if (authorization != null && authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            Optional<String> owner = keys.tenantOf(authorization.substring(BEARER.length()).trim());
            if (owner.isPresent()) {
                return owner.get();
            }
        }
        // Anthropic's SDKs send the key as x-api-key: the same tenant keys, on every endpoint.
        String apiKey = request.getHeader(API_KEY_HEADER);
        if (apiKey != null) {
            Optional<String> owner = keys.tenantOf(apiKey.trim());
            if (owner.isPresent()) {
                return owner.get();
            }
            if (authorization == null) {
                authorization = apiKey; // present, not a tenant's: "invalid", not "missing", below
            }
        }
        if (keysRequired) {
            boolean missing = authorization == null;
            rejectAndClose(request, ProblemType.UNAUTHORIZED.problem(missing
                            ? "this data plane requires a tenant's API key ('Authorization: Bearer <key>' or 'x-api-key: <key>')"
                            : "the API key is not one of a tenant's")
                    .withHeader("WWW-Authenticate", missing ? "Bearer realm=\"nexuscore\""
                            : "Bearer realm=\"nexuscore\", error=\"invalid_token\""));
            return null;
        }
        String named = request.getHeader(tenantHeader);
        if (named == null) {
            return ANONYMOUS_TENANT;
        }
        // The header is a claim, not a credential: it is an id like any other, and it cannot name a
        // tenant that has keys (whose requests, counts and floors would then be anyone's to spend).
        if (!TenantId.valid(named)) {
            rejectAndClose(request, ProblemType.INVALID_TENANT.problem(tenantHeader + " must be a tenant id ("
                    + TenantId.RULE + "), got " + JsonBodies.echoed(named)));
            return null;
        }
        if (keys.has(named)) {
            rejectAndClose(request, ProblemType.TENANT_KEY_REQUIRED.problem("tenant " + named + " has API keys: send "
                    + "one as 'Authorization: Bearer <key>' instead of naming it in " + tenantHeader)
                    .withHeader("WWW-Authenticate", "Bearer realm=\"nexuscore\""));
            return null;
        }
        return named;
    }

    /** Content-Length, or -1 when absent (chunked). Netty already refused a garbled one (400). */
    private static long declaredLength(HttpServerRequest request) {
        String header = request.getHeader("Content-Length");
        if (header == null) {
            return -1;
        }
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Collects a body up to the limit; past it, answers 413 and stops reading. The buffer grows with
     * the bytes that actually arrived, never with what Content-Length announced (a client announcing
     * 1 MB and sending nothing holds a few bytes, not a megabyte). A body not complete within
     * {@code bodyTimeoutMs} gets 408 and the connection is closed.
     */
    private final class BodyReader implements Handler<Buffer> {
        private static final int INITIAL_CAPACITY = 256;
        private final HttpServerRequest request;
        private final Endpoint endpoint;
        private final String tenant;
        private final long start;
        private final Buffer body;
        private final Vertx vertx;
        private long timer = -1;
        private boolean stopped;
        private boolean ended; // the body ended or broke off: no timer to arm
        /** Bytes of this body counted in {@link #heldBodies}; given back once, when the body ends or stops. */
        private long reserved;

        BodyReader(HttpServerRequest request, Endpoint endpoint, String tenant, long start, long declared) {
            this.request = request;
            this.endpoint = endpoint;
            this.tenant = tenant;
            this.start = start;
            this.body = Buffer.buffer((int) Math.max(0, Math.min(declared, INITIAL_CAPACITY)));
            this.vertx = Vertx.currentContext().owner();
        }

        void start() {
            MalformedBodyGuard guard = MalformedBodyGuard.of(ConnectionInspector.channelOf(request.connection()));
            if (guard != null) {
                guard.watch(this::undecodable);
            }
            request.handler(this);
            request.endHandler(v -> {
                ended = true;
                releaseHeld(); // past arrival: the body is the request's now, bounded by the tiers' queues
                if (guard != null) {
                    guard.unwatch();
                }
                vertx.cancelTimer(timer);
                if (!stopped) {
                    stopped = true;
                    onBody(request, endpoint, tenant, body, start);
                }
            });
            request.exceptionHandler(e -> {
                ended = true;
                releaseHeld(); // broken off (the connection closed): nothing more arrives
                if (guard != null) {
                    guard.unwatch();
                }
                vertx.cancelTimer(timer);
            });
            // A body that came in the head's read ends within this turn of the event loop; the timer
            // is armed after it, only for a body still on its way. Most requests so schedule and
            // cancel no timer (two priority-queue and map operations each, ~3 % of the loop's time).
            Vertx.currentContext().runOnContext(v -> {
                if (!ended && !stopped) {
                    timer = vertx.setTimer(bodyTimeoutMs, id -> timedOut());
                }
            });
        }

        /** The chunked body could not be decoded: 400, and the connection closed (its framing is lost). */
        private void undecodable(Throwable cause) {
            ended = true;
            releaseHeld();
            vertx.cancelTimer(timer);
            if (stopped) {
                return;
            }
            stopped = true;
            refuse(request, endpoint, start, Problems.malformedHttp(400, "the request body could not be decoded: "
                    + (cause == null || cause.getMessage() == null ? "bad chunked framing" : cause.getMessage())), true);
        }

        private void timedOut() {
            releaseHeld();
            if (stopped) {
                return;
            }
            stopped = true;
            refuse(request, endpoint, start, ProblemType.REQUEST_TIMEOUT.problem("the request body did not arrive "
                    + "within " + bodyTimeoutMs + " ms (" + body.length() + " bytes received)"), true);
        }

        @Override
        public void handle(Buffer chunk) {
            if (stopped) {
                return;
            }
            if ((long) body.length() + chunk.length() > maxBodyBytes) {
                stopped = true;
                vertx.cancelTimer(timer);
                releaseHeld();
                refuse(request, endpoint, start, Problems.bodyTooLarge(maxBodyBytes), true);
                return;
            }
            if (!heldBodies.tryReserve(chunk.length())) {
                stopped = true;
                vertx.cancelTimer(timer);
                long had = reserved;
                releaseHeld();
                refuse(request, endpoint, start, ProblemType.BODY_BUDGET.problem("request bodies arriving on all "
                        + "connections hold " + heldBodies.limit() + " bytes (dataPlane.maxHeldBodyBytes); this one had "
                        + had + " of them: retry shortly").withHeader("Retry-After", "1"), true);
                return;
            }
            reserved += chunk.length();
            body.appendBuffer(chunk);
        }

        private void releaseHeld() {
            heldBodies.release(reserved);
            reserved = 0;
        }
    }

    private void onBody(HttpServerRequest request, Endpoint endpoint, String tenant, Buffer body, long start) {
        if (endpoint.kind() == Endpoint.Kind.EMBEDDINGS) {
            embeddings.orElseThrow().serve(request, endpoint, tenant, body, start);
            return;
        }
        InferenceRequest parsed;
        RequestGuard.Demand demand;
        try {
            parsed = InferenceRequest.parse(endpoint, body, testHooks);
            demand = guard.inspect(endpoint, body);
        } catch (ProblemException e) {
            refuse(request, endpoint, start, e.problem(), false);
            return;
        }
        byte[] requestLine = requestLine(request);
        long bodyLength = body.length();
        PromptEstimate estimate = promptEstimate(body);
        // Floors are looked up per request, so a tenant change reaches connections already open.
        ConnectionInfo connection = connections.current(request.connection());
        Served served = new Served(request, endpoint, parsed, tenant, start, demand);
        String prompt = parsed.work().prompt();
        Optional<Resolution> now = resolver.resolveWithoutSyscall(requestLine, bodyLength, estimate, connection);
        if (now.isPresent()) {
            dispatch(served, resolver.withParsedPrompt(now.get(), requestLine, prompt, estimate, bodyLength, connection));
            return;
        }
        resolverPool.executeBlocking(() -> resolver.resolve(requestLine, bodyLength, estimate, connection), false)
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        dispatch(served, resolver.withParsedPrompt(ar.result(), requestLine, prompt, estimate,
                                bodyLength, connection));
                    } else {
                        LOG.log(Level.ERROR, "tier resolution failed", ar.cause());
                        reject(request, Problems.internal("tier resolution failed: " + ar.cause().getMessage()));
                    }
                });
    }

    /**
     * The prompt estimate over the body's first BODY_WINDOW bytes, the rest extrapolated: what the
     * kernel scores whether the client wrote the body with its head or after it, in one segment or
     * several (ParityTest), so a blind request gets the decision a verdict would have carried.
     */
    static PromptEstimate promptEstimate(Buffer body) {
        return PromptEstimate.ofBody(body.getBytes(0, Math.min(body.length(), PromptEstimate.BODY_WINDOW)), body.length());
    }

    /** The request line as the client sent it, which is what the kernel scored and hashed. */
    static byte[] requestLine(HttpServerRequest request) {
        String version = request.version() == HttpVersion.HTTP_1_0 ? "HTTP/1.0" : "HTTP/1.1";
        return (request.method().name() + ' ' + request.uri() + ' ' + version).getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A request on its way through a tier. */
    static final class Served {
        final HttpServerRequest request;
        final Endpoint endpoint;
        final InferenceRequest parsed;
        final String tenant;
        final long start;
        /** What the body asks an upstream to spend, checked against each tier that serves it. */
        final RequestGuard.Demand demand;
        /** The assigned tier when its fallback served the request, else null. */
        Tier fallbackFrom;
        /** The problem type's slug when the tier failed it, else null (traces: error.type). */
        String errorType;
        /**
         * Time a streamed answer waited on the client's reading (the upstream's stream paused while the
         * response's write queue was full). Not the tier's latency: left out of the feedback loop's
         * sample, so a client that reads slowly on purpose cannot lower nano_max for everyone.
         */
        long clientWaitNanos;
        private long pausedAt;

        Served(HttpServerRequest request, Endpoint endpoint, InferenceRequest parsed, String tenant, long start,
               RequestGuard.Demand demand) {
            this.request = request;
            this.demand = demand;
            this.endpoint = endpoint;
            this.parsed = parsed;
            this.tenant = tenant;
            this.start = start;
        }
    }

    private void dispatch(Served served, Resolution resolution) {
        metrics.routeSource(resolution.source());
        served.request.response()
                .putHeader(ASSIGNED_TIER_NAME, resolution.tier().label())
                .putHeader(SCORE_NAME, Integer.toString(resolution.score()))
                .putHeader(ROUTE_SOURCE_NAME, resolution.source().label());
        serveBy(served, resolution, resolution.tier());
    }

    /** Hands the request to {@code tier}'s backend: the assigned tier, or its fallback. */
    private void serveBy(Served served, Resolution resolution, Tier tier) {
        HttpServerResponse response = served.request.response();
        TierBackend backend = backends.get(tier);
        Context context = Vertx.currentContext();
        TierRequest work;
        try {
            work = guard.admit(served.parsed.work(), served.demand, tier).judgedBy(resolver.policy(resolution));
        } catch (ProblemException e) {
            refuse(served.request, served.endpoint, served.start, e.problem(), false);
            return;
        }
        Optional<StreamingBackend> streaming = served.parsed.stream() ? backend.streaming() : Optional.empty();
        if (streaming.isPresent()) {
            onContext(context, response, () -> streaming.get().openStream(work)).onComplete(ar -> {
                if (ar.succeeded()) {
                    passThrough(served, resolution, tier, ar.result());
                } else if (!fellBack(served, resolution, tier, ar.cause())) {
                    fail(served, resolution, tier, ar.cause());
                }
            });
            return;
        }
        onContext(context, response, () -> backend.submit(work)).onComplete(ar -> {
            if (ar.succeeded()) {
                answer(served, resolution, ar.result(), response);
            } else if (!fellBack(served, resolution, tier, ar.cause())) {
                fail(served, resolution, tier, ar.cause());
            }
        });
    }

    /**
     * Sends the request to the assigned tier's fallback when the tier could not take it at all (queue
     * full, no admitted upstream endpoint): counted, marked in {@link #HEADER_FALLBACK_FROM}, and
     * named in the request event. One hop only.
     */
    private boolean fellBack(Served served, Resolution resolution, Tier tried, Throwable cause) {
        Tier fallback = fallbacks.get(tried);
        if (fallback == null || tried != resolution.tier() || served.request.response().closed()
                || !(unwrap(cause) instanceof TierFailure failure)
                || failure.kind() != TierFailure.Kind.QUEUE_FULL && failure.kind() != TierFailure.Kind.UNAVAILABLE) {
            return false;
        }
        metrics.fallback(tried, fallback, failure.kind().label());
        served.fallbackFrom = tried;
        served.request.response().putHeader(HEADER_FALLBACK_FROM, tried.label());
        serveBy(served, resolution, fallback);
        return true;
    }

    /**
     * The one place the tier edge's CompletableFuture becomes a Vert.x future, back on the request's
     * context. A client that goes away cancels the call: a queued job is dropped, a running upstream
     * exchange is reset.
     */
    private static <T> Future<T> onContext(Context context, HttpServerResponse response,
                                           Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> result;
        try {
            result = call.get();
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<T> pending = result;
        if (!pending.isDone()) {
            response.closeHandler(v -> pending.cancel(false));
        }
        return Future.fromCompletionStage(result, context);
    }

    private static Throwable unwrap(Throwable cause) {
        return cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
    }

    private void answer(Served served, Resolution resolution, TierReply reply, HttpServerResponse response) {
        Tier observed = reply.observedTier();
        Misroute misroute = Misroute.judge(resolution.tier(), observed, reply.observedScore(), resolution.thresholds(),
                misrouteBand);
        if (response.closed()) {
            completed(served, resolution, reply, misroute, CLIENT_CLOSED);
            return;
        }
        metrics.assessed(resolution.tier(), observed, misroute);
        response.putHeader(TIER_NAME, observed.label())
                .putHeader(TOKENS_NAME, Integer.toString(reply.promptTokens()))
                .putHeader(MISROUTE_NAME, misroute.label());
        if (served.parsed.translated() != null && reply.answer() != null && reply.answer().nativeShape()) {
            // An upstream that speaks the client's API answered in it.
            response.putHeader(HttpHeaders.CONTENT_TYPE, APPLICATION_JSON).end(reply.answer().body());
        } else if (served.parsed.translated() != null) {
            TranslatedRequest.Rendered rendered = served.parsed.translated().render(reply);
            response.putHeader(HttpHeaders.CONTENT_TYPE, rendered.contentType()).end(rendered.body());
        } else if (served.parsed.stream()) {
            response.putHeader("Content-Type", "text/event-stream")
                    .end(OpenAiResponses.renderAsEventStream(served.endpoint, reply,
                            StreamSummary.nexuscore(resolution, observed, reply.observedScore()), served.parsed.streamUsage()));
        } else {
            response.putHeader(HttpHeaders.CONTENT_TYPE, APPLICATION_JSON)
                    .end(reply.answer() != null ? reply.answer().body() : OpenAiResponses.renderBytes(served.endpoint, reply));
        }
        completed(served, resolution, reply, misroute, 200);
    }

    /**
     * Streams the upstream's events as they come, behind the head that already names the assigned
     * tier, score and route source. The tier's own assessment arrives (if at all) with the usage in
     * the last events, after the head went out: it goes into the summary chunk before
     * {@code [DONE]} ({@link StreamSummary}), the misroute accounting and the request event, never
     * into X-NX-Tier.
     */
    private void passThrough(Served served, Resolution resolution, Tier tier, UpstreamStream stream) {
        // Another API's client gets the chat chunks as its own events; the summary still reads them
        // (its own output unused) for the misroute accounting and the request event.
        // An upstream that speaks the client's API streams its events: passed through as they are.
        boolean asIs = stream.nativeShape();
        StreamTranslator translator = served.parsed.translated() == null || asIs ? null
                : served.parsed.translated().streamTranslator(tierModels.get(tier));
        HttpServerResponse response = served.request.response()
                .setChunked(true)
                .putHeader("Content-Type", translator != null ? "text/event-stream" : stream.clientContentType());
        StreamSummary summary = new StreamSummary(resolution, served.parsed.streamUsage());
        ReadStream<Buffer> body = stream.body();
        boolean[] done = {false};
        Handler<Integer> finish = status -> {
            if (done[0]) {
                return;
            }
            done[0] = true;
            TierReply reply = summary.reply().orElse(null);
            Misroute misroute = null;
            if (reply != null) {
                misroute = Misroute.judge(resolution.tier(), reply.observedTier(), reply.observedScore(),
                        resolution.thresholds(), misrouteBand);
                if (status == 200) {
                    metrics.assessed(resolution.tier(), reply.observedTier(), misroute);
                }
            }
            completed(served, resolution, reply, misroute, status);
        };
        response.closeHandler(v -> {
            if (!done[0]) {
                stream.cancel().run();
                finish.handle(CLIENT_CLOSED);
            }
        });
        body.exceptionHandler(e -> {
            if (done[0]) {
                return;
            }
            LOG.log(Level.DEBUG, "stream from tier {0} broke off: {1}", resolution.tier().label(), e);
            stream.cancel().run();
            metrics.httpError(ProblemType.UPSTREAM.slug());
            finish.handle(ProblemType.UPSTREAM.status());
            served.request.connection().close();
        });
        body.handler(chunk -> {
            Buffer passed = asIs ? chunk : summary.feed(chunk);
            Buffer out = translator == null ? passed : translator.feed(chunk);
            if (out.length() > 0 && !response.closed()) {
                response.write(out);
                if (response.writeQueueFull()) {
                    body.pause();
                    served.pausedAt = System.nanoTime();
                    response.drainHandler(v -> {
                        response.drainHandler(null); // Vert.x keeps it: one drain per pause counted
                        served.clientWaitNanos += System.nanoTime() - served.pausedAt;
                        body.resume();
                    });
                }
            }
        });
        body.endHandler(v -> {
            if (done[0] || response.closed()) {
                return;
            }
            long upstreamEnded = System.nanoTime();
            Buffer last = asIs ? Buffer.buffer() : summary.finish();
            response.end(translator == null ? last : translator.finish()).onComplete(ar -> {
                // The last bytes wait in the socket for the client as the paused ones did.
                served.clientWaitNanos += System.nanoTime() - upstreamEnded;
                finish.handle(ar.succeeded() ? 200 : CLIENT_CLOSED);
            });
        });
        body.resume();
    }

    private void fail(Served served, Resolution resolution, Tier tier, Throwable cause) {
        Throwable failure = unwrap(cause);
        if (failure instanceof CancellationException || served.request.response().closed()) {
            completed(served, resolution, null, null, CLIENT_CLOSED);
            return;
        }
        Problem problem;
        if (failure instanceof TierFailure tierFailure) {
            problem = TierFailureProblems.of(tier, tierFailure);
        } else {
            LOG.log(Level.ERROR, "tier " + tier.label() + " failed unexpectedly", failure);
            problem = Problems.internal("tier " + tier.label() + " failed unexpectedly");
        }
        served.errorType = problem.slug();
        reject(served.request, problem);
        completed(served, resolution, null, null, problem.status());
    }

    /** @param reply the tier's answer, null when none came; {@code misroute} is null exactly then */
    private void completed(Served served, Resolution resolution, TierReply reply, Misroute misroute, int status) {
        long latencyNanos = System.nanoTime() - served.start;
        metrics.request(resolution.tier(), status, latencyNanos);
        spans.completed(served, resolution, reply, misroute, status);
        // A test hook's latency is made up, and a fallback's belongs to another tier: neither may
        // move the thresholds.
        if ((status < 300 || status == ProblemType.DEADLINE.status()) && !served.parsed.simulated()
                && served.fallbackFrom == null) {
            // Instant refusals (queue full, bad upstream) would drag the tier's P95 down and hide
            // its overload from the feedback loop; a deadline is a true, slow latency.
            boolean sample = reply != null && guestTiers.contains(resolution.tier());
            latencyRecorder.record(resolution.tier(), misroute, served.tenant, latencyNanos - served.clientWaitNanos,
                    sample ? reply.promptTokens() : 0, sample ? resolution.estimateQ4() : 0);
        }
        if (events == EventSink.DISCARD) {
            return;
        }
        events.publishLazily(RequestEvent.TYPE, RequestEvent.of(served.tenant, served.endpoint, resolution, reply, misroute,
                status, latencyNanos, served.fallbackFrom));
    }

    private void reject(HttpServerRequest request, Problem problem) {
        metrics.httpError(problem.slug());
        problem.send(request.response(), request.path());
    }

    /** An inference request refused before any tier saw it: traced, then answered (and closed, with {@code close}). */
    private void refuse(HttpServerRequest request, Endpoint endpoint, long start, Problem problem, boolean close) {
        spans.rejected(request, endpoint, start, problem);
        if (close) {
            rejectAndClose(request, problem);
        } else {
            reject(request, problem);
        }
    }

    private void rejectAndClose(HttpServerRequest request, Problem problem) {
        metrics.httpError(problem.slug());
        HttpConnection connection = request.connection();
        problem.withHeader("Connection", "close").send(request.response(), request.path())
                .onComplete(ar -> connection.close());
    }
}
