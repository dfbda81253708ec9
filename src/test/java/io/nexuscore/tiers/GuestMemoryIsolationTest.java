package io.nexuscore.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
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

    /** Records, for every handle call, whether the secret is anywhere in the instance's memory. */
    private static final class MemoryScanningEngine implements WasmEngine {
        final WasmEngine inner;
        final byte[] needle;
        final List<Boolean> handleCalls = new ArrayList<>();

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
