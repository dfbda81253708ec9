package io.nexuscore.kernel.maps;

import io.nexuscore.net.Ipv4Prefix;
import static io.nexuscore.kernel.maps.SharedStructs.TENANT_FLOOR;
import static io.nexuscore.kernel.maps.SharedStructs.TENANT_KEY;

import io.nexuscore.kernel.libbpf.BpfMap;
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
 * SO_MARK carries it (see {@link io.nexuscore.kernel.maps.SocketMarks}); the mark is set once, so the data
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

    public void put(Ipv4Prefix prefix, Tier floor) {
        map.update(key(prefix), value(floor), BpfMap.BPF_ANY);
    }

    /** The map's max_entries, as the kernel reports it. */
    public int capacity() {
        return map.info().maxEntries();
    }

    public boolean remove(Ipv4Prefix prefix) {
        return map.delete(key(prefix));
    }

    /** The floor for one source address (longest matching prefix), as the kernel resolves it. */
    public Optional<Tier> floorFor(Inet4Address source) {
        return map.lookup(key(Ipv4Prefix.host(source))).flatMap(TenantPolicyMap::decodeValue);
    }

    /**
     * Every entry; one another tool wrote with host bits set reads as the prefix the trie matches it
     * as, and one whose floor names no tier is left out (the kernel ignores it too).
     */
    public Map<Ipv4Prefix, Tier> entries() {
        Map<Ipv4Prefix, Tier> entries = new LinkedHashMap<>();
        for (byte[] key : map.keys()) {
            map.lookup(key).flatMap(TenantPolicyMap::decodeValue).ifPresent(floor -> entries.put(decodeKey(key), floor));
        }
        return entries;
    }

    /** struct tenant_key: prefixlen in host order (little-endian), addr in network order. */
    public static byte[] key(Ipv4Prefix prefix) {
        return ByteBuffer.allocate(TENANT_KEY.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(TENANT_KEY.offset("prefixlen"), prefix.length())
                .order(ByteOrder.BIG_ENDIAN).putInt(TENANT_KEY.offset("addr"), prefix.address())
                .array();
    }

    public static Ipv4Prefix decodeKey(byte[] key) {
        ByteBuffer b = ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN);
        int length = b.getInt(TENANT_KEY.offset("prefixlen"));
        return Ipv4Prefix.covering(b.order(ByteOrder.BIG_ENDIAN).getInt(TENANT_KEY.offset("addr")), length);
    }

    /** struct tenant_floor: the floor tier's wire value, pad zeroed. */
    public static byte[] value(Tier floor) {
        byte[] value = new byte[TENANT_FLOOR.size()];
        value[TENANT_FLOOR.offset("tier_floor")] = (byte) floor.wire();
        return value;
    }

    /**
     * The floor of a struct tenant_floor; none when its byte names no tier (another tool's write:
     * the TC program applies a floor only below TIER_COUNT, and so does the data plane).
     */
    public static Optional<Tier> decodeValue(byte[] value) {
        int wire = value[TENANT_FLOOR.offset("tier_floor")] & 0xff;
        return wire <= Tier.LARGE.wire() ? Optional.of(Tier.fromWire(wire)) : Optional.empty();
    }
}
