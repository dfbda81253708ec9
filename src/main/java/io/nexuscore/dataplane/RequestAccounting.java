package io.nexuscore.dataplane;

import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.Tier;
import io.nexuscore.events.EventSink;
import io.nexuscore.http.ProblemType;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.tiers.TierReply;
import java.util.Set;

/**
 * Where every request a tier saw ends, once: its metrics, its span, the feedback loop's latency
 * sample, and the request event.
 */
final class RequestAccounting {

    private final DataPlaneMetrics metrics;
    private final InferenceSpans spans;
    /** Tiers a Wasm guest answers: only their prompt-token count is cl100k, a calibration sample. */
    private final Set<Tier> guestTiers;
    private final LatencyRecorder latencyRecorder;
    private final EventSink events;

    RequestAccounting(DataPlaneMetrics metrics, InferenceSpans spans, Set<Tier> guestTiers,
                      LatencyRecorder latencyRecorder, EventSink events) {
        this.metrics = metrics;
        this.spans = spans;
        this.guestTiers = guestTiers;
        this.latencyRecorder = latencyRecorder;
        this.events = events;
    }

    /** @param reply the tier's answer, null when none came; {@code misroute} is null exactly then */
    void completed(Served served, Resolution resolution, TierReply reply, Misroute misroute, int status) {
        long latencyNanos = System.nanoTime() - served.start;
        // Settled by the answer's usage (a stream's too), the slot given back: once, on every path.
        served.ticket.finish(resolution.tier().label(), reply != null, reply == null ? 0 : reply.promptTokens(),
                reply == null ? 0 : reply.completionTokens());
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
                status, latencyNanos, served.clientWaitNanos, served.fallbackFrom));
    }
}
