package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.tenants.limits.Ticket;
import io.vertx.core.http.HttpServerRequest;

/** A request on its way through a tier: what dispatch, the stream relay and the accounting share. */
final class Served {
    final HttpServerRequest request;
    final Endpoint endpoint;
    final InferenceRequest parsed;
    final String tenant;
    final long start;
    /** What the body asks an upstream to spend, checked against each tier that serves it. */
    final RequestGuard.Demand demand;
    /** The request's hold on its tenant's limits: finished by the accounting, released on a refusal after admission. */
    Ticket ticket;
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
    /** When the stream relay last paused the upstream's stream (System.nanoTime). */
    long pausedAt;

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
