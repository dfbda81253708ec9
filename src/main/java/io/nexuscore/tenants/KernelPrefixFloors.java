package io.nexuscore.tenants;

import io.nexuscore.classify.Tier;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/** The pinned {@code tenant_policy} map as the tenant policies' prefix store (kernel mode). */
public record KernelPrefixFloors(TenantPolicyMap map) implements PrefixFloors {

    @Override
    public void put(Ipv4Prefix prefix, Tier floor) {
        map.put(toKernel(prefix), floor);
    }

    @Override
    public boolean remove(Ipv4Prefix prefix) {
        return map.remove(toKernel(prefix));
    }

    @Override
    public Map<Ipv4Prefix, Tier> entries() {
        Map<Ipv4Prefix, Tier> out = new LinkedHashMap<>();
        map.entries().forEach((prefix, floor) -> out.put(fromKernel(prefix), floor));
        return out;
    }

    private static TenantPolicyMap.Prefix toKernel(Ipv4Prefix prefix) {
        try {
            byte[] address = ByteBuffer.allocate(4).putInt(prefix.address()).array();
            return new TenantPolicyMap.Prefix((Inet4Address) InetAddress.getByAddress(address), prefix.length());
        } catch (UnknownHostException e) {
            throw new IllegalStateException("four bytes are always an IPv4 address", e);
        }
    }

    private static Ipv4Prefix fromKernel(TenantPolicyMap.Prefix prefix) {
        int address = ByteBuffer.wrap(prefix.address().getAddress()).getInt();
        return new Ipv4Prefix(address, prefix.length());
    }
}
