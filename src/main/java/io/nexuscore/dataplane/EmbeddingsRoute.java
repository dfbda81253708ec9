package io.nexuscore.dataplane;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.events.EventSink;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.Problems;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.upstream.EmbeddingsUpstream;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code POST /v1/embeddings}: checked, its model set to the upstream's, forwarded to the embeddings
 * target ({@code embeddings.upstream}); the upstream's answer goes back with the model a client sees
 * listed. Not scored, not tiered: an embedding is no generation. Counted in
 * {@code nexus_embeddings_requests{status}} and {@code nexus_embeddings_latency}, published as a
 * {@code request} event (endpoint "embeddings", no tier) and traced as {@code gen_ai.operation.name=embeddings}.
 */
final class EmbeddingsRoute {

    static final List<String> ENCODINGS = List.of("float", "base64");

    private final EmbeddingsUpstream upstream;
    private final String upstreamModel;
    private final String listedModel;
    private final MeterRegistry registry;
    private final Map<Integer, Counter> requests = new ConcurrentHashMap<>();
    private final Timer latency;
    private final EventSink events;
    private final DataPlaneMetrics metrics;
    private final InferenceSpans spans;

    EmbeddingsRoute(EmbeddingsUpstream upstream, String upstreamModel, String listedModel, MeterRegistry registry,
                    EventSink events, DataPlaneMetrics metrics, InferenceSpans spans) {
        this.upstream = upstream;
        this.upstreamModel = upstreamModel;
        this.listedModel = listedModel;
        this.registry = registry;
        this.latency = Timer.builder("nexus_embeddings_latency")
                .description("Time from request to the embeddings upstream's whole answer")
                .register(registry);
        this.events = events;
        this.metrics = metrics;
        this.spans = spans;
    }

    String model() {
        return listedModel;
    }

    void serve(HttpServerRequest request, Endpoint endpoint, String tenant, Buffer body, long start) {
        JsonObject forwarded;
        try {
            forwarded = checked(body).put("model", upstreamModel);
        } catch (Refused e) {
            finish(request, endpoint, tenant, start, null, e.problem);
            return;
        }
        upstream.forward(forwarded.toBuffer()).onComplete(ar -> {
            if (request.response().closed()) {
                record(endpoint, tenant, start, DataPlaneHandler.CLIENT_CLOSED, request, null);
                return;
            }
            if (ar.failed()) {
                finish(request, endpoint, tenant, start, null, problemOf(ar.cause()));
                return;
            }
            EmbeddingsUpstream.Answer answer = ar.result();
            if (answer.status() >= 400) {
                // The upstream's own words are not echoed: an error body can name hosts or keys.
                finish(request, endpoint, tenant, start, null, answer.status() < 500
                        ? ProblemType.UPSTREAM_REFUSED.problem("the embeddings upstream refused the request (HTTP "
                                + answer.status() + ")")
                        : ProblemType.UPSTREAM.problem("the embeddings upstream failed (HTTP " + answer.status() + ")"));
                return;
            }
            JsonObject document;
            try {
                document = answer.body().toJsonObject();
            } catch (DecodeException | ClassCastException e) {
                finish(request, endpoint, tenant, start, null,
                        ProblemType.UPSTREAM.problem("the embeddings upstream answered something that is not a JSON object"));
                return;
            }
            finish(request, endpoint, tenant, start, document.put("model", listedModel).toBuffer(), null);
        });
    }

    private void finish(HttpServerRequest request, Endpoint endpoint, String tenant, long start, Buffer answer,
                        Problem problem) {
        if (problem != null) {
            metrics.httpError(problem.slug());
            problem.send(request.response(), request.path());
            record(endpoint, tenant, start, problem.status(), request, problem.slug());
            return;
        }
        request.response().putHeader("Content-Type", "application/json").end(answer);
        record(endpoint, tenant, start, 200, request, null);
    }

    private void record(Endpoint endpoint, String tenant, long start, int status, HttpServerRequest request,
                        String errorType) {
        long nanos = System.nanoTime() - start;
        latency.record(nanos, TimeUnit.NANOSECONDS);
        requests.computeIfAbsent(status, s -> Counter.builder("nexus_embeddings_requests")
                .description("Embeddings requests by HTTP status").tag("status", Integer.toString(s))
                .register(registry)).increment();
        spans.embeddings(request, endpoint, start, listedModel, tenant, status, errorType);
        if (events == EventSink.DISCARD) {
            return;
        }
        Instant now = Instant.now();
        events.publish(RequestEvent.TYPE, new JsonObject()
                .put("timestamp_ns", now.getEpochSecond() * 1_000_000_000L + now.getNano())
                .put("tenant", tenant)
                .put("endpoint", endpoint.task())
                .putNull("assigned_tier")
                .putNull("observed_tier")
                .putNull("score")
                .putNull("observed_score")
                .putNull("prompt_tokens")
                .putNull("completion_tokens")
                .putNull("misroute")
                .put("route_source", "none")
                .put("status", status)
                .put("latency_us", nanos / 1_000)
                .putNull("fallback_from"));
    }

    private static Problem problemOf(Throwable cause) {
        if (cause instanceof TierFailure failure) {
            return switch (failure.kind()) {
                case UNAVAILABLE -> ProblemType.UNAVAILABLE.problem(failure.getMessage()).withHeader("Retry-After", "1");
                case DEADLINE -> ProblemType.DEADLINE.problem(failure.getMessage());
                default -> ProblemType.UPSTREAM.problem(failure.getMessage());
            };
        }
        if (cause instanceof java.util.concurrent.TimeoutException) {
            return ProblemType.DEADLINE.problem("embeddings: the upstream did not answer in time");
        }
        return ProblemType.UPSTREAM.problem("embeddings: the upstream could not be reached");
    }

    private static final class Refused extends Exception {
        final Problem problem;

        Refused(Problem problem) {
            super(problem.detail(), null, false, false);
            this.problem = problem;
        }
    }

    /** The client's request, checked: input a string or a non-empty array of strings or token arrays. */
    static JsonObject checked(Buffer body) throws Refused {
        JsonObject json;
        try {
            json = body.length() == 0 ? null : new JsonObject(body);
        } catch (DecodeException | ClassCastException e) {
            throw new Refused(Problems.malformedJson(e.getMessage()));
        }
        if (json == null) {
            throw new Refused(Problems.malformedJson("the request body is empty; expected a JSON object"));
        }
        Object input = json.getValue("input");
        boolean ok = input instanceof String
                || input instanceof JsonArray items && !items.isEmpty()
                        && (items.stream().allMatch(i -> i instanceof String)
                            || items.stream().allMatch(i -> i instanceof Number)
                            || items.stream().allMatch(i -> i instanceof JsonArray a && !a.isEmpty()
                                    && a.stream().allMatch(t -> t instanceof Number)));
        if (!ok) {
            throw new Refused(Problems.invalidRequest("input must be a string, or a non-empty array of strings, "
                    + "of token ids, or of token-id arrays"));
        }
        Object dimensions = json.getValue("dimensions");
        if (dimensions != null && (!(dimensions instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())
                || n.doubleValue() < 1 || n.doubleValue() > 65_536)) {
            throw new Refused(Problems.invalidRequest("dimensions must be an integer in 1..65536, got "
                    + JsonBodies.echoed(String.valueOf(dimensions))));
        }
        Object encoding = json.getValue("encoding_format");
        if (encoding != null && !ENCODINGS.contains(encoding)) {
            throw new Refused(Problems.invalidRequest("encoding_format must be float or base64, got "
                    + JsonBodies.echoed(String.valueOf(encoding))));
        }
        return json;
    }
}
