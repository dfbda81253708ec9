package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A tier with eventLoopBudgetMs answers requests submitted on an event loop on that loop, with the
 * loop's own instance; a call past the budget goes to the workers; a trap is answered as on a worker.
 * Real Vert.x event loops, the real nano guest.
 */
class EventLoopGuestsTest {

    /** The longest budget, so that a slow first call (cold JIT, a 65 MB allocation) stays on the loop. */
    private static final long BUDGET_MS = TierConfig.MAX_EVENT_LOOP_BUDGET_MS;

    private Vertx vertx;
    private Context loop;
    private SimpleMeterRegistry registry;
    private WasmTierPool pool;

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        loop = vertx.getOrCreateContext();
        registry = new SimpleMeterRegistry();
        pool = WasmTierPool.start(nano(64 * MB), registry);
    }

    @AfterEach
    void stop() throws Exception {
        pool.close();
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    private static TierConfig nano(long memoryBytes) {
        return new TierConfig(Tier.NANO, TierConfig.Engine.CHICORY, "guests/nano.wasm", "test-nano", 2, 16, memoryBytes,
                2_000, List.of(), Optional.empty(), 2_000, Optional.empty(), BUDGET_MS);
    }

    /** What one submit on the event loop returned, and what the loop looked like right after it. */
    private record OnLoop(CompletableFuture<TierReply> reply, boolean settledAtReturn, boolean loopInterrupted) {
    }

    private OnLoop submitOnLoop(TierRequest request) throws Exception {
        return TestTiers.onLoop(loop, () -> {
            CompletableFuture<TierReply> reply = pool.submit(request);
            return new OnLoop(reply, reply.isDone(), Thread.currentThread().isInterrupted());
        });
    }

    private double loopCalls(String outcome) {
        return registry.get("nexus.tier.event_loop.calls").tag("tier", "nano").tag("outcome", outcome).counter().count();
    }

    /** Submits on the loop until its instance is built and answers there (the first go to the workers). */
    private void warmLoopGuest() throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (pool.state().eventLoopCalls() == 0) {
            assertTrue(System.nanoTime() < end, "the event loop's guest was never built");
            TestTiers.await(submitOnLoop(TestTiers.request("warm up")).reply());
            Thread.sleep(5);
        }
    }

    @Test
    void answersOnTheEventLoopWithTheLoopsOwnInstance() throws Exception {
        warmLoopGuest();
        long byWorkers = pool.state().completed();
        long onLoops = pool.state().eventLoopCalls();

        for (int i = 0; i < 20; i++) {
            OnLoop call = submitOnLoop(TestTiers.request("hello world " + i));
            assertTrue(call.settledAtReturn(), "answered before submit returned: no queue, no worker");
            TierReply reply = TestTiers.await(call.reply());
            assertEquals("[nano] summarize: hello world " + i, reply.text());
            assertEquals("test-nano", reply.model());
        }
        assertEquals(onLoops + 20, pool.state().eventLoopCalls());
        assertEquals(byWorkers, pool.state().completed(), "no worker took any of them");
        assertEquals(1, pool.state().eventLoopInstances());
        assertEquals(2, pool.state().instancesLive(), "the workers keep their own instances");
        assertEquals(20.0 + onLoops, loopCalls("answered"));
    }

    @Test
    void offTheEventLoopTheWorkersAnswer() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertEquals("[nano] summarize: hi", TestTiers.await(pool.submit(TestTiers.request("hi"))).text());
        }
        assertEquals(5, pool.state().completed());
        assertEquals(0, pool.state().eventLoopCalls());
        assertEquals(0, pool.state().eventLoopInstances(), "no event loop asked, none built");
    }

    @Test
    void aCallPastTheBudgetIsAnsweredByTheWorkersAndTheLoopPauses() throws Exception {
        warmLoopGuest();
        long byWorkers = pool.state().completed();

        // 400 ms of busy work: interrupted on the loop at the budget, then run whole on a worker.
        OnLoop slow = submitOnLoop(TestTiers.simulate(400, 0, false));
        assertFalse(slow.loopInterrupted(), "the deadline's interrupt does not outlive the call on the event loop");
        assertEquals("[nano] simulate: stress test", TestTiers.await(slow.reply()).text());
        assertEquals(1.0, loopCalls("over_budget"));
        assertEquals(byWorkers + 1, pool.state().completed(), "a worker answered it");
        assertEquals(0.0, registry.get("nexus.tier.traps").tag("tier", "nano").tag("kind", "deadline").counter().count(),
                "an overrun on the loop is not a deadline trap: the request was answered");

        // The loop now leaves the tier to the workers (paused), while its instance is rebuilt.
        long onLoops = pool.state().eventLoopCalls();
        assertEquals("[nano] summarize: next", TestTiers.await(submitOnLoop(TestTiers.request("next")).reply()).text());
        assertEquals(onLoops, pool.state().eventLoopCalls());
        assertEquals(byWorkers + 2, pool.state().completed());
        TestTiers.eventually(() -> pool.state().eventLoopInstances() == 1, "the loop's interrupted instance is rebuilt");
    }

    @Test
    void aTrapOnTheEventLoopIsAnsweredAsOnAWorker() throws Exception {
        // A 4 MB ceiling: growing Chicory's memory to 64 MB takes longer than the budget on this machine.
        pool.close();
        registry = new SimpleMeterRegistry();
        pool = WasmTierPool.start(nano(4 * MB), registry);
        warmLoopGuest();
        TierFailure onLoop = TestTiers.failureOf(submitOnLoop(TestTiers.simulate(0, 5 * MB, false)).reply());
        assertEquals(TierFailure.Kind.MEMORY_LIMIT, onLoop.kind(), onLoop.getMessage());
        assertEquals(1.0, loopCalls("failed"), () -> pool.state() + " over " + loopCalls("over_budget") + " " + onLoop.getMessage());
        assertEquals(0, pool.state().failed(), "no worker saw it");
        TierFailure onWorker = TestTiers.failureOf(pool.submit(TestTiers.simulate(0, 5 * MB, false)));
        assertEquals(onLoop.kind(), onWorker.kind());
        assertEquals(2.0, registry.get("nexus.tier.traps").tag("tier", "nano").tag("kind", "memory-limit").counter().count());

        TestTiers.eventually(() -> pool.state().eventLoopInstances() == 1, "the loop's trapped instance is rebuilt");
        long onLoops = pool.state().eventLoopCalls();
        OnLoop after = submitOnLoop(TestTiers.request("still here"));
        assertEquals("[nano] summarize: still here", TestTiers.await(after.reply()).text());
        assertTrue(after.settledAtReturn());
        assertEquals(onLoops + 1, pool.state().eventLoopCalls(), "a trap does not pause the loop: it is answered");
    }

    @Test
    void closingDiscardsTheLoopsInstances() throws Exception {
        warmLoopGuest();
        assertEquals(1, pool.state().eventLoopInstances());
        pool.close();
        assertEquals(0, pool.state().eventLoopInstances());
        TierFailure closed = TestTiers.failureOf(submitOnLoop(TestTiers.request("late")).reply());
        assertEquals(TierFailure.Kind.CLOSED, closed.kind());
    }
}
