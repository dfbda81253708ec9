package io.nexuscore.adapt;

import io.nexuscore.classify.Tier;

/**
 * Receives the latency of every completed request, for the kernel feedback loop (the latency
 * user ring buffer) and the per-tenant series. Called on an event loop: implementations must not block.
 */
public interface LatencyRecorder {

    /**
     * @param assigned the tier the request was served at
     * @param observed the tier the backend says answered (its own assessment), null when none did
     * @param tenant   the request's tenant (the tenant header, or the data plane's anonymous name)
     */
    void record(Tier assigned, Tier observed, String tenant, long latencyNanos);

    LatencyRecorder NONE = (assigned, observed, tenant, latencyNanos) -> { };

    /** Both recorders, this one first. */
    default LatencyRecorder andThen(LatencyRecorder next) {
        return (assigned, observed, tenant, latencyNanos) -> {
            record(assigned, observed, tenant, latencyNanos);
            next.record(assigned, observed, tenant, latencyNanos);
        };
    }
}
