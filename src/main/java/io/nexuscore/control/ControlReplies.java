package io.nexuscore.control;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.http.Problem;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.Callable;

/**
 * What every control-plane route shares: blocking work off the event loop, JSON answers, and the
 * one renderer of problems (each counted in {@code nexus_control_errors_total{type}}).
 */
final class ControlReplies {

    private final Vertx vertx;
    private final PrometheusMeterRegistry registry;

    ControlReplies(Vertx vertx, PrometheusMeterRegistry registry) {
        this.vertx = vertx;
        this.registry = registry;
    }

    /**
     * Runs blocking work on a worker; a failure goes to the failure handler. Unordered: a slow reload
     * must not hold up GET /thresholds or a scrape (the keeper and the ports synchronize).
     */
    <T> Future<T> blocking(RoutingContext ctx, Callable<T> work) {
        return vertx.executeBlocking(work, false).onFailure(ctx::fail);
    }

    static void json(RoutingContext ctx, int status, JsonObject body) {
        ctx.response().setStatusCode(status)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                .end(body.encode());
    }

    /**
     * One renderer for every control-plane error, each counted in {@code nexus_control_errors_total{type}};
     * a response already under way can only be reset.
     */
    void sendProblem(RoutingContext ctx, Problem problem) {
        countError(problem);
        if (ctx.response().headWritten()) {
            ctx.response().reset();
            return;
        }
        problem.send(ctx.response(), ctx.request().path());
    }

    void countError(Problem problem) {
        Counter.builder("nexus.control.errors").tag("type", problem.slug())
                .description("Control-plane requests answered with a problem, by problem type")
                .register(registry).increment();
    }
}
