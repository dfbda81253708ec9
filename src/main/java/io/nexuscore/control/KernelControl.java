package io.nexuscore.control;

import io.nexuscore.tenants.TenantPolicies;

import io.nexuscore.adapt.AdaptiveSettings;
import io.nexuscore.adapt.AdaptiveStatus;
import io.nexuscore.adapt.Recalibration;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Tier;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the control plane needs from the classifier, kernel or user space. Every method may make a
 * syscall: the control plane calls them on worker threads only.
 *
 * <p>In kernel mode the implementation adapts {@code io.nexuscore.bpf} (pinned maps, bpf_stats);
 * in user space it is {@link UserSpaceKernelControl}.
 */
public interface KernelControl {

    /** The live thresholds (the pinned {@code score_thresholds} map in kernel mode). */
    ThresholdStore thresholds();

    /**
     * True when the live thresholds were just initialised from the configuration (a new map, or user
     * space) and a saved state file should be restored over them; false when they survived in a pinned
     * map, which is newer than any file.
     */
    boolean thresholdsFresh();

    /** Requests classified per tier by the kernel (per-CPU sums of {@code tier_counters}); empty in user space. */
    Map<Tier, Long> tierCounters();

    /** The tenant floors ({@code tenant_policy} in kernel mode). */
    TenantPolicies tenants();

    /**
     * Replaces the eBPF programs, keeping the maps.
     *
     * @param object an object file on this host, or empty for the one packed in the jar
     * @throws NotInKernelMode in user space
     * @throws IllegalArgumentException when the object cannot be used (missing, not an eBPF object)
     */
    ReloadResult reload(Optional<Path> object);

    /** Run time and run count per attached program (bpf_stats), when the kernel collects them. */
    List<ProgramStats> programStats();

    /**
     * The kernel's latency feedback loop: settings and what it saw.
     *
     * @throws NotInKernelMode in user space
     */
    default AdaptiveStatus adaptive() {
        throw new NotInKernelMode("the adaptive recalibration loop");
    }

    /**
     * Replaces the loop's settings (applied at the next timer period; a new period at once).
     *
     * @throws NotInKernelMode in user space
     */
    default AdaptiveStatus configureAdaptive(AdaptiveSettings settings) {
        throw new NotInKernelMode("the adaptive recalibration loop");
    }

    /** The kernel loop's last nano_max change, so that the control plane can attribute it; empty in user space. */
    default Optional<Recalibration> lastRecalibration() {
        return Optional.empty();
    }

    /** {@code "kernel"} or {@code "user"}. */
    String mode();

    /** Attachment state for /healthz: interfaces, XDP mode, attached program ids. */
    Map<String, Object> attachment();

    /** Program ids before and after a reload, keyed by program name. */
    record ReloadResult(Map<String, Long> oldProgramIds, Map<String, Long> newProgramIds) {
        public ReloadResult {
            oldProgramIds = Map.copyOf(oldProgramIds);
            newProgramIds = Map.copyOf(newProgramIds);
        }
    }

    /** bpf_stats of one program: cumulative run time and run count since stats were enabled. */
    record ProgramStats(String program, long runTimeNs, long runCount) {
    }

    /** The operation needs the kernel data path, and the router runs in user space. */
    final class NotInKernelMode extends RuntimeException {
        public NotInKernelMode(String operation) {
            super(operation + " needs the kernel data path; the router runs in user-space mode");
        }
    }
}
