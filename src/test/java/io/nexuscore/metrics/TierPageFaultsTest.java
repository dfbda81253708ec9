package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.nexuscore.tiers.WasmTierPool;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** A real guest that grows its memory moves its tier's page-fault counter, and no other tier's. */
class TierPageFaultsTest {

    private static final long MB = 1L << 20;

    @ParameterizedTest
    @EnumSource(TierConfig.Engine.class)
    void aGuestGrowingItsMemoryMovesItsTiersPageFaults(TierConfig.Engine engine) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TierConfig config = new TierConfig(Tier.SMALL, engine, "guests/small.wasm", "test-small", 1, 4,
                256 * MB, 30_000, List.of(), Optional.empty());
        try (WasmTierPool pool = WasmTierPool.start(config, registry);
             TierPageFaults faults = new TierPageFaults().bindTo(registry)) {
            faults.refresh();
            long before = faults.faults(Tier.SMALL, TierPageFaults.Kind.MINOR);
            long nanoBefore = faults.faults(Tier.NANO, TierPageFaults.Kind.MINOR);

            // 48 MiB grown and touched by the guest: 12,288 fresh 4 KiB pages (Chicory: a new Java array).
            TierReply reply = pool.submit(new TierRequest("simulate", "grow", 0,
                    new TierRequest.Simulation(0, 48 * MB, false))).get(120, TimeUnit.SECONDS);
            assertTrue(reply.text().contains("grow") || !reply.text().isEmpty(), "the guest answered");
            faults.refresh();

            long grown = faults.faults(Tier.SMALL, TierPageFaults.Kind.MINOR) - before;
            // At least one fault per 2 MiB: transparent huge pages can back wasmtime's mmap'ed memory.
            assertTrue(grown >= 48 / 2, engine + ": minor faults of the small worker while its guest grew 48 MiB: " + grown);
            assertEquals(nanoBefore, faults.faults(Tier.NANO, TierPageFaults.Kind.MINOR), "no nano worker ran");
            double meter = registry.get("nexus.tier.page.faults").tag("tier", "small").tag("kind", "minor")
                    .functionCounter().count();
            assertEquals(faults.faults(Tier.SMALL, TierPageFaults.Kind.MINOR), (long) meter, "the meter reads the totals");
        }
    }

    @Test
    void statAndThreadNamesParse() {
        String stat = "4242 (tier-small-work) S 1 2 3 0 -1 4194560 1234 0 56 0 10 5 0 0 20 0 1 0 100 0 0";
        assertArrayEquals(new long[] {1234, 56}, TierPageFaults.faultsFromStat(stat));
        String odd = "7 (a) b (c)) R 1 2 3 0 -1 0 99 0 7 0";
        assertArrayEquals(new long[] {99, 7}, TierPageFaults.faultsFromStat(odd));
        assertEquals(Optional.of(Tier.SMALL), TierPageFaults.tierOf("tier-small-work"));
        assertEquals(Optional.of(Tier.NANO), TierPageFaults.tierOf("tier-nano-worker"));
        assertEquals(Optional.empty(), TierPageFaults.tierOf("vert.x-eventloo"));
    }
}
