package io.nexuscore.control;
import io.nexuscore.tenants.TenantPolicies;

import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stands in for the kernel data path (built in the bpf package) where a test needs what only kernel
 * mode has: a reload that succeeds, tier counters, program stats. Thresholds and tenants are the
 * product's in-memory ones; the real kernel adapter is exercised by the kernel tests.
 */
final class TestKernel implements KernelControl {

    private final UserSpaceKernelControl memory;
    private final ThresholdStore thresholds;
    private final boolean fresh;
    private final AtomicLong nextProgramId = new AtomicLong(100);
    private volatile Map<String, Long> programIds;

    TestKernel(Thresholds initial, boolean fresh) {
        this(null, initial, fresh);
    }

    /** With the given threshold store (e.g. a real pinned map) instead of memory. */
    TestKernel(ThresholdStore store, Thresholds initial, boolean fresh) {
        this.memory = new UserSpaceKernelControl(initial, "test");
        this.thresholds = store == null ? memory.thresholds() : store;
        this.fresh = fresh;
        this.programIds = Map.of("xdp", nextProgramId.getAndIncrement(), "tc", nextProgramId.getAndIncrement());
    }

    @Override
    public ThresholdStore thresholds() {
        return thresholds;
    }

    @Override
    public boolean thresholdsFresh() {
        return fresh;
    }

    @Override
    public Map<Tier, Long> tierCounters() {
        return Map.of(Tier.NANO, 7L, Tier.SMALL, 3L, Tier.LARGE, 1L);
    }

    @Override
    public TenantPolicies tenants() {
        return memory.tenants();
    }

    @Override
    public ReloadResult reload(Optional<Path> object) {
        if (object.isPresent() && !object.get().toString().endsWith(".o")) {
            throw new IllegalArgumentException(object.get() + " is not an eBPF object file");
        }
        Map<String, Long> old = programIds;
        programIds = Map.of("xdp", nextProgramId.getAndIncrement(), "tc", nextProgramId.getAndIncrement());
        return new ReloadResult(old, programIds);
    }

    @Override
    public List<ProgramStats> programStats() {
        return List.of(new ProgramStats("xdp", 130_000, 1_000), new ProgramStats("tc", 90_000, 1_000));
    }

    @Override
    public String mode() {
        return "kernel";
    }

    @Override
    public Map<String, Object> attachment() {
        return Map.of("interfaces", List.of("lo"), "xdp_mode", "generic", "program_ids", programIds);
    }
}
