package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.classify.Tier;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Tenants by id over a prefix-keyed store ({@link PrefixFloors}: the kernel map or memory). The store
 * knows prefixes only, so the ids live here; an entry found in the store with no id (written before a
 * restart, or by bpftool) is listed, and can be deleted, under an id derived from its prefix
 * ({@code 192.0.2.0_24}).
 */
public final class PrefixTenantPolicies implements TenantPolicies {

    private final PrefixFloors store;
    private final Map<String, Ipv4Prefix> ids = new HashMap<>();

    public PrefixTenantPolicies(PrefixFloors store) {
        this.store = store;
    }

    public PrefixFloors store() {
        return store;
    }

    @Override
    public synchronized Map<String, TenantPolicy> list() {
        Map<Ipv4Prefix, Tier> entries = store.entries();
        ids.values().removeIf(p -> !entries.containsKey(p)); // removed behind our back
        Map<Ipv4Prefix, String> owners = new HashMap<>();
        ids.forEach((id, prefix) -> owners.put(prefix, id));
        Map<String, TenantPolicy> out = new TreeMap<>();
        entries.forEach((prefix, floor) -> out.put(owners.getOrDefault(prefix, derivedId(prefix)), new TenantPolicy(prefix, floor)));
        return out;
    }

    @Override
    public synchronized boolean put(String id, TenantPolicy policy) {
        Map<String, TenantPolicy> current = list();
        boolean newPrefix = current.values().stream().noneMatch(p -> p.prefix().equals(policy.prefix()));
        // A tenant moving to a new prefix needs room for it too: its old one is freed only after the
        // new one is written (the order that never leaves its connections without a floor).
        if (newPrefix && current.size() >= store.capacity()) {
            throw new Full(store.capacity());
        }
        String owner = current.entrySet().stream()
                .filter(e -> e.getValue().prefix().equals(policy.prefix()))
                .map(Map.Entry::getKey).findFirst().orElse(null);
        boolean ownerless = owner != null && !ids.containsKey(owner);
        if (owner != null && !owner.equals(id) && !ownerless) {
            throw new PrefixInUse(policy.prefix(), owner);
        }
        Ipv4Prefix previous = ids.get(id);
        boolean created = previous == null && !(owner != null && owner.equals(id));
        store.put(policy.prefix(), policy.floor());
        if (previous != null && !previous.equals(policy.prefix())) {
            store.remove(previous);
        }
        ids.put(id, policy.prefix());
        return created;
    }

    @Override
    public synchronized boolean replace(String id, Optional<TenantPolicy> expected, Optional<TenantPolicy> next) {
        if (!Optional.ofNullable(list().get(id)).equals(expected)) {
            return false;
        }
        if (next.isPresent()) {
            put(id, next.get());
        } else {
            delete(id);
        }
        return true;
    }

    @Override
    public synchronized boolean delete(String id) {
        Ipv4Prefix prefix = ids.remove(id);
        if (prefix == null) {
            prefix = store.entries().keySet().stream().filter(p -> derivedId(p).equals(id)).findFirst().orElse(null);
        }
        return prefix != null && store.remove(prefix);
    }

    static String derivedId(Ipv4Prefix prefix) {
        return prefix.toString().replace('/', '_');
    }
}
