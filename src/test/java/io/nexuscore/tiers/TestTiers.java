package io.nexuscore.tiers;

import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.ChicoryEngine;
import io.nexuscore.tiers.wasm.WasmEngine;
import io.nexuscore.tiers.wasm.WasmtimeEngine;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Shared helpers for the tier tests: configs, guest bytes, engines, waiting for futures. */
final class TestTiers {

    static final long MB = 1L << 20;

    private TestTiers() {
    }

    static TierConfig config(Tier tier, TierConfig.Engine engine, int instances, int queue, long memoryBytes, long deadlineMs) {
        return new TierConfig(tier, engine, "guests/" + tier.label() + ".wasm", "test-" + tier.label(), instances, queue,
                memoryBytes, deadlineMs, List.of(), Optional.empty());
    }

    static byte[] guest(Tier tier) {
        return WasmTierPool.loadModule(config(tier, TierConfig.Engine.CHICORY, 1, 1, 64 * MB, 1000));
    }

    static WasmEngine engine(TierConfig.Engine engine) {
        return switch (engine) {
            case CHICORY -> new ChicoryEngine();
            case WASMTIME -> new WasmtimeEngine();
        };
    }

    static TierRequest request(String prompt) {
        return new TierRequest("summarize", prompt, 0, TierRequest.Simulation.NONE);
    }

    static TierRequest simulate(int workMs, long allocateBytes, boolean spin) {
        return new TierRequest("simulate", "stress test", 0, new TierRequest.Simulation(workMs, allocateBytes, spin));
    }

    /** Waits (bounded, so a bug fails the test instead of hanging it) for a reply. */
    static TierReply await(CompletableFuture<TierReply> reply) throws Exception {
        return reply.get(120, TimeUnit.SECONDS);
    }

    /** The TierFailure a future failed with; fails when it succeeded or failed otherwise. */
    static TierFailure failureOf(CompletableFuture<TierReply> reply) throws InterruptedException, TimeoutException {
        try {
            TierReply r = reply.get(120, TimeUnit.SECONDS);
            throw new AssertionError("expected a TierFailure, got " + r);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TierFailure f) {
                return f;
            }
            throw new AssertionError("expected a TierFailure, got " + e.getCause(), e.getCause());
        }
    }

    /** Runs {@code body} on {@code loop}'s event loop thread and returns what it returned (bounded wait). */
    static <T> T onLoop(io.vertx.core.Context loop, Supplier<T> body) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.runOnContext(v -> {
            try {
                result.complete(body.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result.get(60, TimeUnit.SECONDS);
    }

    /** Polls a condition (bounded: 30 s) that becomes true asynchronously; fails with {@code what}. */
    static void eventually(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("never happened: " + what);
            }
            Thread.sleep(5);
        }
    }

    /** Repeats {@code words} copies of a word: a prompt of exactly that many tokens. */
    static String words(int words) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < words; i++) {
            b.append(i == 0 ? "" : " ").append("w").append(i);
        }
        return b.toString();
    }
}
