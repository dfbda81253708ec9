package io.nexuscore.dataplane;

import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.Tier;
import io.nexuscore.dataplane.apis.TranslatedRequest;
import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.Problems;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.tenants.limits.LimitGate;
import io.nexuscore.tenants.limits.Ticket;
import io.nexuscore.tiers.StreamingBackend;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.Handler;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * The third step, once the body is in: parse it, resolve the tier (on the event loop when the
 * kernel's verdict is in its slot, else on the resolver pool), hand the request to the tier's
 * backend, and when that tier cannot take it at all, to its fallback (one hop). A whole answer is
 * rendered here; a streamed one goes to {@link StreamRelay}. Either way the request ends in
 * {@link RequestAccounting}.
 */
final class TierDispatch {

    /*
     * The names as the response puts them: AsciiStrings keep their (case-insensitive) hash, which
     * the header map otherwise computes anew from a String for every header of every answer.
     */
    private static final CharSequence TIER_NAME = HttpHeaders.createOptimized(DataPlaneHandler.HEADER_TIER);
    private static final CharSequence ASSIGNED_TIER_NAME = HttpHeaders.createOptimized(DataPlaneHandler.HEADER_ASSIGNED_TIER);
    private static final CharSequence SCORE_NAME = HttpHeaders.createOptimized(DataPlaneHandler.HEADER_SCORE);
    private static final CharSequence ROUTE_SOURCE_NAME = HttpHeaders.createOptimized(DataPlaneHandler.HEADER_ROUTE_SOURCE);
    private static final CharSequence TOKENS_NAME = HttpHeaders.createOptimized(DataPlaneHandler.HEADER_TOKENS);
    private static final CharSequence MISROUTE_NAME = HttpHeaders.createOptimized(DataPlaneHandler.HEADER_MISROUTE);
    private static final CharSequence APPLICATION_JSON = HttpHeaders.createOptimized("application/json");

    private static final System.Logger LOG = System.getLogger(TierDispatch.class.getName());

    private final boolean testHooks;
    private final RequestGuard guard;
    private final ConnectionInspector connections;
    private final TierResolver resolver;
    private final WorkerExecutor resolverPool;
    /** Every tier's backend (checked complete by {@link DataPlaneHandler}). */
    private final Map<Tier, TierBackend> backends;
    private final Map<Tier, Tier> fallbacks;
    private final Optional<EmbeddingsRoute> embeddings;
    private final double misrouteBand;
    private final DataPlaneMetrics metrics;
    private final Refusals refusals;
    private final StreamRelay relay;
    private final RequestAccounting accounting;
    private final LimitGate limits;

    /** @param resolverPool where kernel-mode resolution runs; non-null when {@code resolver.blocking()} */
    TierDispatch(boolean testHooks, RequestGuard guard, ConnectionInspector connections, TierResolver resolver,
                 WorkerExecutor resolverPool, Map<Tier, TierBackend> backends, Map<Tier, Tier> fallbacks,
                 Optional<EmbeddingsRoute> embeddings, double misrouteBand, DataPlaneMetrics metrics,
                 Refusals refusals, StreamRelay relay, RequestAccounting accounting, LimitGate limits) {
        this.testHooks = testHooks;
        this.guard = guard;
        this.connections = connections;
        this.resolver = resolver;
        this.resolverPool = resolverPool;
        this.backends = backends;
        this.fallbacks = fallbacks;
        this.embeddings = embeddings;
        this.misrouteBand = misrouteBand;
        this.metrics = metrics;
        this.refusals = refusals;
        this.relay = relay;
        this.accounting = accounting;
        this.limits = limits;
    }

    void onBody(HttpServerRequest request, Endpoint endpoint, String tenant, Buffer body, long start) {
        if (endpoint.kind() == Endpoint.Kind.EMBEDDINGS) {
            embeddings.orElseThrow().serve(request, endpoint, tenant, body, start);
            return;
        }
        InferenceRequest parsed;
        RequestGuard.Demand demand;
        try {
            // One pass over the body for both, unless the streaming parse declined it.
            RequestGuard.Fields fields = guard.fields(endpoint);
            parsed = InferenceRequest.parse(endpoint, body, testHooks, fields);
            RequestGuard.Demand read = fields.demand();
            demand = read != null ? read : guard.inspect(endpoint, body);
        } catch (ProblemException e) {
            refusals.refuse(request, endpoint, start, e.problem(), false);
            return;
        }
        byte[] requestLine = requestLine(request);
        long bodyLength = body.length();
        PromptEstimate estimate = promptEstimate(body);
        // Floors are looked up per request, so a tenant change reaches connections already open.
        ConnectionInfo connection = connections.current(request.connection());
        Ticket ticket;
        try {
            // Before any tier works: the tenant's limits, charged the prompt estimate (at unit gain, as
            // the kernel counts it) plus the output cap; XDP's decision when it counted the request
            // (docs/tenant-limits.md).
            Optional<java.net.InetAddress> source = connection.tuple().map(io.nexuscore.classify.FourTuple::srcAddress);
            String limitsTenant = limits.limitsTenant(tenant, RequestAdmission.ANONYMOUS_TENANT.equals(tenant), source);
            int kernelFlags = limits.countedInKernel(source) ? resolver.kernelLimitFlags(requestLine, bodyLength, connection) : 0;
            ticket = limits.admit(limitsTenant, estimate.tokens(io.nexuscore.classify.TokenGain.ONE_Q10), demand.maxTokens(),
                    demand.choices(), kernelFlags, source);
        } catch (ProblemException e) {
            refusals.refuse(request, endpoint, start, e.problem(), false);
            return;
        }
        ticket.headers().forEach(request.response()::putHeader);
        Served served = new Served(request, endpoint, parsed, tenant, start, demand);
        served.ticket = ticket;
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
                        served.ticket.release();
                        refusals.reject(request, Problems.internal("tier resolution failed: " + ar.cause().getMessage()));
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
            served.ticket.release(); // no tier worked on it: its tokens and its slot go back
            refusals.refuse(served.request, served.endpoint, served.start, e.problem(), false);
            return;
        }
        Optional<StreamingBackend> streaming = served.parsed.stream() ? backend.streaming() : Optional.empty();
        if (streaming.isPresent()) {
            onContext(context, response, () -> streaming.get().openStream(work), ar -> {
                if (ar.succeeded()) {
                    relay.passThrough(served, resolution, tier, ar.result());
                } else if (!fellBack(served, resolution, tier, ar.cause())) {
                    fail(served, resolution, tier, ar.cause());
                }
            });
            return;
        }
        onContext(context, response, () -> backend.submit(work), ar -> {
            if (ar.succeeded()) {
                answer(served, resolution, ar.result(), response);
            } else if (!fellBack(served, resolution, tier, ar.cause())) {
                fail(served, resolution, tier, ar.cause());
            }
        });
    }

    /**
     * Sends the request to the assigned tier's fallback when the tier could not take it at all (queue
     * full, no admitted upstream endpoint): counted, marked in {@link DataPlaneHandler#HEADER_FALLBACK_FROM},
     * and named in the request event. One hop only.
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
        served.request.response().putHeader(DataPlaneHandler.HEADER_FALLBACK_FROM, tried.label());
        serveBy(served, resolution, fallback);
        return true;
    }

    /**
     * The one place the tier edge's CompletableFuture is handed back to the request's context. A
     * client that goes away cancels the call: a queued job is dropped, a running upstream exchange is
     * reset. A call already settled on the request's own thread (a guest called on its event loop) is
     * handled right here, without a Vert.x promise and listener in between.
     */
    private static <T> void onContext(Context context, HttpServerResponse response, Supplier<CompletableFuture<T>> call,
                                      Handler<AsyncResult<T>> handler) {
        CompletableFuture<T> result;
        try {
            result = call.get();
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        if (result.isDone() && Vertx.currentContext() == context) {
            T value;
            try {
                value = result.getNow(null);
            } catch (CompletionException | CancellationException e) {
                handler.handle(Future.failedFuture(unwrap(e))); // as the callers unwrap the promise's cause
                return;
            }
            handler.handle(Future.succeededFuture(value));
            return;
        }
        CompletableFuture<T> pending = result;
        if (!pending.isDone()) {
            response.closeHandler(v -> pending.cancel(false));
        }
        Future.fromCompletionStage(result, context).onComplete(handler);
    }

    private static Throwable unwrap(Throwable cause) {
        return cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
    }

    private void answer(Served served, Resolution resolution, TierReply reply, HttpServerResponse response) {
        Tier observed = reply.observedTier();
        Misroute misroute = Misroute.judge(resolution.tier(), observed, reply.observedScore(), resolution.thresholds(),
                misrouteBand);
        if (response.closed()) {
            accounting.completed(served, resolution, reply, misroute, DataPlaneHandler.CLIENT_CLOSED);
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
        accounting.completed(served, resolution, reply, misroute, 200);
    }

    private void fail(Served served, Resolution resolution, Tier tier, Throwable cause) {
        Throwable failure = unwrap(cause);
        if (failure instanceof CancellationException || served.request.response().closed()) {
            accounting.completed(served, resolution, null, null, DataPlaneHandler.CLIENT_CLOSED);
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
        refusals.reject(served.request, problem);
        accounting.completed(served, resolution, null, null, problem.status());
    }
}
