package io.nexuscore.tenants;

import static io.nexuscore.bpf.SharedStructs.TENANT_FLOOR;
import static io.nexuscore.bpf.SharedStructs.TENANT_KEY;

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
 * SO_MARK carries it (see {@link io.nexuscore.bpf.SocketMarks}); the mark is set once, so the data
 * plane also reads this map through {@link PinnedTenantFloors}.
 *
 * Keys and values are encoded at the offsets of {@link SharedStructs#TENANT_KEY} and
 * {@link SharedStructs#TENANT_FLOOR}, the layouts BtfLayoutTest checks against the compiled object.
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
        map.update(key(prefix.address(), prefix.length()), value(floor), BpfMap.BPF_ANY);
    }

    public boolean remove(Prefix prefix) {
        return map.delete(key(prefix.address(), prefix.length()));
    }

    /** The floor for one source address (longest matching prefix), as the kernel resolves it. */
    public Optional<Tier> floorFor(Inet4Address source) {
        return map.lookup(key(source, 32)).map(TenantPolicyMap::decodeValue);
    }

    public Map<Prefix, Tier> entries() {
        Map<Prefix, Tier> entries = new LinkedHashMap<>();
        for (byte[] key : map.keys()) {
            map.lookup(key).ifPresent(v -> entries.put(decodeKey(key), decodeValue(v)));
        }
        return entries;
    }

    /** struct tenant_key: prefixlen in host order (little-endian), addr in network order. */
    static byte[] key(Inet4Address address, int prefixLength) {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("prefix length must be in 0..32, got " + prefixLength);
        }
        return ByteBuffer.allocate(TENANT_KEY.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(TENANT_KEY.offset("prefixlen"), prefixLength)
                .put(TENANT_KEY.offset("addr"), address.getAddress())
                .array();
    }

    static Prefix decodeKey(byte[] key) {
        ByteBuffer b = ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN);
        byte[] address = new byte[4];
        b.get(TENANT_KEY.offset("addr"), address);
        return new Prefix(SharedStructs.inet4(address), b.getInt(TENANT_KEY.offset("prefixlen")));
    }

    /** struct tenant_floor: the floor tier's wire value, pad zeroed. */
    static byte[] value(Tier floor) {
        byte[] value = new byte[TENANT_FLOOR.size()];
        value[TENANT_FLOOR.offset("tier_floor")] = (byte) floor.wire();
        return value;
    }

    static Tier decodeValue(byte[] value) {
        return Tier.fromWire(value[TENANT_FLOOR.offset("tier_floor")] & 0xff);
    }
}
