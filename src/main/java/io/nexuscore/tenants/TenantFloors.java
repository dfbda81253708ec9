package io.nexuscore.tenants;

import io.nexuscore.classify.Tier;
import java.net.Inet4Address;
import java.util.Optional;

/**
 * Tier floors by client address, looked up for every request (so a tenant change reaches the
 * connections already open). In user-space mode no TC program marks the SYN and these are the
 * operator's tenant prefixes in memory; in kernel mode they are a copy of the pinned tenant map,
 * which also covers connections the TC chain could not mark (SYN cookies, other interfaces).
 * Must not block (called on the event loop).
 */
@FunctionalInterface
public interface TenantFloors {

    Optional<Tier> floorFor(Inet4Address client);

    /**
     * True when these floors are the source of truth and override a socket's SO_MARK floor: the
     * mark was set once, on the SYN, and goes stale when the tenant changes.
     */
    default boolean authoritative() {
        return false;
    }

    /** No floors beyond the socket marks. */
    TenantFloors NONE = client -> Optional.empty();
}
