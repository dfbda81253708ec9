package io.nexuscore.tenants.limits;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.TenantLimitMaps;
import io.nexuscore.kernel.maps.TenantWindows;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.TenantPolicies;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.Inet4Address;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Tenants by source prefix for limits: a request that names no tenant is the tenant whose prefix
 * (its floor's, in {@link TenantPolicies}) holds its address, when that tenant has limits
 * ({@link #tenantAt}). In kernel mode XDP counts those tenants' minute limits (nexus_limits.bpf.h):
 * each gets a slot of {@code tenant_windows}, and its prefix an entry of {@code tenant_limits} with
 * this router's share. {@link #sync} brings both in line with the limits, the prefixes and the fleet's
 * size; the router calls it every second, so a change reaches the kernel within a second.
 */
public final class KernelLimitSlots {

    private static final Logger LOG = System.getLogger(KernelLimitSlots.class.getName());

    private final Optional<TenantLimitMaps> maps;
    private final TenantPolicies prefixes;
    private final TenantLimitStore store;
    private final FleetShare share;
    private final int outputTokens;
    private final Map<String, Integer> slots = new HashMap<>();
    /** prefix -> tenant, as last written to the kernel. */
    private volatile Map<Ipv4Prefix, String> owners = Map.of();

    /** @param maps the kernel's maps; empty in user space (prefix attribution only, nothing counted in the kernel) */
    public KernelLimitSlots(Optional<TenantLimitMaps> maps, TenantPolicies prefixes, TenantLimitStore store, FleetShare share,
                            long assumedOutputTokens) {
        this.maps = maps;
        this.prefixes = prefixes;
        this.store = store;
        this.share = share;
        this.outputTokens = (int) Math.min(Integer.MAX_VALUE, assumedOutputTokens);
    }

    /** The kernel's windows; only in kernel mode (a tenant has a slot only there). */
    public TenantWindows windows() {
        return maps.orElseThrow(() -> new IllegalStateException("no kernel tenant windows in user space")).windows();
    }

    /** The slot XDP counts {@code tenant} in, when it has one. */
    public synchronized Optional<Integer> slotOf(String tenant) {
        return Optional.ofNullable(slots.get(tenant));
    }

    /** The tenant with limits whose prefix holds {@code source} (longest prefix). */
    public Optional<String> tenantAt(Inet4Address source) {
        int address = Ipv4Prefix.host(source).address();
        String best = null;
        int bestLength = -1;
        for (Map.Entry<Ipv4Prefix, String> e : owners.entrySet()) {
            if (e.getKey().contains(address) && e.getKey().length() > bestLength) {
                best = e.getValue();
                bestLength = e.getKey().length();
            }
        }
        return Optional.ofNullable(best);
    }

    /** Rewrites tenant_limits from the limits, the prefixes and the fleet share; frees unused slots. */
    public synchronized void sync() {
        Map<Ipv4Prefix, String> wanted = new HashMap<>();
        Map<Ipv4Prefix, TenantWindows.Limit> entries = new HashMap<>();
        Set<String> counted = new HashSet<>();
        for (Map.Entry<String, TenantPolicies.TenantPolicy> p : prefixes.list().entrySet()) {
            String tenant = p.getKey();
            Optional<TenantLimits> whole = store.of(tenant);
            if (whole.isEmpty() || whole.get().none()) {
                continue;
            }
            wanted.put(p.getValue().prefix(), tenant);
            if (maps.isEmpty() || whole.get().requestsPerMinute() == TenantLimits.UNLIMITED
                    && whole.get().tokensPerMinute() == TenantLimits.UNLIMITED) {
                continue;
            }
            Optional<Integer> slot = slotFor(tenant);
            if (slot.isEmpty()) {
                continue;
            }
            TenantLimits mine = share.of(whole.get());
            entries.put(p.getValue().prefix(), new TenantWindows.Limit(slot.get(),
                    (int) Math.min(Integer.MAX_VALUE, mine.requestsPerMinute()), mine.tokensPerMinute(),
                    whole.get().tokensPerMinute(), outputTokens));
            counted.add(tenant);
        }
        if (maps.isPresent()) {
            for (Map.Entry<Ipv4Prefix, TenantWindows.Limit> e : entries.entrySet()) {
                maps.get().put(e.getKey(), e.getValue());
            }
            for (Ipv4Prefix stale : maps.get().entries().keySet()) {
                if (!entries.containsKey(stale)) {
                    maps.get().remove(stale);
                }
            }
        }
        slots.keySet().retainAll(counted);
        owners = Map.copyOf(wanted);
    }

    private Optional<Integer> slotFor(String tenant) {
        Integer held = slots.get(tenant);
        if (held != null) {
            return Optional.of(held);
        }
        Set<Integer> used = new HashSet<>(slots.values());
        for (int slot = 0; slot < SharedStructs.TENANT_LIMIT_SLOTS; slot++) {
            if (!used.contains(slot)) {
                windows().clear(slot); // a slot another tenant held starts empty
                slots.put(tenant, slot);
                return Optional.of(slot);
            }
        }
        LOG.log(Level.WARNING, "tenant limits: all " + SharedStructs.TENANT_LIMIT_SLOTS + " kernel slots are taken; "
                + "tenant " + tenant + " is counted in user space only");
        return Optional.empty();
    }
}
