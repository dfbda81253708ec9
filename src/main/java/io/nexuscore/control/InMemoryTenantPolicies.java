package io.nexuscore.control;

import io.nexuscore.classify.Tier;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Tenant floors for user-space mode, with the longest-prefix match the kernel's LPM trie does. */
public final class InMemoryTenantPolicies implements TenantPolicies {

    private final TreeMap<String, TenantPolicy> byId = new TreeMap<>();

    @Override
    public synchronized Map<String, TenantPolicy> list() {
        return new TreeMap<>(byId);
    }

    @Override
    public synchronized boolean put(String id, TenantPolicy policy) {
        for (Map.Entry<String, TenantPolicy> e : byId.entrySet()) {
            if (!e.getKey().equals(id) && e.getValue().prefix().equals(policy.prefix())) {
                throw new PrefixInUse(policy.prefix(), e.getKey());
            }
        }
        return byId.put(id, policy) == null;
    }

    @Override
    public synchronized boolean delete(String id) {
        return byId.remove(id) != null;
    }

    /** The floor of the most specific prefix holding this host-order IPv4 address. */
    public synchronized Optional<Tier> floorFor(int ipv4) {
        TenantPolicy best = null;
        for (TenantPolicy p : byId.values()) {
            if (p.prefix().contains(ipv4) && (best == null || p.prefix().length() > best.prefix().length())) {
                best = p;
            }
        }
        return Optional.ofNullable(best).map(TenantPolicy::floor);
    }
}
