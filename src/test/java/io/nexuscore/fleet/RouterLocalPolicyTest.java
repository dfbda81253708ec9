package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.adapt.AdaptiveControl;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantKeys;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The router's real stores under the fleet's writes: a threshold written by somebody else between
 * the agent's read and its write stands, and the fleet's other field is written beside it.
 */
class RouterLocalPolicyTest {

    private final InMemoryThresholdStore store = new InMemoryThresholdStore(new Thresholds(60, 130));
    private final RouterLocalPolicy local = new RouterLocalPolicy(store,
            new PrefixTenantPolicies(new InMemoryPrefixFloors()), TenantKeys.inMemory(), AdaptiveControl.NOT_IN_KERNEL_MODE);

    @Test
    void theFleetsFieldIsWrittenWhenNobodyWroteSince() {
        LocalPolicy.State seen = local.read();
        local.apply(seen.content().deltaTo(content(new Thresholds(60, 151))), seen);
        assertEquals(new Thresholds(60, 151), store.read());
        assertEquals(ThresholdState.WRITER_API, store.state().writer());
    }

    @Test
    void aPatchOfTheOtherFieldSinceTheReadStandsBesideTheFleetsField() {
        LocalPolicy.State seen = local.read();
        store.write(new Thresholds(51, 130)); // a PATCH of nano_max after the agent read
        local.apply(seen.content().deltaTo(content(new Thresholds(60, 151))), seen);
        assertEquals(new Thresholds(51, 151), store.read());
    }

    @Test
    void aPatchOfTheSameFieldSinceTheReadWins() {
        LocalPolicy.State seen = local.read();
        store.write(new Thresholds(35, 130));
        local.apply(seen.content().deltaTo(content(new Thresholds(30, 130))), seen);
        assertEquals(new Thresholds(35, 130), store.read());
    }

    @Test
    void aCombinationOutOfOrderKeepsTheNewerWriteWhole() {
        LocalPolicy.State seen = local.read();
        store.write(new Thresholds(100, 130)); // nano_max up since the read
        local.apply(seen.content().deltaTo(content(new Thresholds(60, 90))), seen); // the fleet's small_max below it
        assertEquals(new Thresholds(100, 130), store.read());
    }

    private static PolicyContent content(Thresholds t) {
        return PolicyContent.of(t, Map.of(), Map.of(), Optional.empty());
    }
}
