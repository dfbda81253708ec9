package io.nexuscore.dataplane;

import io.nexuscore.http.Problem;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;

/**
 * How the data plane answers a request it will not serve: in problem+json, counted by type, and,
 * for an inference request no tier saw, traced. Shared by admission, body reading and dispatch.
 */
final class Refusals {

    private final DataPlaneMetrics metrics;
    private final InferenceSpans spans;

    Refusals(DataPlaneMetrics metrics, InferenceSpans spans) {
        this.metrics = metrics;
        this.spans = spans;
    }

    /** Answers {@code problem}; the connection stays open. */
    void reject(HttpServerRequest request, Problem problem) {
        metrics.httpError(problem.slug());
        problem.send(request.response(), request.path());
    }

    /** An inference request refused before any tier saw it: traced, then answered (and closed, with {@code close}). */
    void refuse(HttpServerRequest request, Endpoint endpoint, long start, Problem problem, boolean close) {
        spans.rejected(request, endpoint, start, problem);
        if (close) {
            rejectAndClose(request, problem);
        } else {
            reject(request, problem);
        }
    }

    /** Answers {@code problem} with {@code Connection: close}, then closes: what is left of the request is not read. */
    void rejectAndClose(HttpServerRequest request, Problem problem) {
        metrics.httpError(problem.slug());
        HttpConnection connection = request.connection();
        problem.withHeader("Connection", "close").send(request.response(), request.path())
                .onComplete(ar -> connection.close());
    }
}
