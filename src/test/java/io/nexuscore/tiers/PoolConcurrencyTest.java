package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.TierConfig.Engine;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Many threads hammering one pool: no instance is ever entered by two threads (checked by a probe
 * wrapped around every instance, independent of the pool's own bookkeeping), and no request is lost:
 * every future completes, the counts add up. A full queue fails fast and loses nothing either.
 */
class PoolConcurrencyTest {

    /** Wraps an engine so that every instance records who enters it and whether two threads overlap. */
    static final class ProbeEngine implements WasmEngine {
        final WasmEngine inner;
        final AtomicLong overlaps = new AtomicLong();
        final AtomicLong calls = new AtomicLong();
        final Map<Integer, Thread> owners = new ConcurrentHashMap<>();
        final AtomicLong foreignThreads = new AtomicLong();

        ProbeEngine(WasmEngine inner) {
            this.inner = inner;
        }

        @Override
        public String name() {
            return inner.name();
        }

        @Override
        public int maxMemoryPages() {
            return inner.maxMemoryPages();
        }

        @Override
        public GuestModule compile(String name, byte[] wasm) {
            GuestModule m = inner.compile(name, wasm);
            return new GuestModule() {
                @Override
                public String name() {
                    return m.name();
                }

                @Override
                public CoreInstance instantiate(int id, int maxMemoryPages) {
                    return new Probe(m.instantiate(id, maxMemoryPages));
                }
            };
        }

        @Override
        public void interruptAll() {
            inner.interruptAll();
        }

        @Override
        public void close() {
            inner.close();
        }

        final class Probe implements CoreInstance {
            final CoreInstance inner;
            final AtomicInteger inside = new AtomicInteger();

            Probe(CoreInstance inner) {
                this.inner = inner;
            }

            @Override
            public <T> T withDeadline(long deadlineMs, Supplier<T> body) {
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                // Instantiation happens on the pool's thread; from the first call on, one thread owns it.
                Thread owner = owners.computeIfAbsent(inner.id(), id -> Thread.currentThread());
                if (owner != Thread.currentThread()) {
                    foreignThreads.incrementAndGet();
                }
                calls.incrementAndGet();
                try {
                    Thread.yield(); // widen the window in which a second thread would be caught
                    return inner.withDeadline(deadlineMs, body);
                } finally {
                    inside.decrementAndGet();
                }
            }

            @Override
            public int id() {
                return inner.id();
            }

            @Override
            public long call(Export export, long... args) throws GuestTrap {
                return inner.call(export, args);
            }

            @Override
            public void write(int address, byte[] bytes) throws GuestTrap {
                inner.write(address, bytes);
            }

            @Override
            public byte[] read(int address, int length) throws GuestTrap {
                return inner.read(address, length);
            }

            @Override
            public void restore(byte[] image) throws GuestTrap {
                inner.restore(image);
            }

            @Override
            public int memoryPages() {
                return inner.memoryPages();
            }

            @Override
            public int maxMemoryPages() {
                return inner.maxMemoryPages();
            }

            @Override
            public void close() {
                inner.close();
            }
        }
    }

    private static WasmTierPool pool(ProbeEngine engine, int instances, int queue, SimpleMeterRegistry registry) {
        TierConfig config = TestTiers.config(Tier.NANO, engine.inner instanceof io.nexuscore.tiers.wasm.ChicoryEngine
                ? Engine.CHICORY : Engine.WASMTIME, instances, queue, 16 * MB, 10_000);
        return new WasmTierPool(config, engine, TestTiers.guest(Tier.NANO), registry);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void manyThreadsNeverShareAnInstanceAndNeverLoseARequest(Engine kind) throws Exception {
        ProbeEngine engine = new ProbeEngine(TestTiers.engine(kind));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        int threads = 16;
        int perThread = 250;
        try (WasmTierPool pool = pool(engine, 4, threads * perThread, registry)) {
            List<CompletableFuture<TierReply>> replies = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> clients = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int client = t;
                Thread th = new Thread(() -> {
                    List<CompletableFuture<TierReply>> mine = new ArrayList<>();
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < perThread; i++) {
                        // One request in 125 allocates past the ceiling and traps, so instances are
                        // replaced while the others serve.
                        TierRequest r = i % 125 == 124 ? TestTiers.simulate(0, 32 * MB, false)
                                : TestTiers.request("client " + client + " request " + i);
                        mine.add(pool.submit(r));
                    }
                    synchronized (replies) {
                        replies.addAll(mine);
                    }
                });
                clients.add(th);
                th.start();
            }
            start.countDown();
            for (Thread th : clients) {
                th.join();
            }
            int ok = 0;
            int memory = 0;
            for (CompletableFuture<TierReply> r : replies) {
                try {
                    TierReply reply = r.get(120, TimeUnit.SECONDS);
                    assertTrue(reply.text().startsWith("[nano] summarize: client "), reply.text());
                    assertEquals(6, reply.promptTokens()); // cl100k: client, " ", N, " request", " ", M
                    ok++;
                } catch (ExecutionException e) {
                    TierFailure f = (TierFailure) e.getCause();
                    assertEquals(TierFailure.Kind.MEMORY_LIMIT, f.kind(), f.getMessage());
                    memory++;
                }
            }
            int total = threads * perThread;
            assertEquals(total, replies.size());
            assertEquals(total / 125, memory, "exactly the runaway requests failed");
            assertEquals(total - total / 125, ok);
            assertEquals(0, engine.overlaps.get(), "an instance was entered by two threads at once");
            assertEquals(0, engine.foreignThreads.get(), "an instance was called from two threads");
            assertEquals(0, pool.sharedUseViolations());
            assertEquals(total, engine.calls.get());
            TierPoolState state = pool.state();
            assertEquals(total - memory, state.completed());
            assertEquals(memory, state.failed());
            assertEquals(0, state.rejected());
            assertEquals(total, registry.get("nexus.tier.queue.wait").timer().count());
        }
    }

    @Test
    void fullQueueFailsFastAndLosesNothing() throws Exception {
        ProbeEngine engine = new ProbeEngine(TestTiers.engine(Engine.CHICORY));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (WasmTierPool pool = pool(engine, 1, 4, registry)) {
            // Occupy the only worker, then fill the queue behind it.
            CompletableFuture<TierReply> blocker = pool.submit(TestTiers.simulate(2_000, 0, false));
            TestTiers.eventually(() -> pool.state().busy() == 1 && pool.state().queueDepth() == 0, "the worker takes the blocker");
            List<CompletableFuture<TierReply>> queued = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                queued.add(pool.submit(TestTiers.request("queued " + i)));
            }
            assertEquals(4, pool.state().queueDepth());
            List<CompletableFuture<TierReply>> refused = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                refused.add(pool.submit(TestTiers.request("refused " + i)));
            }
            for (CompletableFuture<TierReply> r : refused) {
                assertTrue(r.isDone(), "a full queue answers at once");
                assertEquals(TierFailure.Kind.QUEUE_FULL, TestTiers.failureOf(r).kind());
            }
            assertEquals(3.0, registry.get("nexus.tier.rejected").counter().count());
            assertEquals(3, pool.state().rejected());

            TestTiers.await(blocker);
            for (int i = 0; i < 4; i++) {
                assertEquals("[nano] summarize: queued " + i, TestTiers.await(queued.get(i)).text());
            }
            assertEquals(5, pool.state().completed());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Engine.class)
    void closeStopsTheRunningCallAndFailsQueuedRequestsWithClosed(Engine kind) throws Exception {
        ProbeEngine engine = new ProbeEngine(TestTiers.engine(kind));
        WasmTierPool pool = pool(engine, 1, 8, new SimpleMeterRegistry());
        CompletableFuture<TierReply> running = pool.submit(TestTiers.simulate(0, 0, true));
        TestTiers.eventually(() -> pool.state().busy() == 1, "the worker takes the spinning request");
        List<CompletableFuture<TierReply>> queued = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            queued.add(pool.submit(TestTiers.request("queued " + i)));
        }
        // The deadline is 10 s away: close() itself stops the spinning guest (for wasmtime by
        // advancing the engine's epoch past every deadline).
        pool.close();
        for (CompletableFuture<TierReply> q : queued) {
            assertEquals(TierFailure.Kind.CLOSED, TestTiers.failureOf(q).kind());
        }
        assertEquals(TierFailure.Kind.CLOSED, TestTiers.failureOf(running).kind());
        assertEquals(TierFailure.Kind.CLOSED, TestTiers.failureOf(pool.submit(TestTiers.request("late"))).kind());
    }
}
