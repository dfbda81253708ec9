package io.nexuscore.fleet;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.nexuscore.tenants.limits.TenantLimits;
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
 * @param limits     tenants whose limits changed: the new limits, {@link TenantLimits#NONE} when removed
 */
public record PolicyDelta(Optional<Thresholds> thresholds, boolean nanoMaxMoved, boolean smallMaxMoved,
                          SortedMap<String, Optional<TenantPolicy>> tenants,
                          SortedMap<String, List<String>> keys, Optional<AdaptiveSettings> adaptive,
                          SortedMap<String, TenantLimits> limits) {

    /** Without tenant limits. */
    public PolicyDelta(Optional<Thresholds> thresholds, boolean nanoMaxMoved, boolean smallMaxMoved,
                       SortedMap<String, Optional<TenantPolicy>> tenants,
                       SortedMap<String, List<String>> keys, Optional<AdaptiveSettings> adaptive) {
        this(thresholds, nanoMaxMoved, smallMaxMoved, tenants, keys, adaptive, new java.util.TreeMap<>());
    }

    public boolean isEmpty() {
        return thresholds.isEmpty() && tenants.isEmpty() && keys.isEmpty() && adaptive.isEmpty() && limits.isEmpty();
    }

    /** Only the thresholds moved: what an adaptive step looks like. */
    public boolean thresholdsOnly() {
        return thresholds.isPresent() && tenants.isEmpty() && keys.isEmpty() && adaptive.isEmpty() && limits.isEmpty();
    }

    /** The same delta without its thresholds (a node-scope adaptive step is the node's own). */
    public PolicyDelta withoutThresholds() {
        return new PolicyDelta(Optional.empty(), false, false, tenants, keys, adaptive, limits);
    }

    /**
     * The thresholds after this change is made on {@code base}, field by field: one router's new
     * nano_max and another's new small_max both survive. When the two fields so combined are out of
     * order, the writer's own pair wins whole (it was valid where it was written).
     */
    public Thresholds thresholdsOnto(Thresholds base) {
        return thresholdsOnto(base, base);
    }

    /**
     * The thresholds after this change is made on {@code current}, when the store moved from
     * {@code seen} (what this delta was computed against) to {@code current} in between: a field
     * another writer moved since then stands, the delta's other moved field is laid beside it. So a
     * PATCH of nano_max landing while the fleet's new small_max is applied keeps both. When the
     * combination is out of order, the newer write ({@code current}) stands whole; with nothing
     * written in between ({@code current} equals {@code seen}) this is {@link #thresholdsOnto(Thresholds)}.
     */
    public Thresholds thresholdsOnto(Thresholds current, Thresholds seen) {
        if (thresholds.isEmpty()) {
            return current;
        }
        Thresholds mine = thresholds.get();
        int nano = nanoMaxMoved && current.nanoMax() == seen.nanoMax() ? mine.nanoMax() : current.nanoMax();
        int small = smallMaxMoved && current.smallMax() == seen.smallMax() ? mine.smallMax() : current.smallMax();
        if (nano < small) {
            return new Thresholds(nano, small);
        }
        return current.equals(seen) ? mine : current;
    }
}
