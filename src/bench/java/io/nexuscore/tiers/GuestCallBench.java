package io.nexuscore.tiers;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.ChicoryEngine;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestTrap;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;

/**
 * CPU per nano guest call as an event loop makes it (the call under its budget, then the memory put
 * back to its image), in process on one thread: the guest's share of a Wasm nano request without the
 * network's noise. Lives in the tiers package to reach {@link GuestCalls}.
 *
 * <p>Usage: GuestCallBench [ROUNDS] [CALLS_PER_ROUND]; one line per round, then the median.
 */
public final class GuestCallBench {

    private GuestCallBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        TierConfig config = TierConfig.defaults(Tier.NANO);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Map<GuestTrap.Kind, Counter> traps = new EnumMap<>(GuestTrap.Kind.class);
        for (GuestTrap.Kind kind : GuestTrap.Kind.values()) {
            traps.put(kind, registry.counter("traps", "kind", kind.name()));
        }
        Timer timer = registry.timer("calls");
        try (ChicoryEngine engine = new ChicoryEngine(20)) {
            GuestCalls guests = new GuestCalls(config, engine.compile(config.module(), WasmTierPool.loadModule(config)),
                    timer, timer, traps);
            CoreInstance instance = guests.instantiate();
            if (!guests.warmUp(instance, "bench")) {
                throw new IllegalStateException("the nano guest failed its warm-up");
            }
            TierRequest request = TierRequest.of("chat", "Say hello in five words.");
            long[] ns = new long[rounds];
            long sink = 0;
            for (int round = 0; round < rounds; round++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    sink += guests.call(instance, request, config.deadlineMs()).promptTokens();
                    if (!guests.reset(instance, "bench")) {
                        throw new IllegalStateException("reset failed");
                    }
                }
                ns[round] = (System.nanoTime() - t0) / calls;
                System.out.printf("round %d: call + reset %d ns%n", round + 1, ns[round]);
            }
            long[] sorted = ns.clone();
            Arrays.sort(sorted);
            System.out.printf("median of %d rounds (the first ones warm the JIT up): call + reset %d ns (checksum %d)%n",
                    rounds, sorted[rounds / 2], sink);
            instance.close();
        }
    }
}
