package io.nexuscore.kernel.maps;

import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;

/**
 * Receives the latency of every completed request, for the kernel feedback loop (the latency
 * user ring buffer) and the per-tenant series. Called on an event loop: implementations must not block.
 */
public interface LatencyRecorder {

    /**
     * @param assigned    the tier the request was served at
     * @param misroute    how the answer was judged against the guest's own token count, null when no answer came
     * @param tenant      the request's tenant (the tenant header, or the data plane's anonymous name)
     * @param trueTokens  calibration sample: the Wasm guest's cl100k count of the prompt, 0 when none
     *                    (no answer, or an upstream's answer, whose count is another tokenizer's)
     * @param estimateQ4  the estimate of the same prompt at unit gain in 1/16 tokens
     *                    ({@code Resolution.estimateQ4()}), 0 when there is no sample
     */
    void record(Tier assigned, Misroute misroute, String tenant, long latencyNanos, int trueTokens, int estimateQ4);

    /** A latency without a calibration sample. */
    default void record(Tier assigned, Misroute misroute, String tenant, long latencyNanos) {
        record(assigned, misroute, tenant, latencyNanos, 0, 0);
    }

    LatencyRecorder NONE = (assigned, misroute, tenant, latencyNanos, trueTokens, estimateQ4) -> { };

    /** Both recorders, this one first. */
    default LatencyRecorder andThen(LatencyRecorder next) {
        return (assigned, misroute, tenant, latencyNanos, trueTokens, estimateQ4) -> {
            record(assigned, misroute, tenant, latencyNanos, trueTokens, estimateQ4);
            next.record(assigned, misroute, tenant, latencyNanos, trueTokens, estimateQ4);
        };
    }
}
