package io.nexuscore.fleet;

import io.nexuscore.adapt.AdaptiveSettings;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;

/**
 * A change between two policy contents, field by field, so that one node's edit can be laid on top
 * of a newer fleet policy without undoing another node's edit of another field.
 *
 * @param thresholds new thresholds, if they changed (the whole pair as the writer had it)
 * @param nanoMaxMoved  nano_max is one of the fields that changed
 * @param smallMaxMoved small_max is one of the fields that changed
 * @param tenants    tenant floors that changed: a policy, or empty for a deleted tenant
 * @param keys       tenants whose key hashes changed: the new list, empty when removed
 * @param adaptive   new adaptive settings, if they changed
 */
public record PolicyDelta(Optional<Thresholds> thresholds, boolean nanoMaxMoved, boolean smallMaxMoved,
                          SortedMap<String, Optional<TenantPolicy>> tenants,
                          SortedMap<String, List<String>> keys, Optional<AdaptiveSettings> adaptive) {

    public boolean isEmpty() {
        return thresholds.isEmpty() && tenants.isEmpty() && keys.isEmpty() && adaptive.isEmpty();
    }

    /** Only the thresholds moved: what an adaptive step looks like. */
    public boolean thresholdsOnly() {
        return thresholds.isPresent() && tenants.isEmpty() && keys.isEmpty() && adaptive.isEmpty();
    }

    /** The same delta without its thresholds (a node-scope adaptive step is the node's own). */
    public PolicyDelta withoutThresholds() {
        return new PolicyDelta(Optional.empty(), false, false, tenants, keys, adaptive);
    }

    /**
     * The thresholds after this change is made on {@code base}, field by field: one router's new
     * nano_max and another's new small_max both survive. When the two fields so combined are out of
     * order, the writer's own pair wins whole (it was valid where it was written).
     */
    public Thresholds thresholdsOnto(Thresholds base) {
        if (thresholds.isEmpty()) {
            return base;
        }
        Thresholds mine = thresholds.get();
        int nano = nanoMaxMoved ? mine.nanoMax() : base.nanoMax();
        int small = smallMaxMoved ? mine.smallMax() : base.smallMax();
        return nano < small ? new Thresholds(nano, small) : mine;
    }
}
