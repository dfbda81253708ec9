package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/** The {@code request} event published for every answered (or refused) inference request. */
final class RequestEvent {

    static final String TYPE = "request";

    private RequestEvent() {
    }

    /**
     * @param reply    the tier's answer, null when none came (then the assessment fields are null)
     * @param misroute how wrong the assignment was, null exactly when {@code reply} is
     * @param fallbackFrom the assigned tier when its fallback tier served the request, else null
     */
    static JsonObject of(String tenant, Endpoint endpoint, Resolution resolution, TierReply reply, Misroute misroute,
                         int status, long latencyNanos, Tier fallbackFrom) {
        Instant now = Instant.now();
        boolean scored = reply != null && reply.observedScore() != TierReply.UNKNOWN_SCORE;
        return new JsonObject()
                .put("timestamp_ns", now.getEpochSecond() * 1_000_000_000L + now.getNano())
                .put("tenant", tenant)
                .put("endpoint", endpoint.task())
                .put("assigned_tier", resolution.tier().label())
                .put("observed_tier", reply == null ? null : reply.observedTier().label())
                .put("score", resolution.score())
                .put("observed_score", scored ? reply.observedScore() : null)
                .put("prompt_tokens", reply == null ? null : reply.promptTokens())
                .put("misroute", misroute == null ? null : new JsonObject()
                        .put("strict", misroute.strict())
                        .put("banded", misroute.banded())
                        .put("gross", misroute.gross()))
                .put("route_source", resolution.source().label())
                .put("status", status)
                .put("latency_us", latencyNanos / 1_000)
                .put("fallback_from", fallbackFrom == null ? null : fallbackFrom.label());
    }
}
