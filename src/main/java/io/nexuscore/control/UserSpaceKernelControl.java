package io.nexuscore.control;

import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;

import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The classifier in user-space mode: no eBPF programs, thresholds and tenant floors in memory.
 * Reload is refused (409), there are no kernel counters or program stats.
 */
public final class UserSpaceKernelControl implements KernelControl {

    private final ThresholdStore thresholds;
    private final InMemoryPrefixFloors floors = new InMemoryPrefixFloors();
    private final PrefixTenantPolicies tenants = new PrefixTenantPolicies(floors);
    private final String reason;

    /**
     * @param initial the configured thresholds
     * @param reason  why the router runs in user space (shown by /healthz), e.g. "kernel.mode is user"
     */
    public UserSpaceKernelControl(Thresholds initial, String reason) {
        this(new InMemoryThresholdStore(initial), reason);
    }

    /** Over a store the data plane reads too, so a PATCH changes the next request's tier. */
    public UserSpaceKernelControl(ThresholdStore thresholds, String reason) {
        this.thresholds = thresholds;
        this.reason = reason;
    }

    @Override
    public ThresholdStore thresholds() {
        return thresholds;
    }

    @Override
    public boolean thresholdsFresh() {
        return true;
    }

    @Override
    public Map<Tier, Long> tierCounters() {
        return Map.of();
    }

    @Override
    public PrefixTenantPolicies tenants() {
        return tenants;
    }

    /** The tenant floors, for the data plane's user-space floor lookup ({@link InMemoryPrefixFloors#floorFor}). */
    public InMemoryPrefixFloors tenantFloors() {
        return floors;
    }

    @Override
    public ReloadResult reload(Optional<Path> object) {
        throw new NotInKernelMode("reloading the classifier programs");
    }

    @Override
    public List<ProgramStats> programStats() {
        return List.of();
    }

    @Override
    public String mode() {
        return "user";
    }

    @Override
    public Map<String, Object> attachment() {
        return Map.of("attached", false, "reason", reason);
    }
}
