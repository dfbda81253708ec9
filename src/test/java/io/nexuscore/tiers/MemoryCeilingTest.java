package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.ConfigException;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.TierConfig.Engine;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestAbi;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A guest that allocates without bound traps exactly at its tier's ceiling, the trap is reported as
 * MEMORY_LIMIT (not a generic trap), and the pool recovers. The allocation is real: the guest writes
 * into every 64 KiB chunk and reads them back, and the memory size at the trap equals the ceiling.
 */
class MemoryCeilingTest {

    /** The default tier ceilings (nano 64 MB, small 256 MB, large 4 GiB) on the engines that can hold them. */
    static Stream<Arguments> ceilings() {
        return Stream.of(
                Arguments.of(Tier.NANO, Engine.CHICORY, 64 * MB),
                Arguments.of(Tier.NANO, Engine.WASMTIME, 64 * MB),
                Arguments.of(Tier.SMALL, Engine.CHICORY, 256 * MB),
                Arguments.of(Tier.SMALL, Engine.WASMTIME, 256 * MB),
                Arguments.of(Tier.LARGE, Engine.WASMTIME, TierConfig.WASM32_MAX_BYTES));
    }

    @ParameterizedTest(name = "{0} on {1}: ceiling {2} bytes")
    @MethodSource("ceilings")
    void runawayAllocationTrapsAtTheCeilingAndThePoolRecovers(Tier tier, Engine engine, long ceiling) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TierConfig config = TestTiers.config(tier, engine, 2, 8, ceiling, 120_000);
        try (WasmTierPool pool = WasmTierPool.start(config, registry)) {
            TierFailure failure = TestTiers.failureOf(pool.submit(TestTiers.simulate(0, ceiling + MB, false)));
            assertEquals(TierFailure.Kind.MEMORY_LIMIT, failure.kind(), failure.getMessage());
            GuestTrap trap = (GuestTrap) failure.getCause();
            assertEquals(ceiling / TierConfig.WASM_PAGE, trap.memoryPages(), "memory size at the trap, in pages");
            assertEquals(1.0, registry.get("nexus.tier.traps").tag("tier", tier.label()).tag("kind", "memory-limit").counter().count());

            // Recovered: answers again, with all instances back.
            TierReply reply = TestTiers.await(pool.submit(TestTiers.request("still alive")));
            assertEquals(2, reply.promptTokens());
            TestTiers.eventually(() -> pool.state().instancesLive() == 2, "the trapped instance is replaced");
        }
    }

    /** Just under the ceiling is fine: the limit is the ceiling, not something smaller. */
    @ParameterizedTest(name = "{0} on {1}: ceiling {2} bytes")
    @MethodSource("ceilings")
    void allocationJustUnderTheCeilingSucceeds(Tier tier, Engine engine, long ceiling) {
        try (WasmEngine e = TestTiers.engine(engine);
             CoreInstance instance = e.compile(tier.label(), TestTiers.guest(tier))
                     .instantiate(1, (int) (ceiling / TierConfig.WASM_PAGE))) {
            // The guest's static data (the cl100k tables, ~1.3 MiB) and stack take the first pages;
            // leave it 1 MiB of headroom beyond them.
            long bytes = ceiling - 4 * MB;
            GuestAbi.GuestAnswer answer = instance.withDeadline(120_000, () -> GuestAbi.call(instance, TestTiers.simulate(0, bytes, false)));
            assertTrue(answer.text().contains("[touched "), answer.text());
            long pages = instance.memoryPages();
            assertTrue(pages * TierConfig.WASM_PAGE >= bytes, "memory grew to hold the allocation: " + pages + " pages");
            if (ceiling > (1L << 31)) {
                // wasmtime really holds a memory past 2 GiB (more than any Java array).
                assertTrue(pages > 32_768, "grew past 2 GiB: " + pages + " pages");
            }
        }
    }

    @Test
    void chicoryRefusesACeilingItCannotHold() {
        TierConfig tooBig = new TierConfig(Tier.LARGE, Engine.CHICORY, "guests/large.wasm", "m", 1, 1,
                32_768L * TierConfig.WASM_PAGE, 1000, List.of(), Optional.empty());
        ConfigException e = assertThrows(ConfigException.class, () -> TierPools.create(Map.of(Tier.LARGE, tooBig), new SimpleMeterRegistry()));
        assertTrue(e.getMessage().contains("tiers.large.memoryLimitBytes"), e.getMessage());
        assertTrue(e.getMessage().contains("32767 pages = 2147418112 bytes"), e.getMessage());

        // 32767 pages is the largest Chicory accepts (not started: that would allocate 2 GiB lazily anyway).
        WasmTierPool.checkFits(new TierConfig(Tier.LARGE, Engine.CHICORY, "guests/large.wasm", "m", 1, 1,
                32_767L * TierConfig.WASM_PAGE, 1000, List.of(), Optional.empty()));
    }
}
