package io.nexuscore.kernel.maps;

import static io.nexuscore.kernel.maps.SharedStructs.TENANT_LIMIT;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.MapMemory;
import io.nexuscore.net.Ipv4Prefix;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The kernel's tenant-limit maps: {@code tenant_limits} (LPM trie, IPv4 source prefix -> the minute
 * limits XDP enforces and the tenant's slot) and {@code tenant_windows} (the slots' anchored windows,
 * mmap'ed, {@link TenantWindows}). nexus_limits.bpf.h counts there; the data plane counts the
 * requests XDP did not count in the same windows.
 */
public final class TenantLimitMaps implements AutoCloseable {

    private final BpfMap limits;
    private final MapMemory windowsMemory;
    private final TenantWindows windows;

    private TenantLimitMaps(BpfMap limits, MapMemory windowsMemory) {
        this.limits = limits;
        this.windowsMemory = windowsMemory;
        this.windows = new TenantWindows(windowsMemory.buffer());
    }

    /** Maps both (the caller keeps the fds); checks tenant_windows is the array this build reads. */
    public static TenantLimitMaps map(BpfMap limits, BpfMap windows) {
        return new TenantLimitMaps(limits, MapMemory.map(windows, SharedStructs.TENANT_WINDOW,
                SharedStructs.TENANT_LIMIT_SLOTS, "tenant windows array"));
    }

    public TenantWindows windows() {
        return windows;
    }

    public void put(Ipv4Prefix prefix, TenantWindows.Limit limit) {
        limits.update(TenantPolicyMap.key(prefix), value(limit), BpfMap.BPF_ANY);
    }

    public boolean remove(Ipv4Prefix prefix) {
        return limits.delete(TenantPolicyMap.key(prefix));
    }

    /** The limit XDP applies to one source address (longest matching prefix). */
    public Optional<TenantWindows.Limit> limitFor(Inet4Address source) {
        return limits.lookup(TenantPolicyMap.key(Ipv4Prefix.host(source))).map(TenantLimitMaps::decode);
    }

    public Map<Ipv4Prefix, TenantWindows.Limit> entries() {
        Map<Ipv4Prefix, TenantWindows.Limit> entries = new LinkedHashMap<>();
        for (byte[] key : limits.keys()) {
            limits.lookup(key).map(TenantLimitMaps::decode).ifPresent(l -> entries.put(TenantPolicyMap.decodeKey(key), l));
        }
        return entries;
    }

    /** struct tenant_limit, host order. */
    static byte[] value(TenantWindows.Limit limit) {
        return ByteBuffer.allocate(TENANT_LIMIT.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(TENANT_LIMIT.offset("slot"), limit.slot())
                .putInt(TENANT_LIMIT.offset("requests_per_minute"), limit.requestsPerMinute())
                .putLong(TENANT_LIMIT.offset("tokens_per_minute"), limit.tokensPerMinute())
                .putLong(TENANT_LIMIT.offset("tokens_whole"), limit.tokensWhole())
                .putInt(TENANT_LIMIT.offset("output_tokens"), limit.outputTokens())
                .array();
    }

    static TenantWindows.Limit decode(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        return new TenantWindows.Limit(b.getInt(TENANT_LIMIT.offset("slot")) & (SharedStructs.TENANT_LIMIT_SLOTS - 1),
                b.getInt(TENANT_LIMIT.offset("requests_per_minute")), b.getLong(TENANT_LIMIT.offset("tokens_per_minute")),
                b.getLong(TENANT_LIMIT.offset("tokens_whole")), b.getInt(TENANT_LIMIT.offset("output_tokens")));
    }

    @Override
    public void close() {
        windowsMemory.close();
    }
}
