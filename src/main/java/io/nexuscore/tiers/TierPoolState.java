package io.nexuscore.tiers;

import io.nexuscore.classify.Tier;

/**
 * A read-only snapshot of one Wasm tier pool, for the control plane ({@code GET /tiers}).
 *
 * @param engine           "chicory" or "wasmtime"
 * @param instances        instances the pool keeps (= worker threads)
 * @param instancesLive    instances ready or serving right now (lower while a trapped one is replaced)
 * @param busy             workers inside a guest call right now
 * @param queueDepth       requests waiting for a worker
 * @param queueCapacity    the queue's bound; beyond it submissions fail with QUEUE_FULL
 * @param memoryPages      64 KiB pages held by the live instances (each instance's high-water mark)
 * @param memoryLimitPages each instance's ceiling, in pages
 * @param completed        calls answered
 * @param failed           calls that ended in a trap, a deadline or a memory limit
 * @param rejected         submissions refused because the queue was full
 * @param pinned           whether every worker runs pinned to the tier's CPU set
 * @param eventLoopInstances instances owned by event loops (tiers with eventLoopBudgetMs above 0), not
 *                         counted in {@code instances} and {@code instancesLive}; their memory is in
 *                         {@code memoryPages}
 * @param eventLoopCalls   calls answered on event loops; {@code completed} and {@code failed} count the
 *                         workers' calls
 */
public record TierPoolState(
        Tier tier,
        String engine,
        int instances,
        int instancesLive,
        int busy,
        int queueDepth,
        int queueCapacity,
        long memoryPages,
        long memoryLimitPages,
        long completed,
        long failed,
        long rejected,
        boolean pinned,
        int eventLoopInstances,
        long eventLoopCalls) {
}
