package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nexuscore.kernel.maps.AdaptiveControl;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.limits.TenantLimitStore;
import io.nexuscore.tenants.limits.TenantLimits;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Tenant limits travel with the fleet's policy document like tenant floors and keys do. */
class PolicyLimitsTest {

    private static final TenantLimits RPM_30 = new TenantLimits(30, 0, 0, 0);

    private static PolicyContent content(Map<String, TenantLimits> limits) {
        return PolicyContent.of(Thresholds.DEFAULT, Map.of(), Map.of(), Optional.empty(), limits);
    }

    @Test
    void limitsRoundTripThroughTheDocumentAndADocumentWithoutThemHasNone() {
        PolicyDoc doc = new PolicyDoc(3, "a", PolicyDoc.CAUSE_API, 1, 0, content(Map.of("t1", RPM_30)));
        assertEquals(doc, PolicyDoc.decode(doc.encode()));
        JsonObject older = doc.toJson();
        older.remove("limits");
        assertEquals(Map.of(), PolicyDoc.decode(older.encode()).content().limits());
    }

    @Test
    void aDocumentWithABadLimitIsRefusedWhole() {
        JsonObject json = new PolicyDoc(3, "a", PolicyDoc.CAUSE_API, 1, 0, content(Map.of("t1", RPM_30))).toJson();
        json.getJsonObject("limits").getJsonObject("t1").put("requests_per_minute", -5);
        assertThrows(IllegalArgumentException.class, () -> PolicyDoc.decode(json.encode()));
        json.getJsonObject("limits").put("bad id!", RPM_30.toJson());
        json.getJsonObject("limits").remove("t1");
        assertThrows(IllegalArgumentException.class, () -> PolicyDoc.decode(json.encode()));
    }

    @Test
    void aDeltaCarriesSetChangedAndRemovedLimitsAndTheRouterAppliesThem() {
        PolicyContent before = content(Map.of("a", RPM_30, "b", RPM_30));
        PolicyContent after = content(Map.of("a", new TenantLimits(10, 0, 0, 0), "c", RPM_30));
        PolicyDelta delta = before.deltaTo(after);
        assertEquals(Map.of("a", new TenantLimits(10, 0, 0, 0), "b", TenantLimits.NONE, "c", RPM_30), delta.limits());
        assertEquals(after, before.with(delta));

        TenantLimitStore store = TenantLimitStore.inMemory();
        store.put("a", RPM_30);
        store.put("b", RPM_30);
        RouterLocalPolicy local = new RouterLocalPolicy(new InMemoryThresholdStore(Thresholds.DEFAULT),
                new PrefixTenantPolicies(new InMemoryPrefixFloors()), TenantKeys.inMemory(),
                AdaptiveControl.NOT_IN_KERNEL_MODE, store);
        LocalPolicy.State seen = local.read();
        assertEquals(before.limits(), seen.content().limits());
        store.put("b", new TenantLimits(5, 0, 0, 0)); // a PUT landing mid-sync keeps its write
        local.apply(delta, seen);
        assertEquals(Map.of("a", new TenantLimits(10, 0, 0, 0), "b", new TenantLimits(5, 0, 0, 0), "c", RPM_30),
                store.list());
    }
}
