package io.nexuscore.adapt;

import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;

/**
 * Receives the latency of every completed request, for the kernel feedback loop (the latency
 * user ring buffer) and the per-tenant series. Called on an event loop: implementations must not block.
 */
public interface LatencyRecorder {

    /**
     * @param assigned the tier the request was served at
     * @param misroute how the answer was judged against the guest's own token count, null when no answer came
     * @param tenant   the request's tenant (the tenant header, or the data plane's anonymous name)
     */
    void record(Tier assigned, Misroute misroute, String tenant, long latencyNanos);

    LatencyRecorder NONE = (assigned, misroute, tenant, latencyNanos) -> { };

    /** Both recorders, this one first. */
    default LatencyRecorder andThen(LatencyRecorder next) {
        return (assigned, misroute, tenant, latencyNanos) -> {
            record(assigned, misroute, tenant, latencyNanos);
            next.record(assigned, misroute, tenant, latencyNanos);
        };
    }
}
