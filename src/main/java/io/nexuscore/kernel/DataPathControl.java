package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.kernel.maps.NotInKernelMode;
import io.nexuscore.classify.Tier;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the control plane may do with the classifier's programs: reload them, read their run
 * statistics and the kernel's per-tier counters, and describe the mode and attachment. In kernel
 * mode it is {@link KernelDataPathControl}; in user space {@link #userSpace}. Every method may make
 * a syscall: call them on worker threads only.
 */
public interface DataPathControl {

    /** {@code "kernel"} or {@code "user"}. */
    String mode();

    /** Attachment state for /healthz: interfaces and the program ids attached there, or why none. */
    Map<String, Object> attachment();

    /** Requests classified per tier by the kernel (per-CPU sums of {@code tier_counters}); empty in user space. */
    Map<Tier, Long> tierCounters();

    /** Run time and run count per program (bpf_stats), when the kernel collects them. */
    List<ProgramStats> programStats();

    /**
     * Replaces the eBPF programs, keeping the maps.
     *
     * @param object an object file on this host, or empty for the one packed in the jar
     * @throws NotInKernelMode in user space
     * @throws IllegalArgumentException when the object cannot be used (missing, not an eBPF object)
     */
    ReloadResult reload(Optional<Path> object);

    /** User-space mode: no programs, no counters; reload is refused. */
    static DataPathControl userSpace(String reason) {
        return new DataPathControl() {
            @Override
            public String mode() {
                return "user";
            }

            @Override
            public Map<String, Object> attachment() {
                return Map.of("attached", false, "reason", reason);
            }

            @Override
            public Map<Tier, Long> tierCounters() {
                return Map.of();
            }

            @Override
            public List<ProgramStats> programStats() {
                return List.of();
            }

            @Override
            public ReloadResult reload(Optional<Path> object) {
                throw new NotInKernelMode("reloading the classifier programs");
            }
        };
    }
}
