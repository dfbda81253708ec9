package io.nexuscore.fleet;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.nexuscore.tenants.limits.TenantLimits;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a fleet shares: the thresholds, tenant floors, tenant API key hashes, the adaptive loop's
 * settings and tenant limits. Immutable; maps sorted by tenant id so that equal contents encode to equal JSON.
 *
 * @param adaptive empty when no router has a kernel loop to report them (user-space routers ignore it)
 * @param limits   tenants' limits (each router enforces its share of them, io.nexuscore.tenants.limits)
 */
public record PolicyContent(Thresholds thresholds, SortedMap<String, TenantPolicy> tenants,
                            SortedMap<String, List<String>> keys, Optional<AdaptiveSettings> adaptive,
                            SortedMap<String, TenantLimits> limits) {

    /** Without tenant limits. */
    public PolicyContent(Thresholds thresholds, SortedMap<String, TenantPolicy> tenants,
                         SortedMap<String, List<String>> keys, Optional<AdaptiveSettings> adaptive) {
        this(thresholds, tenants, keys, adaptive, new TreeMap<>());
    }

    public PolicyContent {
        TreeMap<String, TenantLimits> l = new TreeMap<>();
        limits.forEach((id, set) -> {
            if (!set.none()) {
                l.put(id, set);
            }
        });
        limits = java.util.Collections.unmodifiableSortedMap(l);
        tenants = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(tenants));
        TreeMap<String, List<String>> k = new TreeMap<>();
        keys.forEach((id, hashes) -> {
            if (!hashes.isEmpty()) {
                k.put(id, List.copyOf(hashes));
            }
        });
        keys = java.util.Collections.unmodifiableSortedMap(k);
    }

    public static PolicyContent of(Thresholds thresholds, Map<String, TenantPolicy> tenants,
                                   Map<String, List<String>> keys, Optional<AdaptiveSettings> adaptive) {
        return new PolicyContent(thresholds, new TreeMap<>(tenants), new TreeMap<>(keys), adaptive);
    }

    public static PolicyContent of(Thresholds thresholds, Map<String, TenantPolicy> tenants,
                                   Map<String, List<String>> keys, Optional<AdaptiveSettings> adaptive,
                                   Map<String, TenantLimits> limits) {
        return new PolicyContent(thresholds, new TreeMap<>(tenants), new TreeMap<>(keys), adaptive, new TreeMap<>(limits));
    }

    public PolicyContent withThresholds(Thresholds t) {
        return new PolicyContent(t, tenants, keys, adaptive, limits);
    }

    /**
     * What changed from this content to {@code to}. An empty {@code to.adaptive} is no change: the
     * side that has no kernel loop cannot say what its settings are.
     */
    public PolicyDelta deltaTo(PolicyContent to) {
        Optional<Thresholds> t = to.thresholds.equals(thresholds) ? Optional.empty() : Optional.of(to.thresholds);
        SortedMap<String, Optional<TenantPolicy>> tenantChanges = new TreeMap<>();
        tenants.keySet().stream().filter(id -> !to.tenants.containsKey(id))
                .forEach(id -> tenantChanges.put(id, Optional.empty()));
        to.tenants.forEach((id, p) -> {
            if (!p.equals(tenants.get(id))) {
                tenantChanges.put(id, Optional.of(p));
            }
        });
        SortedMap<String, List<String>> keyChanges = new TreeMap<>();
        keys.keySet().stream().filter(id -> !to.keys.containsKey(id)).forEach(id -> keyChanges.put(id, List.of()));
        to.keys.forEach((id, hashes) -> {
            if (!hashes.equals(keys.get(id))) {
                keyChanges.put(id, hashes);
            }
        });
        Optional<AdaptiveSettings> a = to.adaptive.isPresent() && !to.adaptive.equals(adaptive)
                ? to.adaptive : Optional.empty();
        SortedMap<String, TenantLimits> limitChanges = new TreeMap<>();
        limits.keySet().stream().filter(id -> !to.limits.containsKey(id))
                .forEach(id -> limitChanges.put(id, TenantLimits.NONE));
        to.limits.forEach((id, l) -> {
            if (!l.equals(limits.get(id))) {
                limitChanges.put(id, l);
            }
        });
        return new PolicyDelta(t, to.thresholds.nanoMax() != thresholds.nanoMax(),
                to.thresholds.smallMax() != thresholds.smallMax(), tenantChanges, keyChanges, a, limitChanges);
    }

    /** This content with the delta's changes made on top (the fleet's newest, plus one node's edit). */
    public PolicyContent with(PolicyDelta delta) {
        TreeMap<String, TenantPolicy> t = new TreeMap<>(tenants);
        delta.tenants().forEach((id, p) -> p.ifPresentOrElse(policy -> t.put(id, policy), () -> t.remove(id)));
        // A prefix belongs to one tenant: a tenant another node moved onto a prefix wins it.
        delta.tenants().forEach((id, p) -> p.ifPresent(policy ->
                t.entrySet().removeIf(e -> !e.getKey().equals(id) && e.getValue().prefix().equals(policy.prefix()))));
        TreeMap<String, List<String>> k = new TreeMap<>(keys);
        delta.keys().forEach((id, hashes) -> {
            if (hashes.isEmpty()) {
                k.remove(id);
            } else {
                k.put(id, hashes);
            }
        });
        TreeMap<String, TenantLimits> l = new TreeMap<>(limits);
        delta.limits().forEach((id, set) -> {
            if (set.none()) {
                l.remove(id);
            } else {
                l.put(id, set);
            }
        });
        return new PolicyContent(delta.thresholdsOnto(thresholds), t, k,
                delta.adaptive().isPresent() ? delta.adaptive() : adaptive, l);
    }
}
