package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.classify.Tier;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Prefix floors for user-space mode, with the longest-prefix match the kernel's LPM trie does. */
public final class InMemoryPrefixFloors implements PrefixFloors {

    private final Map<Ipv4Prefix, Tier> floors = new LinkedHashMap<>();

    @Override
    public synchronized void put(Ipv4Prefix prefix, Tier floor) {
        floors.put(prefix, floor);
    }

    @Override
    public int capacity() {
        return USER_SPACE_CAPACITY;
    }

    @Override
    public synchronized boolean remove(Ipv4Prefix prefix) {
        return floors.remove(prefix) != null;
    }

    @Override
    public synchronized Map<Ipv4Prefix, Tier> entries() {
        return new LinkedHashMap<>(floors);
    }

    /** The floor of the most specific prefix holding this host-order IPv4 address. */
    public synchronized Optional<Tier> floorFor(int ipv4) {
        return longestMatch(floors, ipv4);
    }

    /** The floor of the most specific prefix in {@code floors} holding the host-order IPv4 address. */
    static Optional<Tier> longestMatch(Map<Ipv4Prefix, Tier> floors, int ipv4) {
        Ipv4Prefix best = null;
        for (Ipv4Prefix p : floors.keySet()) {
            if (p.contains(ipv4) && (best == null || p.length() > best.length())) {
                best = p;
            }
        }
        return Optional.ofNullable(best).map(floors::get);
    }
}
