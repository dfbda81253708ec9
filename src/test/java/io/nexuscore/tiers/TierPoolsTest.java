package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.UpstreamConfig;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The factory Main calls, the metrics each pool registers, and CPU pinning. */
class TierPoolsTest {

    @Test
    void defaultConfigStartsAllThreeTiersAndEachAnswers() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // The embedded defaults (nano 8 x 64 MB chicory, small 4 x 256 MB chicory, large 2 x 4 GiB wasmtime),
        // with fewer instances to keep the test light.
        JsonObject overrides = new JsonObject().put("tiers", new JsonObject()
                .put("nano", new JsonObject().put("instances", 2))
                .put("small", new JsonObject().put("instances", 2)));
        Path file = Files.createTempFile("nexuscore", ".json");
        try {
            Files.writeString(file, overrides.encode());
            RouterConfig config = RouterConfig.load(Optional.of(file));
            Map<Tier, TierBackend> pools = TierPools.create(config, registry);
            try {
                assertEquals(3, pools.size());
                for (Tier tier : Tier.values()) {
                    TierReply reply = TestTiers.await(pools.get(tier).submit(TestTiers.request("what is two plus two")));
                    assertEquals("[" + tier.label() + "] summarize: what is two plus two", reply.text());
                    assertEquals(Tier.NANO, reply.observedTier());
                    assertEquals("nexus-" + tier.label(), reply.model());
                    TierPoolState state = pools.get(tier).poolState().orElseThrow();
                    assertEquals(tier, state.tier());
                    assertEquals(config.tier(tier).memoryLimitPages(), state.memoryLimitPages());
                    assertEquals(1, state.completed());
                }
                assertEquals("wasmtime", pools.get(Tier.LARGE).poolState().orElseThrow().engine());
                assertEquals("chicory", pools.get(Tier.NANO).poolState().orElseThrow().engine());

                // Metrics, tagged by tier (Prometheus names: nexus_tier_queue_wait_seconds, ...).
                assertEquals(1, registry.get("nexus.tier.queue.wait").tag("tier", "small").timer().count());
                assertEquals(1, registry.get("nexus.tier.call").tag("tier", "large").timer().count());
                // The guest time is a histogram (aggregatable buckets), its call in the 10 s bucket.
                io.micrometer.core.instrument.distribution.CountAtBucket[] buckets =
                        registry.get("nexus.tier.call").tag("tier", "large").timer().takeSnapshot().histogramCounts();
                assertEquals(21, buckets.length);
                assertEquals(1.0, buckets[buckets.length - 1].count());
                assertEquals(2, registry.get("nexus.tier.instantiate").tag("tier", "nano").timer().count());
                assertEquals(2.0, registry.get("nexus.tier.instances.live").tag("tier", "large").gauge().value());
                assertTrue(registry.get("nexus.tier.memory.pages").tag("tier", "nano").gauge().value() >= 2 * 2);
                assertEquals(0.0, registry.get("nexus.tier.queue.depth").tag("tier", "nano").gauge().value());
                assertEquals(0.0, registry.get("nexus.tier.rejected").tag("tier", "nano").counter().count());
            } finally {
                pools.values().forEach(TierBackend::close);
            }
            assertTrue(registry.find("nexus.tier.queue.depth").gauges().isEmpty(), "closed pools remove their meters");
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void tiersWithAnUpstreamGetNoPool() {
        Map<Tier, TierConfig> tiers = new EnumMap<>(Tier.class);
        tiers.put(Tier.NANO, TestTiers.config(Tier.NANO, TierConfig.Engine.CHICORY, 1, 4, 16 * MB, 1000));
        TierConfig large = TierConfig.defaults(Tier.LARGE);
        UpstreamConfig upstream = new UpstreamConfig(java.net.URI.create("http://127.0.0.1:9/v1"), "m", 1000, Optional.empty());
        tiers.put(Tier.LARGE, new TierConfig(Tier.LARGE, large.engine(), large.module(), large.model(), 1, 1,
                large.memoryLimitBytes(), large.deadlineMs(), List.of(), Optional.of(upstream)));
        Map<Tier, TierBackend> pools = TierPools.create(tiers, new SimpleMeterRegistry());
        try {
            assertEquals(java.util.Set.of(Tier.NANO), pools.keySet());
        } finally {
            pools.values().forEach(TierBackend::close);
        }
    }

    @Test
    void workersPinToTheTierCpusAndSkipCpusThisMachineLacks() throws Exception {
        int cpu = CpuAffinity.onlineCpus().nextSetBit(0);
        TierConfig onCpu = new TierConfig(Tier.NANO, TierConfig.Engine.CHICORY, "guests/nano.wasm", "m", 1, 4,
                16 * MB, 1000, List.of(cpu), Optional.empty());
        try (WasmTierPool pool = WasmTierPool.start(onCpu, new SimpleMeterRegistry())) {
            TestTiers.await(pool.submit(TestTiers.request("hi")));
            // The worker pins itself before it takes work, so after one answer it is pinned.
            assertTrue(pool.state().pinned());
        }
        TierConfig absent = new TierConfig(Tier.NANO, TierConfig.Engine.CHICORY, "guests/nano.wasm", "m", 1, 4,
                16 * MB, 1000, List.of(4095), Optional.empty());
        try (WasmTierPool pool = WasmTierPool.start(absent, new SimpleMeterRegistry())) {
            assertEquals("[nano] summarize: hi", TestTiers.await(pool.submit(TestTiers.request("hi"))).text());
            assertFalse(pool.state().pinned());
        }

        // The call itself, on this thread: the kernel's view afterwards is exactly that CPU.
        Thread t = new Thread(() -> {
            assertTrue(CpuAffinity.usable(List.of(cpu), "test thread"));
            CpuAffinity.pinCurrentThread(List.of(cpu), "test thread");
            try {
                String status = Files.readString(Path.of("/proc/thread-self/status"));
                String allowed = status.lines().filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst().orElseThrow();
                assertEquals(String.valueOf(cpu), allowed.substring(allowed.indexOf(':') + 1).trim());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        t.setUncaughtExceptionHandler((th, e) -> failure.set(e));
        t.start();
        t.join();
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }
}
