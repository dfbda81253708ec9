package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfException;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.Errno;
import io.nexuscore.classify.Tier;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumMap;
import java.util.Map;

/** The pinned {@code tier_counters} per-CPU array: kernel verdicts per tier, summed over CPUs. */
public final class TierCountersMap {

    private static final int SLOT = 8;

    private final BpfMap map;

    public TierCountersMap(BpfMap map) {
        this.map = map;
    }

    public static int valueSize() {
        return BpfMap.perCpu(Long.BYTES);
    }

    public long count(Tier tier) {
        byte[] perCpu = map.lookup(key(tier)).orElseThrow(
                () -> new BpfException("bpf_map_lookup_elem", map.name(), Errno.ENOENT));
        ByteBuffer b = ByteBuffer.wrap(perCpu).order(ByteOrder.LITTLE_ENDIAN);
        long sum = 0;
        for (int off = 0; off + SLOT <= perCpu.length; off += SLOT) {
            sum += b.getLong(off);
        }
        return sum;
    }

    public Map<Tier, Long> counts() {
        Map<Tier, Long> counts = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            counts.put(tier, count(tier));
        }
        return counts;
    }

    private static byte[] key(Tier tier) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(tier.wire()).array();
    }
}
