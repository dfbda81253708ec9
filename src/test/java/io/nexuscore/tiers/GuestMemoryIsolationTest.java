package io.nexuscore.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.ChicoryEngine;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One tenant's prompt cannot be read by the next request: at the moment the next request enters
 * the guest (its {@code handle} call, its own strings already written), the instance's whole memory
 * holds no trace of the previous prompt. Real guests, both engines, one instance so the two
 * requests share it.
 */
class GuestMemoryIsolationTest {

    @ParameterizedTest
    @EnumSource(TierConfig.Engine.class)
    void thePreviousTenantsPromptIsGoneWhenTheNextRequestRuns(TierConfig.Engine engineKind) throws Exception {
        String secret = "tenant-a-secret-" + UUID.randomUUID();
        MemoryScanningEngine engine = new MemoryScanningEngine(TestTiers.engine(engineKind),
                secret.getBytes(StandardCharsets.UTF_8));
        TierConfig config = TestTiers.config(Tier.NANO, engineKind, 1, 4, 64 * TestTiers.MB, 10_000);
        try (WasmTierPool pool = new WasmTierPool(config, engine, TestTiers.guest(Tier.NANO), new SimpleMeterRegistry())) {
            TestTiers.await(pool.submit(TestTiers.request("please keep this private: " + secret + " " + "x".repeat(500))));
            TestTiers.await(pool.submit(TestTiers.request("hi")));
            TestTiers.await(pool.submit(TestTiers.request("hi again")));
        }
        assertEquals(3, engine.handleCalls.size());
        assertTrue(engine.handleCalls.get(0), "the scan must see the prompt while its own request runs");
        assertEquals(List.of(false, false), engine.handleCalls.subList(1, 3),
                "a later request could read the previous tenant's prompt from guest memory");
    }

    /** The same on an event loop's own instance (a tier with eventLoopBudgetMs): each call resets it too. */
    @Test
    void onTheEventLoopThePreviousTenantsPromptIsGoneToo() throws Exception {
        String secret = "tenant-a-secret-" + UUID.randomUUID();
        MemoryScanningEngine engine = new MemoryScanningEngine(new ChicoryEngine(), secret.getBytes(StandardCharsets.UTF_8));
        // The longest budget: the scan of the whole memory runs inside the call and must not overrun it.
        TierConfig config = new TierConfig(Tier.NANO, TierConfig.Engine.CHICORY, "guests/nano.wasm", "test-nano", 1, 4,
                64 * TestTiers.MB, 10_000, List.of(), Optional.empty(), 10_000, Optional.empty(),
                TierConfig.MAX_EVENT_LOOP_BUDGET_MS);
        Vertx vertx = Vertx.vertx();
        try (WasmTierPool pool = new WasmTierPool(config, engine, TestTiers.guest(Tier.NANO), new SimpleMeterRegistry())) {
            Context loop = vertx.getOrCreateContext();
            while (pool.state().eventLoopCalls() == 0) { // the first requests go to the worker while the loop's instance builds
                TestTiers.await(TestTiers.onLoop(loop, () -> pool.submit(TestTiers.request("warm up"))));
                Thread.sleep(5);
            }
            int from = engine.handleCalls.size();
            long onLoop = pool.state().eventLoopCalls();
            for (String prompt : List.of("please keep this private: " + secret + " " + "x".repeat(500), "hi", "hi again")) {
                TestTiers.await(TestTiers.onLoop(loop, () -> pool.submit(TestTiers.request(prompt))));
            }
            assertEquals(onLoop + 3, pool.state().eventLoopCalls(), "all three ran on the event loop's instance");
            assertEquals(List.of(true, false, false), engine.handleCalls.subList(from, from + 3),
                    "a later request could read the previous tenant's prompt from the event loop's guest memory");
        } finally {
            vertx.close().await(30, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** Records, for every handle call, whether the secret is anywhere in the instance's memory. */
    private static final class MemoryScanningEngine implements WasmEngine {
        final WasmEngine inner;
        final byte[] needle;
        /** Appended by whichever thread calls (a worker, an event loop), one call at a time. */
        final List<Boolean> handleCalls = java.util.Collections.synchronizedList(new ArrayList<>());

        MemoryScanningEngine(WasmEngine inner, byte[] needle) {
            this.inner = inner;
            this.needle = needle;
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
                    return new Scanning(m.instantiate(id, maxMemoryPages));
                }
            };
        }

        @Override
        public void close() {
            inner.close();
        }

        private boolean contains(byte[] memory) {
            outer:
            for (int i = 0; i + needle.length <= memory.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (memory[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return true;
            }
            return false;
        }

        private final class Scanning implements CoreInstance {
            final CoreInstance inner;

            Scanning(CoreInstance inner) {
                this.inner = inner;
            }

            @Override
            public long call(Export export, long... args) throws GuestTrap {
                if (export == Export.HANDLE) {
                    handleCalls.add(contains(inner.read(0, inner.memoryPages() * (int) TierConfig.WASM_PAGE)));
                }
                return inner.call(export, args);
            }

            @Override
            public int id() {
                return inner.id();
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
            public <T> T withDeadline(long deadlineMs, Supplier<T> body) throws GuestTrap {
                return inner.withDeadline(deadlineMs, body);
            }

            @Override
            public void close() {
                inner.close();
            }
        }
    }
}
