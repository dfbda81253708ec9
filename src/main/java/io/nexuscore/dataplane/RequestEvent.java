package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * The {@code request} event published for every answered (or refused) inference request: the
 * request's facts captured as values when it completes, turned into JSON only when a subscriber or
 * a resume reads the event ({@link io.nexuscore.events.EventSink#publishLazily}).
 *
 * @param observedTier  null when no answer came
 * @param observedScore null when no answer came or the tier could not score it
 * @param promptTokens  null when no answer came
 * @param completionTokens the answer's completion tokens (its usage), null when no answer came
 * @param misroute      null exactly when no answer came
 * @param clientWaitUs  of latencyUs, the time spent waiting on a slow client (not in the latency sample)
 * @param fallbackFrom  the assigned tier when its fallback tier served the request, else null
 */
record RequestEvent(long timestampNs, String tenant, String endpoint, Tier assignedTier, Tier observedTier,
                    int score, Integer observedScore, Integer promptTokens, Integer completionTokens, Misroute misroute,
                    String routeSource,
                    int status, long latencyUs, long clientWaitUs, Tier fallbackFrom) implements Supplier<JsonObject> {

    static final String TYPE = "request";

    /**
     * @param reply    the tier's answer, null when none came (then the assessment fields are null)
     * @param misroute how wrong the assignment was, null exactly when {@code reply} is
     * @param fallbackFrom the assigned tier when its fallback tier served the request, else null
     */
    static RequestEvent of(String tenant, Endpoint endpoint, Resolution resolution, TierReply reply, Misroute misroute,
                           int status, long latencyNanos, long clientWaitNanos, Tier fallbackFrom) {
        Instant now = Instant.now();
        boolean scored = reply != null && reply.observedScore() != TierReply.UNKNOWN_SCORE;
        return new RequestEvent(now.getEpochSecond() * 1_000_000_000L + now.getNano(), tenant, endpoint.task(),
                resolution.tier(), reply == null ? null : reply.observedTier(), resolution.score(),
                scored ? reply.observedScore() : null, reply == null ? null : reply.promptTokens(),
                reply == null ? null : reply.completionTokens(), misroute,
                resolution.source().label(), status, latencyNanos / 1_000, clientWaitNanos / 1_000, fallbackFrom);
    }

    /** The event's JSON (built on each call; the event hub encodes it once). */
    @Override
    public JsonObject get() {
        return new JsonObject()
                .put("timestamp_ns", timestampNs)
                .put("tenant", tenant)
                .put("endpoint", endpoint)
                .put("assigned_tier", assignedTier.label())
                .put("observed_tier", observedTier == null ? null : observedTier.label())
                .put("score", score)
                .put("observed_score", observedScore)
                .put("prompt_tokens", promptTokens)
                .put("completion_tokens", completionTokens)
                .put("misroute", misroute == null ? null : new JsonObject()
                        .put("strict", misroute.strict())
                        .put("banded", misroute.banded())
                        .put("gross", misroute.gross()))
                .put("route_source", routeSource)
                .put("status", status)
                .put("latency_us", latencyUs)
                .put("client_wait_us", clientWaitUs)
                .put("fallback_from", fallbackFrom == null ? null : fallbackFrom.label());
    }
}
