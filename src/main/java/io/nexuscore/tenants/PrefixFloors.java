package io.nexuscore.tenants;

import io.nexuscore.classify.Tier;
import java.util.Map;

/**
 * Tier floors keyed by source prefix: the shape of the kernel's {@code tenant_policy} LPM trie, and
 * of its user-space stand-in {@link InMemoryPrefixFloors}. Calls may be syscalls.
 */
public interface PrefixFloors {

    void put(Ipv4Prefix prefix, Tier floor);

    /** @return true when the prefix was present */
    boolean remove(Ipv4Prefix prefix);

    Map<Ipv4Prefix, Tier> entries();
}
