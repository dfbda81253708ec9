package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.kernel.maps.AdaptiveControl;
import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.maps.AdaptiveStatus;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The router's real stores under the fleet's writes: whatever somebody else wrote between the agent's
 * read and its write (a threshold field, a tenant, a key list, the loop's settings) stands, and the
 * fleet's other changes are written beside it.
 */
class RouterLocalPolicyTest {

    private static final TenantPolicy ACME_SMALL = new TenantPolicy(Ipv4Prefix.parse("10.1.0.0/16"), Tier.SMALL);
    private static final TenantPolicy ACME_LARGE = new TenantPolicy(Ipv4Prefix.parse("10.1.0.0/16"), Tier.LARGE);
    private static final TenantPolicy ACME_NANO = new TenantPolicy(Ipv4Prefix.parse("10.1.0.0/16"), Tier.NANO);
    private static final TenantPolicy GLOBEX = new TenantPolicy(Ipv4Prefix.parse("10.2.0.0/16"), Tier.SMALL);

    private final InMemoryThresholdStore store = new InMemoryThresholdStore(new Thresholds(60, 130));
    private final PrefixTenantPolicies tenants = new PrefixTenantPolicies(new InMemoryPrefixFloors());
    private final TenantKeys keys = TenantKeys.inMemory();
    private final RouterLocalPolicy local = new RouterLocalPolicy(store, tenants, keys, AdaptiveControl.NOT_IN_KERNEL_MODE);

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
    void aKernelStepSinceTheReadKeepsItsWriterBesideTheFleetsField() {
        LocalPolicy.State seen = local.read();
        ThresholdState before = store.state();
        store.compareAndSet(before, before.next(new Thresholds(55, 130), ThresholdState.WRITER_KERNEL));
        local.apply(seen.content().deltaTo(content(new Thresholds(60, 151))), seen);
        assertEquals(new Thresholds(55, 151), store.read());
        assertEquals(ThresholdState.WRITER_KERNEL, store.state().writer(), "still the loop's step for the agent");
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

    @Test
    void aTenantWrittenSinceTheReadKeepsThatWriteAndTheFleetsOtherTenantsArrive() {
        tenants.put("acme", ACME_SMALL);
        LocalPolicy.State seen = local.read();
        tenants.put("acme", ACME_LARGE); // a PUT /tenants/acme after the agent read
        PolicyContent fleet = PolicyContent.of(new Thresholds(60, 130),
                Map.of("acme", ACME_NANO, "globex", GLOBEX), Map.of(), Optional.empty());
        local.apply(seen.content().deltaTo(fleet), seen);
        assertEquals(Map.of("acme", ACME_LARGE, "globex", GLOBEX), tenants.list());
    }

    @Test
    void keysWrittenSinceTheReadKeepThatWriteAndTheFleetsOtherKeysArrive() {
        LocalPolicy.State seen = local.read();
        keys.put("acme", List.of(hash('a'))); // a PUT of acme's keys after the agent read
        PolicyContent fleet = PolicyContent.of(new Thresholds(60, 130), Map.of(),
                Map.of("acme", List.of(hash('b')), "globex", List.of(hash('c'))), Optional.empty());
        local.apply(seen.content().deltaTo(fleet), seen);
        assertEquals(Map.of("acme", List.of(hash('a')), "globex", List.of(hash('c'))), keys.list());
    }

    @Test
    void theFleetsLoopSettingsArriveWhenNobodyChangedThemSince() {
        SettingsOnly loop = new SettingsOnly(AdaptiveSettings.DEFAULT);
        RouterLocalPolicy kernelRouter = new RouterLocalPolicy(store, tenants, keys, loop);
        LocalPolicy.State seen = kernelRouter.read();
        kernelRouter.apply(seen.content().deltaTo(withSettings(AdaptiveSettings.DEFAULT.withCeiling(90))), seen);
        assertEquals(AdaptiveSettings.DEFAULT.withCeiling(90), loop.settings);
    }

    @Test
    void loopSettingsChangedSinceTheReadKeepThatChange() {
        SettingsOnly loop = new SettingsOnly(AdaptiveSettings.DEFAULT);
        RouterLocalPolicy kernelRouter = new RouterLocalPolicy(store, tenants, keys, loop);
        LocalPolicy.State seen = kernelRouter.read();
        loop.configure(AdaptiveSettings.DEFAULT.withPeriodMs(5_000)); // a PATCH /adaptive after the agent read
        kernelRouter.apply(seen.content().deltaTo(withSettings(AdaptiveSettings.DEFAULT.withCeiling(90))), seen);
        assertEquals(AdaptiveSettings.DEFAULT.withPeriodMs(5_000), loop.settings);
    }

    private static PolicyContent withSettings(AdaptiveSettings settings) {
        return PolicyContent.of(new Thresholds(60, 130), Map.of(), Map.of(), Optional.of(settings));
    }

    /** The loop's settings port alone, in memory: what the fleet reads and writes of a kernel loop. */
    private static final class SettingsOnly implements AdaptiveControl {
        AdaptiveSettings settings;

        SettingsOnly(AdaptiveSettings settings) {
            this.settings = settings;
        }

        @Override
        public AdaptiveStatus status() {
            return new AdaptiveStatus(settings, 0, 0, 0, List.of(0, 0, 0), List.of(0, 0, 0), Optional.empty(), 0, 1024,
                    0, Optional.empty(), Optional.empty());
        }

        @Override
        public AdaptiveSettings configure(AdaptiveSettings next) {
            settings = next;
            return next;
        }
    }

    private static String hash(char c) {
        return "sha256:" + String.valueOf(c).repeat(64);
    }

    private static PolicyContent content(Thresholds t) {
        return PolicyContent.of(t, Map.of(), Map.of(), Optional.empty());
    }
}
