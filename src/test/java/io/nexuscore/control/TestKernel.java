package io.nexuscore.control;

import io.nexuscore.kernel.maps.AdaptiveControl;
import io.nexuscore.kernel.DataPathControl;
import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.kernel.ReloadResult;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stands in for the kernel data path (built in the bpf package) where a test needs what only kernel
 * mode has: a reload that succeeds, tier counters, program stats. Thresholds and tenants are the
 * product's in-memory ones; the real kernel adapter is exercised by the kernel tests.
 */
final class TestKernel implements DataPathControl {

    private final AtomicInteger nextProgramId = new AtomicInteger(100);
    private volatile int xdp = nextProgramId.getAndIncrement();
    private volatile int tc = nextProgramId.getAndIncrement();

    private TestKernel() {
    }

    static ControlPorts ports(Thresholds initial, boolean fresh) {
        return ports(null, initial, fresh);
    }

    /** With the given threshold store (e.g. a real pinned map) instead of memory. */
    static ControlPorts ports(ThresholdStore store, Thresholds initial, boolean fresh) {
        return new ControlPorts(store == null ? new InMemoryThresholdStore(initial) : store, fresh,
                new PrefixTenantPolicies(new InMemoryPrefixFloors()), AdaptiveControl.NOT_IN_KERNEL_MODE,
                new TestKernel());
    }

    @Override
    public Map<Tier, Long> tierCounters() {
        return Map.of(Tier.NANO, 7L, Tier.SMALL, 3L, Tier.LARGE, 1L);
    }

    @Override
    public synchronized ReloadResult reload(Optional<Path> object) {
        if (object.isPresent() && !object.get().toString().endsWith(".o")) {
            throw new IllegalArgumentException(object.get() + " is not an eBPF object file");
        }
        int newXdp = nextProgramId.getAndIncrement();
        int newTc = nextProgramId.getAndIncrement();
        ReloadResult result = new ReloadResult(object.map(Path::toString).orElse("test.bpf.o"), xdp, newXdp, tc, newTc);
        xdp = newXdp;
        tc = newTc;
        return result;
    }

    @Override
    public List<ProgramStats> programStats() {
        return List.of(new ProgramStats("xdp", 1, 130_000, 1_000), new ProgramStats("tc", 2, 90_000, 1_000));
    }

    @Override
    public String mode() {
        return "kernel";
    }

    @Override
    public Map<String, Object> attachment() {
        return Map.of("interfaces", List.of("lo"), "xdp_mode", "generic", "program_ids", Map.of("xdp", xdp, "tc", tc));
    }
}
