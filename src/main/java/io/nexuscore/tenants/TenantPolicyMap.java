package io.nexuscore.tenants;

import io.nexuscore.bpf.BpfMap;
import io.nexuscore.bpf.SharedStructs;

import io.nexuscore.classify.Tier;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The pinned {@code tenant_policy} LPM trie: IPv4 source prefix -> tier floor. The TC chain marks
 * each SYN from a matching source with the floor (longest prefix wins), so the accepted socket's
 * SO_MARK carries it (see {@link SocketMarks}). Changes apply to new connections only.
 */
public final class TenantPolicyMap {

    private final BpfMap map;

    public TenantPolicyMap(BpfMap map) {
        this.map = map;
    }

    /** A prefix such as 192.0.2.0/24. */
    public record Prefix(Inet4Address address, int length) {
        public Prefix {
            if (length < 0 || length > 32) {
                throw new IllegalArgumentException("prefix length must be in 0..32, got " + length);
            }
        }

        @Override
        public String toString() {
            return address.getHostAddress() + "/" + length;
        }
    }

    public void put(Prefix prefix, Tier floor) {
        map.update(SharedStructs.tenantKey(prefix.address(), prefix.length()), SharedStructs.tenantFloor(floor), BpfMap.BPF_ANY);
    }

    public boolean remove(Prefix prefix) {
        return map.delete(SharedStructs.tenantKey(prefix.address(), prefix.length()));
    }

    /** The floor for one source address (longest matching prefix), as the kernel resolves it. */
    public Optional<Tier> floorFor(Inet4Address source) {
        return map.lookup(SharedStructs.tenantKey(source, 32)).map(v -> Tier.fromWire(v[0] & 0xff));
    }

    public Map<Prefix, Tier> entries() {
        Map<Prefix, Tier> entries = new LinkedHashMap<>();
        for (byte[] key : map.keys()) {
            ByteBuffer b = ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN);
            int length = b.getInt(0);
            byte[] address = new byte[4];
            System.arraycopy(key, 4, address, 0, 4);
            map.lookup(key).ifPresent(v -> entries.put(
                    new Prefix(SharedStructs.inet4(address), length), Tier.fromWire(v[0] & 0xff)));
        }
        return entries;
    }
}
