package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.tenants.TenantFloors;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.json.JsonObject;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The one record the data plane is built from: its defaults, its withers, what it refuses. */
class DataPlaneDependenciesTest {

    private record NoTier(Tier tier) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            return new CompletableFuture<>();
        }

        @Override
        public void close() {
        }
    }

    private final DataPlaneConfig config = RouterConfig.fromJson(new JsonObject()
            .put("kernel", new JsonObject().put("mode", "user"))).dataPlane();
    private final DataPlaneMetrics metrics = new DataPlaneMetrics(new SimpleMeterRegistry());

    private TierResolver resolver(ReadCost reads) {
        return new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, reads, metrics);
    }

    private static Map<Tier, TierBackend> backends() {
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new NoTier(tier));
        }
        return backends;
    }

    private DataPlaneDependencies userSpace() {
        return DataPlaneDependencies.of(config, resolver(ReadCost.MEMORY), backends(), Map.of(), metrics,
                EventSink.DISCARD, LatencyRecorder.NONE, null);
    }

    @Test
    void ofLeavesTheOptionalPartsAtTheirDefaults() {
        DataPlaneDependencies deps = userSpace();
        assertSame(TenantFloors.NONE, deps.floors());
        assertEquals(Map.of(), deps.fallbacks());
        assertTrue(deps.keys().tenantOf("any key").isEmpty());
        assertSame(RequestTracing.OFF, deps.tracing());
        assertSame(ApiTargets.NONE, deps.targets());
    }

    @Test
    void eachWitherReplacesItsOwnPartAndKeepsTheRest() {
        DataPlaneDependencies deps = userSpace();
        Map<Tier, Tier> fallbacks = Map.of(Tier.NANO, Tier.SMALL);
        TenantKeys keys = TenantKeys.inMemory();
        DataPlaneDependencies changed = deps.withFallbacks(fallbacks).withKeys(keys);
        assertEquals(fallbacks, changed.fallbacks());
        assertSame(keys, changed.keys());
        assertNotEquals(deps, changed);
        // Given back what it had, each wither yields the same record: none drops or swaps another part.
        assertEquals(deps, changed.withFallbacks(deps.fallbacks()).withKeys(deps.keys()));
        assertEquals(deps, deps.withFloors(deps.floors()).withTracing(deps.tracing()).withTargets(deps.targets()));
    }

    @Test
    void aBlockingResolverNeedsAWorkerPool() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataPlaneDependencies.of(
                config, resolver(ReadCost.SYSCALL), backends(), Map.of(), metrics, EventSink.DISCARD,
                LatencyRecorder.NONE, null));
        assertTrue(e.getMessage().contains("worker pool"), e.getMessage());
    }

    @Test
    void everyTierNeedsABackend() {
        Map<Tier, TierBackend> backends = backends();
        backends.remove(Tier.SMALL);
        NullPointerException e = assertThrows(NullPointerException.class, () -> new DataPlaneHandler(
                DataPlaneDependencies.of(config, resolver(ReadCost.MEMORY), backends, Map.of(), metrics,
                        EventSink.DISCARD, LatencyRecorder.NONE, null)));
        assertEquals("no backend for tier " + Tier.SMALL.label(), e.getMessage());
    }
}
