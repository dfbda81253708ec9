package io.nexuscore.tenants;

import io.nexuscore.classify.Tier;
import java.net.Inet4Address;
import java.util.Optional;

/**
 * Tier floors by client address, for connections whose socket carries no kernel mark: in user-space
 * mode no TC program marks the SYN, so the data plane applies the operator's tenant prefixes itself.
 * Must not block (called on the event loop, once per connection).
 */
@FunctionalInterface
public interface TenantFloors {

    Optional<Tier> floorFor(Inet4Address client);

    /** Kernel mode: the TC chain already marked the SYN; nothing to add. */
    TenantFloors NONE = client -> Optional.empty();
}
