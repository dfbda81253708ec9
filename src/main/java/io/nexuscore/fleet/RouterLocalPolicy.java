package io.nexuscore.fleet;

import io.nexuscore.kernel.maps.AdaptiveControl;
import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.maps.NotInKernelMode;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.TenantPolicies;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.nexuscore.tenants.limits.TenantLimitStore;
import io.nexuscore.tenants.limits.TenantLimits;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The router's own stores as the fleet sees them: the same ports the REST control plane writes
 * (thresholds by compare-and-set, tenant floors, API keys, the kernel loop's settings). The control
 * plane's threshold poll then reports a fleet-applied change as an {@code external} threshold event
 * and saves it to the state file, the fallback when this router next starts alone.
 */
public final class RouterLocalPolicy implements LocalPolicy {

    private static final System.Logger LOG = System.getLogger(RouterLocalPolicy.class.getName());
    /** Compare-and-set rounds on the thresholds before the write waits for the next sync. */
    private static final int CAS_ATTEMPTS = 10;

    private final ThresholdStore thresholds;
    private final TenantPolicies tenants;
    private final TenantKeys keys;
    private final AdaptiveControl adaptive;
    private final TenantLimitStore limits;

    /** Tenant limits kept in memory only (tests). */
    public RouterLocalPolicy(ThresholdStore thresholds, TenantPolicies tenants, TenantKeys keys,
                             AdaptiveControl adaptive) {
        this(thresholds, tenants, keys, adaptive, TenantLimitStore.inMemory());
    }

    public RouterLocalPolicy(ThresholdStore thresholds, TenantPolicies tenants, TenantKeys keys,
                             AdaptiveControl adaptive, TenantLimitStore limits) {
        this.thresholds = thresholds;
        this.tenants = tenants;
        this.keys = keys;
        this.adaptive = adaptive;
        this.limits = limits;
    }

    @Override
    public State read() {
        ThresholdState t = thresholds.state();
        Writer writer = switch (t.writer()) {
            case ThresholdState.WRITER_API -> Writer.API;
            case ThresholdState.WRITER_KERNEL -> Writer.KERNEL;
            default -> Writer.OTHER;
        };
        // A value some tool wrote out of order is shared as what classification uses.
        return new State(PolicyContent.of(t.effective(), tenants.list(), keys.list(), adaptiveSettings(), limits.list()),
                writer, t.version());
    }

    private Optional<AdaptiveSettings> adaptiveSettings() {
        try {
            return Optional.of(adaptive.status().settings());
        } catch (NotInKernelMode e) {
            return Optional.empty();
        }
    }

    @Override
    public void apply(PolicyDelta delta, State seen) {
        if (delta.thresholds().isPresent()) {
            writeThresholds(delta, seen);
        }
        applyTenants(delta, seen);
        applyKeys(delta, seen);
        applyLimits(delta, seen);
        // Settings somebody changed here since the read (PATCH /adaptive mid-sync) keep that change.
        if (delta.adaptive().isPresent() && adaptiveSettings().equals(seen.content().adaptive())) {
            try {
                adaptive.configure(delta.adaptive().get());
            } catch (NotInKernelMode e) {
                // a user-space router has no loop: it carries the settings for the fleet, nothing more
            }
        }
    }

    /**
     * Field by field onto the stored pair, by compare-and-set. When another writer (a PATCH, the
     * kernel loop, a tool) moved a field since the agent read the stores, that field stands and the
     * delta's other field is laid beside it: the agent then sends only the other writer's field to
     * the fleet at the next sync. (Skipping the whole write instead lost the fleet's field for good:
     * the agent holds the fleet's document, so at the next sync the stale field looked like a local
     * edit and was sent back over the fleet's.)
     */
    private void writeThresholds(PolicyDelta delta, State seen) {
        Thresholds seenPair = seen.content().thresholds();
        for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            ThresholdState current = thresholds.state();
            Thresholds t = delta.thresholdsOnto(current.effective(), seenPair);
            if (current.thresholds().equals(Optional.of(t))
                    || thresholds.compareAndSet(current, current.next(t, writerAfterMerge(current, seenPair)))) {
                return;
            }
        }
        LOG.log(Level.WARNING, "fleet: {0} writers in a row beat the thresholds' write; the next sync tries again",
                CAS_ATTEMPTS);
    }

    /**
     * Who the merged pair is written as. With nothing written since the read, the fleet's change is
     * the control plane's ({@code WRITER_API}). When somebody wrote since, their field is what still
     * differs from the fleet's document, so the pair keeps their writer id: a kernel loop's step stays
     * a kernel step (node scope keeps it on this router, fleet scope proposes it once per period) and
     * a bpftool write stays external, instead of going to the fleet as an API edit.
     */
    private static int writerAfterMerge(ThresholdState current, Thresholds seenPair) {
        return current.effective().equals(seenPair) ? ThresholdState.WRITER_API : current.writer();
    }

    /**
     * Deletions first, so a prefix a tenant gave up is free for the tenant that takes it. Each write
     * is conditional on the tenant still holding what the agent read ({@link TenantPolicies#replace}):
     * a tenant somebody changed here since (a PUT or DELETE on /tenants mid-sync) keeps that change, as
     * the thresholds do, and it goes to the fleet at the next sync instead of being overwritten with
     * the fleet's older value and lost. The check and the write are one step under the store's lock,
     * so a PUT cannot land between them either.
     */
    private void applyTenants(PolicyDelta delta, State seen) {
        Map<String, TenantPolicy> read = seen.content().tenants();
        delta.tenants().forEach((id, policy) -> {
            if (policy.isEmpty()) {
                tenants.replace(id, Optional.ofNullable(read.get(id)), Optional.empty());
            }
        });
        List<Map.Entry<String, TenantPolicy>> puts = new ArrayList<>();
        delta.tenants().forEach((id, policy) -> policy.ifPresent(p -> puts.add(Map.entry(id, p))));
        retryInAnyOrder(puts, e -> tenants.replace(e.getKey(), Optional.ofNullable(read.get(e.getKey())),
                Optional.of(e.getValue())), TenantPolicies.PrefixInUse.class);
    }

    /**
     * Removals first, then the new lists; a hash moving between tenants may need a second pass. Each
     * write is conditional on the tenant's hashes still being what the agent read (see {@link #applyTenants}).
     */
    private void applyKeys(PolicyDelta delta, State seen) {
        Map<String, List<String>> read = seen.content().keys();
        List<Map.Entry<String, List<String>>> puts = new ArrayList<>();
        delta.keys().forEach((id, hashes) -> {
            if (hashes.isEmpty()) {
                keys.replace(id, read.getOrDefault(id, List.of()), List.of());
            } else {
                puts.add(Map.entry(id, hashes));
            }
        });
        retryInAnyOrder(puts, e -> keys.replace(e.getKey(), read.getOrDefault(e.getKey(), List.of()), e.getValue()),
                TenantKeys.KeyInUse.class);
    }

    /** Each write conditional on the tenant's limits still being what the agent read (see {@link #applyTenants}). */
    private void applyLimits(PolicyDelta delta, State seen) {
        Map<String, TenantLimits> read = seen.content().limits();
        delta.limits().forEach((id, next) -> limits.replace(id, Optional.ofNullable(read.get(id)),
                next.none() ? Optional.empty() : Optional.of(next)));
    }

    /**
     * Applies each change; one that conflicts with a change still to come (a prefix or key moving
     * between tenants) is retried after the others. Throws the conflict when a pass makes no progress.
     */
    private static <T> void retryInAnyOrder(List<T> changes, java.util.function.Consumer<T> apply,
                                            Class<? extends RuntimeException> conflict) {
        List<T> pending = new ArrayList<>(changes);
        while (!pending.isEmpty()) {
            List<T> failed = new ArrayList<>();
            RuntimeException last = null;
            for (T change : pending) {
                try {
                    apply.accept(change);
                } catch (RuntimeException e) {
                    if (!conflict.isInstance(e)) {
                        throw e;
                    }
                    failed.add(change);
                    last = e;
                }
            }
            if (failed.size() == pending.size()) {
                throw last;
            }
            pending = failed;
        }
    }
}
