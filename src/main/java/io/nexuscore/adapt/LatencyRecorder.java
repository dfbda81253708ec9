package io.nexuscore.adapt;

import io.nexuscore.classify.Tier;

/**
 * Receives the latency of every completed request, for the kernel feedback loop (the latency
 * user ring buffer). Called on an event loop: implementations must not block.
 */
public interface LatencyRecorder {

    void record(Tier assigned, long latencyNanos);

    LatencyRecorder NONE = (tier, latencyNanos) -> { };
}
