package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/** The {@code request} event published for every answered (or refused) inference request. */
final class RequestEvent {

    static final String TYPE = "request";

    private RequestEvent() {
    }

    /**
     * @param observed     the tier the backend says answered, null when none did
     * @param fallbackFrom the assigned tier when its fallback tier served the request, else null
     */
    static JsonObject of(String tenant, Endpoint endpoint, Resolution resolution, Tier observed, int status,
                         long latencyNanos, Tier fallbackFrom) {
        Instant now = Instant.now();
        return new JsonObject()
                .put("timestamp_ns", now.getEpochSecond() * 1_000_000_000L + now.getNano())
                .put("tenant", tenant)
                .put("endpoint", endpoint.task())
                .put("assigned_tier", resolution.tier().label())
                .put("observed_tier", observed == null ? null : observed.label())
                .put("score", resolution.score())
                .put("route_source", resolution.source().label())
                .put("status", status)
                .put("latency_us", latencyNanos / 1_000)
                .put("fallback_from", fallbackFrom == null ? null : fallbackFrom.label());
    }
}
