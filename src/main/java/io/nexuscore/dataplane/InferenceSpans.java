package io.nexuscore.dataplane;

import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemType;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.telemetry.InferenceSpan;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.telemetry.SpanAttributes;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.HostAndPort;
import io.vertx.core.net.SocketAddress;
import java.util.List;

/**
 * The data plane's side of request tracing: turns a finished (or refused) inference request into
 * its span. Both calls return at once when tracing is off.
 */
final class InferenceSpans {

    /** What {@link OpenAiResponses} renders as every choice's finish_reason (a tier's own answer says its own). */
    private static final List<String> FINISH_REASONS = List.of("stop");
    /** error.type of a request whose client left before its answer was ready. */
    static final String CLIENT_CLOSED = "client-closed";

    private final RequestTracing tracing;

    InferenceSpans(RequestTracing tracing) {
        this.tracing = tracing;
    }

    /**
     * A request that reached a tier: answered, failed there, or abandoned by its client.
     *
     * @param reply    the tier's answer, null when none came (failure, or a stream passed through)
     * @param misroute null exactly when {@code reply} is
     */
    void completed(Served served, Resolution resolution, TierReply reply, Misroute misroute,
                   int status) {
        if (!tracing.enabled()) {
            return;
        }
        InferenceSpan span = begin(served.request, served.endpoint, served.start, served.parsed.model())
                .set(SpanAttributes.STREAM, served.parsed.stream())
                .set(SpanAttributes.ASSIGNED_TIER, resolution.tier().label())
                .set(SpanAttributes.SCORE, resolution.score())
                .set(SpanAttributes.ROUTE_SOURCE, resolution.source().label())
                .set(SpanAttributes.TENANT, served.tenant)
                .set(SpanAttributes.FALLBACK_FROM, served.fallbackFrom == null ? null : served.fallbackFrom.label());
        int maxTokens = served.parsed.work().maxTokens();
        if (maxTokens > 0) {
            span.set(SpanAttributes.REQUEST_MAX_TOKENS, maxTokens);
        }
        if (reply != null) {
            span.set(SpanAttributes.RESPONSE_MODEL, reply.model())
                    .set(SpanAttributes.USAGE_INPUT_TOKENS, reply.promptTokens())
                    .set(SpanAttributes.USAGE_OUTPUT_TOKENS, reply.completionTokens())
                    .set(SpanAttributes.RESPONSE_FINISH_REASONS, finishReasons(reply))
                    .set(SpanAttributes.TIER, reply.observedTier().label())
                    .set(SpanAttributes.MISROUTE, misroute.label());
        }
        span.end(status, errorType(served, reply, status));
    }

    /** What the client's answer says: the tier's own answer's reason, or the rendered answer's "stop". */
    private static List<String> finishReasons(TierReply reply) {
        if (reply.answer() == null) {
            return FINISH_REASONS;
        }
        return reply.answer().finishReason() == null ? null : List.of(reply.answer().finishReason());
    }

    private static String errorType(Served served, TierReply reply, int status) {
        if (status == DataPlaneHandler.CLIENT_CLOSED) {
            return CLIENT_CLOSED;
        }
        if (served.errorType == null && reply == null && status == ProblemType.UPSTREAM.status()) {
            return ProblemType.UPSTREAM.slug(); // a passed-through stream that broke off
        }
        return served.errorType;
    }

    /** An embeddings request, forwarded (or refused): no tier, no score. */
    void embeddings(HttpServerRequest request, Endpoint endpoint, long start, String model, String tenant, int status,
                    String errorType) {
        if (!tracing.enabled()) {
            return;
        }
        begin(request, endpoint, start, model).set(SpanAttributes.TENANT, tenant)
                .end(status, status == DataPlaneHandler.CLIENT_CLOSED ? CLIENT_CLOSED : errorType);
    }

    /** A request to an inference endpoint refused before any tier saw it (body too large or late, bad JSON). */
    void rejected(HttpServerRequest request, Endpoint endpoint, long start, Problem problem) {
        if (!tracing.enabled()) {
            return;
        }
        begin(request, endpoint, start, null).end(problem.status(), problem.slug());
    }

    private InferenceSpan begin(HttpServerRequest request, Endpoint endpoint, long start, String model) {
        String operation = switch (endpoint.kind()) {
            // gen_ai.operation.name: the Responses and Messages APIs are chats in GenAI's terms
            case CHAT, RESPONSES, MESSAGES -> SpanAttributes.CHAT;
            case EMBEDDINGS -> SpanAttributes.EMBEDDINGS;
            default -> SpanAttributes.TEXT_COMPLETION;
        };
        InferenceSpan span = tracing.inference(operation, model, start, request.headers())
                .set(SpanAttributes.TASK, endpoint.task());
        HostAndPort authority = request.authority();
        SocketAddress local = request.localAddress();
        if (authority != null) {
            span.set(SpanAttributes.SERVER_ADDRESS, authority.host());
        }
        int port = authority != null && authority.port() > 0 ? authority.port() : local == null ? -1 : local.port();
        if (port > 0) {
            span.set(SpanAttributes.SERVER_PORT, port);
        }
        SocketAddress remote = request.remoteAddress();
        if (remote != null) {
            span.set(SpanAttributes.CLIENT_ADDRESS, remote.hostAddress());
        }
        return span;
    }
}
