package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.classify.Tier;
import java.util.Map;
import java.util.Optional;

/**
 * Tenant tier floors keyed by a tenant id: requests from the tenant's source prefix are served at
 * least at its floor tier. A prefix belongs to one tenant at a time (the kernel map is keyed by prefix).
 */
public interface TenantPolicies {

    /** The policies by tenant id, in id order. */
    Map<String, TenantPolicy> list();

    /**
     * Creates or replaces a tenant's policy.
     *
     * @return true when the tenant is new
     * @throws PrefixInUse when another tenant holds the prefix
     * @throws Full when the policy needs a new prefix and the store holds as many as it can
     */
    boolean put(String id, TenantPolicy policy);

    /** @return true when the tenant existed */
    boolean delete(String id);

    /**
     * Writes {@code next} (empty: deletes the tenant) only while the tenant's policy is still
     * {@code expected} (empty: no such tenant), in one step: a writer that read the store earlier
     * (the fleet's agent) never overwrites a change made here since.
     *
     * @return false, having written nothing, when the tenant's policy is no longer {@code expected}
     * @throws PrefixInUse as {@link #put}
     * @throws Full as {@link #put}
     */
    boolean replace(String id, Optional<TenantPolicy> expected, Optional<TenantPolicy> next);

    record TenantPolicy(Ipv4Prefix prefix, Tier floor) {
    }

    final class Full extends RuntimeException {
        public Full(int capacity) {
            super("the tenant policy store holds its maximum of " + capacity + " prefixes; delete a tenant first");
        }
    }

    final class PrefixInUse extends RuntimeException {
        public PrefixInUse(Ipv4Prefix prefix, String owner) {
            super("prefix " + prefix + " already belongs to tenant '" + owner + "'");
        }
    }
}
