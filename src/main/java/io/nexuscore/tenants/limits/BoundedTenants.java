package io.nexuscore.tenants.limits;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Which tenant names get an entry of their own (a Prometheus series, a usage record): tenant names
 * may come from a header, client input, so only the first {@code bound} unproven names do; later ones
 * are {@value #OTHER}. Tenants the operator named (limits or API keys set) always do, outside the bound.
 */
final class BoundedTenants {

    static final String OTHER = "other";
    /** Names longer than this are cut (label values are client input). */
    static final int MAX_NAME = 64;

    private final int bound;
    private final Predicate<String> known;
    private final Set<String> admitted = ConcurrentHashMap.newKeySet();
    /** Unproven names holding a slot of the bound; guarded by this. */
    private int unproven;

    BoundedTenants(int bound, Predicate<String> known) {
        this.bound = bound;
        this.known = known;
    }

    /** The name {@code tenant} is counted under. */
    String nameOf(String tenant) {
        String name = tenant == null ? OTHER : tenant.length() > MAX_NAME ? tenant.substring(0, MAX_NAME) : tenant;
        if (admitted.contains(name)) {
            return name;
        }
        synchronized (this) {
            if (admitted.contains(name)) {
                return name;
            }
            boolean proven = known.test(name);
            if (!proven && unproven >= bound) {
                return OTHER;
            }
            if (!proven) {
                unproven++;
            }
            admitted.add(name);
            return name;
        }
    }
}
