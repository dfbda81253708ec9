package io.nexuscore.config;

import io.nexuscore.classify.Tier;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One tier's worker pool.
 *
 * @param engine           Wasm runtime for the guests
 * @param module           classpath resource of the guest module
 * @param model            model name reported in responses
 * @param instances        pre-instantiated guest instances (= worker threads)
 * @param queueCapacity    requests waiting for a worker before new ones get 503
 * @param memoryLimitBytes the guest's memory ceiling; growth past it traps
 * @param deadlineMs       per-call deadline; a guest still running is interrupted
 * @param cpus             CPUs the tier's worker threads are pinned to (empty: no pinning)
 * @param upstream         when present the tier forwards to this server instead of running guests
 * @param maxQueueWaitMs   a request still waiting for a worker (or an upstream connection) this long
 *                         gets 503 + Retry-After instead of a late answer
 * @param fallback         the tier that serves this tier's requests when its queue is full or none of
 *                         its upstream endpoints is admitted (one hop: the fallback's own fallback is
 *                         not followed)
 * @param eventLoopBudgetMs above 0: a request accepted on an event loop is answered by that loop's own
 *                         guest instance, no queue and no thread hop, and handed to the workers when the
 *                         call runs past this many ms (0: every call on the workers; Chicory only)
 */
public record TierConfig(
        Tier tier,
        Engine engine,
        String module,
        String model,
        int instances,
        int queueCapacity,
        long memoryLimitBytes,
        long deadlineMs,
        List<Integer> cpus,
        Optional<UpstreamConfig> upstream,
        long maxQueueWaitMs,
        Optional<Tier> fallback,
        long eventLoopBudgetMs) {

    public enum Engine { CHICORY, WASMTIME }

    public static final long WASM_PAGE = 65_536;
    /** wasm32 address space: 65,536 pages of 64 KiB. */
    public static final long WASM32_MAX_BYTES = 65_536L * WASM_PAGE;
    /** The longest eventLoopBudgetMs: an event loop stalls at most about this long for one call. */
    public static final long MAX_EVENT_LOOP_BUDGET_MS = 100;

    public TierConfig {
        cpus = List.copyOf(cpus);
        String f = "tiers." + tier.label();
        if (memoryLimitBytes % WASM_PAGE != 0) {
            throw new ConfigException(f + ".memoryLimitBytes must be a multiple of 65536 (a Wasm page), got " + memoryLimitBytes);
        }
        if (fallback.isPresent() && fallback.get() == tier) {
            throw new ConfigException(f + ".fallback names the tier itself");
        }
        if (eventLoopBudgetMs < 0 || eventLoopBudgetMs > MAX_EVENT_LOOP_BUDGET_MS) {
            throw new ConfigException(f + ".eventLoopBudgetMs must be within [0, " + MAX_EVENT_LOOP_BUDGET_MS + "], got "
                    + eventLoopBudgetMs);
        }
        if (eventLoopBudgetMs > 0 && engine != Engine.CHICORY && upstream.isEmpty()) {
            throw new ConfigException(f + ".eventLoopBudgetMs = " + eventLoopBudgetMs + " needs the chicory engine (calls on"
                    + " an event loop are stopped by interrupting its thread); set it to 0 or " + f + ".engine to \"chicory\"");
        }
        for (int cpu : cpus) {
            if (cpu < 0) {
                throw new ConfigException(f + ".cpus must hold CPU numbers >= 0, got " + cpu);
            }
        }
    }

    /** A tier with the default queue wait (its deadline) and no fallback. */
    public TierConfig(Tier tier, Engine engine, String module, String model, int instances, int queueCapacity,
                      long memoryLimitBytes, long deadlineMs, List<Integer> cpus, Optional<UpstreamConfig> upstream) {
        this(tier, engine, module, model, instances, queueCapacity, memoryLimitBytes, deadlineMs, cpus, upstream,
                deadlineMs, Optional.empty(), 0);
    }

    public long memoryLimitPages() {
        return memoryLimitBytes / WASM_PAGE;
    }

    static TierConfig from(Tier tier, Json json, TierConfig defaults) {
        json.allowOnly(Set.of("engine", "module", "model", "instances", "queueCapacity", "memoryLimitBytes",
                "deadlineMs", "cpus", "upstream", "maxQueueWaitMs", "fallback", "eventLoopBudgetMs"));
        long deadlineMs = json.number("deadlineMs", defaults.deadlineMs(), 1, 3_600_000);
        Engine engine = json.choice(Engine.class, "engine", defaults.engine().name());
        // The default budget goes with the default engine: a tier moved to wasmtime calls on its workers.
        long budgetMs = json.number("eventLoopBudgetMs", engine == Engine.CHICORY ? defaults.eventLoopBudgetMs() : 0,
                0, MAX_EVENT_LOOP_BUDGET_MS);
        return new TierConfig(
                tier,
                engine,
                json.string("module", defaults.module()),
                json.string("model", defaults.model()),
                json.integer("instances", defaults.instances(), 1, 1024),
                json.integer("queueCapacity", defaults.queueCapacity(), 1, 1_000_000),
                json.number("memoryLimitBytes", defaults.memoryLimitBytes(), WASM_PAGE, WASM32_MAX_BYTES),
                deadlineMs,
                json.integers("cpus", defaults.cpus()),
                json.has("upstream") ? Optional.of(UpstreamConfig.from(json.section("upstream"))) : defaults.upstream(),
                json.number("maxQueueWaitMs", json.has("deadlineMs") ? deadlineMs : defaults.maxQueueWaitMs(), 1, 3_600_000),
                fallback(json, defaults.fallback()),
                budgetMs);
    }

    private static Optional<Tier> fallback(Json json, Optional<Tier> fallback) {
        String label = json.string("fallback", fallback.map(Tier::label).orElse(null));
        if (label == null) {
            return Optional.empty();
        }
        for (Tier t : Tier.values()) {
            if (t.label().equals(label)) {
                return Optional.of(t);
            }
        }
        throw new ConfigException(json.field("fallback") + " must be nano, small or large, got '" + label + "'");
    }

    /**
     * nano's default eventLoopBudgetMs. Its guest answers in ~5 µs, but the budget is wall-clock time:
     * on this 2-core VM under c=64, 5 ms was overrun 4-5 times in 40 s (an event loop preempted or a
     * GC pause inside a call, each sending that loop's nano requests to the workers for 10 s), 20 ms
     * not once in 1.5M calls. A truly slow call stalls one loop ~40 ms at most (the budget plus a tick)
     * once per pause.
     */
    public static final long DEFAULT_NANO_EVENT_LOOP_BUDGET_MS = 20;

    /**
     * Built-in defaults: nano 64 MB on Chicory, called on the event loops within 20 ms; small 256 MB on
     * Chicory; large 4 GB on wasmtime.
     */
    public static TierConfig defaults(Tier tier) {
        return switch (tier) {
            case NANO -> new TierConfig(tier, Engine.CHICORY, "guests/nano.wasm", "nexus-nano", 8, 256,
                    64L << 20, 2_000, List.of(0), Optional.empty(), 2_000, Optional.empty(), DEFAULT_NANO_EVENT_LOOP_BUDGET_MS);
            case SMALL -> new TierConfig(tier, Engine.CHICORY, "guests/small.wasm", "nexus-small", 4, 128,
                    256L << 20, 10_000, List.of(1), Optional.empty(), 10_000, Optional.empty(), 0);
            case LARGE -> new TierConfig(tier, Engine.WASMTIME, "guests/large.wasm", "nexus-large", 2, 64,
                    WASM32_MAX_BYTES, 60_000, List.of(1), Optional.empty(), 30_000, Optional.empty(), 0);
        };
    }
}
