package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig.Engine;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A guest that never returns is stopped at the tier's deadline on both engines; the pool recovers. */
class DeadlineTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void infiniteLoopIsInterruptedAtTheDeadline(Engine engine) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (WasmTierPool pool = WasmTierPool.start(TestTiers.config(Tier.SMALL, engine, 2, 8, 64 * MB, 200), registry)) {
            TierFailure spin = TestTiers.failureOf(pool.submit(TestTiers.simulate(0, 0, true)));
            assertEquals(TierFailure.Kind.DEADLINE, spin.kind(), spin.getMessage());
            assertEquals(GuestTrap.Kind.DEADLINE, ((GuestTrap) spin.getCause()).kind());

            // Busy work (calling the host clock in a loop) past the deadline is stopped the same way.
            TierFailure busy = TestTiers.failureOf(pool.submit(TestTiers.simulate(60_000, 0, false)));
            assertEquals(TierFailure.Kind.DEADLINE, busy.kind(), busy.getMessage());

            assertEquals(2.0, registry.get("nexus.tier.traps").tag("kind", "deadline").counter().count());
            TestTiers.eventually(() -> pool.state().instancesLive() == 2, "both interrupted instances are replaced");
            // Work under the deadline completes, on fresh instances.
            for (int i = 0; i < 4; i++) {
                TierReply ok = TestTiers.await(pool.submit(TestTiers.simulate(5, 0, false)));
                assertEquals("[small] simulate: stress test", ok.text());
            }
            assertEquals(2, pool.state().failed());
        }
    }

    /** A tier's engine ticks at a twentieth of its deadline, so a long deadline uses the coarsest tick. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void aCoarseTickStillStopsTheGuest(Engine engine) throws Exception {
        long deadlineMs = 1_200; // a twentieth is 60 ms: the tick is the coarsest, 50 ms
        assertEquals(WasmEngine.COARSEST_DEADLINE_TICK_MS, WasmEngine.deadlineTickMs(deadlineMs));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (WasmTierPool pool = WasmTierPool.start(TestTiers.config(Tier.SMALL, engine, 1, 8, 64 * MB, deadlineMs), registry)) {
            TierFailure spin = TestTiers.failureOf(pool.submit(TestTiers.simulate(0, 0, true)));
            assertEquals(TierFailure.Kind.DEADLINE, spin.kind(), spin.getMessage());
            TierReply ok = TestTiers.await(pool.submit(TestTiers.simulate(5, 0, false)));
            assertEquals("[small] simulate: stress test", ok.text());
        }
    }

    @Test
    void theTickIsATwentiethOfTheDeadlineBetweenTheBounds() {
        assertEquals(2, WasmEngine.deadlineTickMs(0));
        assertEquals(2, WasmEngine.deadlineTickMs(39));
        assertEquals(10, WasmEngine.deadlineTickMs(200));
        assertEquals(50, WasmEngine.deadlineTickMs(2_000)); // nano's default
        assertEquals(50, WasmEngine.deadlineTickMs(60_000)); // large's default
    }
}
