package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.kernel.maps.TenantPolicyMap;
import io.nexuscore.classify.Tier;
import java.util.Map;

/** The pinned {@code tenant_policy} map as the tenant policies' prefix store (kernel mode). */
public record KernelPrefixFloors(TenantPolicyMap map) implements PrefixFloors {

    @Override
    public void put(Ipv4Prefix prefix, Tier floor) {
        map.put(prefix, floor);
    }

    @Override
    public int capacity() {
        return map.capacity();
    }

    @Override
    public boolean remove(Ipv4Prefix prefix) {
        return map.remove(prefix);
    }

    @Override
    public Map<Ipv4Prefix, Tier> entries() {
        return map.entries();
    }
}
