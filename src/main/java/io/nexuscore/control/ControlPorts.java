package io.nexuscore.control;

import io.nexuscore.kernel.maps.AdaptiveControl;
import io.nexuscore.kernel.DataPathControl;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.fleet.FleetStatus;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.tenants.TenantPolicies;
import io.nexuscore.tenants.limits.LimitGate;

/**
 * What the control plane serves, one port per feature. Every port may make syscalls (kernel mode):
 * the control plane calls them on worker threads only.
 *
 * @param thresholds      the live thresholds (classify; the pinned {@code score_thresholds} map in kernel mode)
 * @param thresholdsFresh true when the live thresholds were just initialised from the configuration (a
 *                        new map, or user space) and a saved state file should be restored over them;
 *                        false when they survived in a pinned map, which is newer than any file
 * @param tenants         tenant floors (tenants; {@code tenant_policy} in kernel mode)
 * @param adaptive        the kernel's latency feedback loop (adapt)
 * @param dataPath        the classifier programs: mode, attachment, counters, stats, reload (bpf)
 * @param keys            the data plane's API keys by tenant, hashed (tenants; the data plane reads them)
 * @param fleet           the fleet this router belongs to (fleet; {@link FleetStatus#NOT_IN_FLEET} when clustering is off)
 * @param limits          tenant limits and usage (tenants.limits; the data plane admits through the same gate)
 */
public record ControlPorts(ThresholdStore thresholds, boolean thresholdsFresh, TenantPolicies tenants,
                           AdaptiveControl adaptive, DataPathControl dataPath, TenantKeys keys, FleetStatus fleet,
                           LimitGate limits) {

    /** Without tenant limits of its own (a gate that admits everything). */
    public ControlPorts(ThresholdStore thresholds, boolean thresholdsFresh, TenantPolicies tenants,
                        AdaptiveControl adaptive, DataPathControl dataPath, TenantKeys keys, FleetStatus fleet) {
        this(thresholds, thresholdsFresh, tenants, adaptive, dataPath, keys, fleet, LimitGate.none());
    }

    /** A router on its own. */
    public ControlPorts(ThresholdStore thresholds, boolean thresholdsFresh, TenantPolicies tenants,
                        AdaptiveControl adaptive, DataPathControl dataPath, TenantKeys keys) {
        this(thresholds, thresholdsFresh, tenants, adaptive, dataPath, keys, FleetStatus.NOT_IN_FLEET);
    }

    /** The same ports, in a fleet. */
    public ControlPorts withFleet(FleetStatus status) {
        return new ControlPorts(thresholds, thresholdsFresh, tenants, adaptive, dataPath, keys, status, limits);
    }

    /** The same ports, serving the data plane's tenant limits. */
    public ControlPorts withLimits(LimitGate gate) {
        return new ControlPorts(thresholds, thresholdsFresh, tenants, adaptive, dataPath, keys, fleet, gate);
    }

    /** With API keys in memory only. */
    public ControlPorts(ThresholdStore thresholds, boolean thresholdsFresh, TenantPolicies tenants,
                        AdaptiveControl adaptive, DataPathControl dataPath) {
        this(thresholds, thresholdsFresh, tenants, adaptive, dataPath, TenantKeys.inMemory());
    }

    /** User-space mode over thresholds the data plane reads too, with in-memory tenant floors. */
    public static ControlPorts userSpace(ThresholdStore thresholds, InMemoryPrefixFloors floors, String reason) {
        return userSpace(thresholds, floors, TenantKeys.inMemory(), reason);
    }

    /** User-space mode over thresholds the data plane reads too, with in-memory tenant floors. */
    public static ControlPorts userSpace(ThresholdStore thresholds, InMemoryPrefixFloors floors, TenantKeys keys,
                                         String reason) {
        return new ControlPorts(thresholds, true, new PrefixTenantPolicies(floors), AdaptiveControl.NOT_IN_KERNEL_MODE,
                DataPathControl.userSpace(reason), keys);
    }

    /** User-space mode on its own (tests, tools). */
    public static ControlPorts userSpace(Thresholds initial, String reason) {
        return userSpace(new InMemoryThresholdStore(initial), new InMemoryPrefixFloors(), reason);
    }
}
