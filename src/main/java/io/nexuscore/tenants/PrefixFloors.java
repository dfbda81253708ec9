package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.classify.Tier;
import java.util.Map;

/**
 * Tier floors keyed by source prefix: the shape of the kernel's {@code tenant_policy} LPM trie, and
 * of its user-space stand-in {@link InMemoryPrefixFloors}. Calls may be syscalls.
 */
public interface PrefixFloors {

    /**
     * The most prefixes user space holds: the kernel map's {@code max_entries} (tenant_policy in
     * nexus_classify.bpf.c), so that both modes refuse the same 16,385th prefix.
     * {@code PrefixTenantPoliciesKernelTest} checks the two are equal.
     */
    int USER_SPACE_CAPACITY = 16_384;

    void put(Ipv4Prefix prefix, Tier floor);

    /** How many prefixes the store can hold. */
    int capacity();

    /** @return true when the prefix was present */
    boolean remove(Ipv4Prefix prefix);

    Map<Ipv4Prefix, Tier> entries();
}
