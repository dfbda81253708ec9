package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.testing.Privileged;

import static org.junit.jupiter.api.Assertions.fail;

import io.nexuscore.config.KernelConfig;
import io.nexuscore.config.ScoringConfig;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.FourTuple;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/** The skip rule for kernel tests, and per-run pin directories. */
public final class KernelTestSupport {

    public static final ScoringConfig DEFAULT_SCORING = new ScoringConfig(Thresholds.DEFAULT, ScoreWeights.DEFAULT);

    private KernelTestSupport() {
    }

    /** Outside CI a kernel test may skip, saying why; with CI=true a missing privilege fails it. */
    public static void requireKernel() {
        Optional<String> missing = KernelDataPath.missingPrivilege();
        Privileged.require(missing.isEmpty(), "kernel test needs eBPF privileges: " + missing.orElse(""));
    }

    /** A fresh pin directory under /sys/fs/bpf for one test run. */
    public static Path uniquePinDir() {
        return Path.of("/sys/fs/bpf", "nxtest-" + UUID.randomUUID().toString().substring(0, 8));
    }

    /** Loads without attaching (BPF_PROG_TEST_RUN) into a fresh pin directory. */
    public static KernelDataPath loadForTestRun(ScoringConfig scoring, Set<Integer> ports) {
        return KernelDataPath.loadWithoutAttaching(uniquePinDir(), scoring, ports, KernelConfig.XdpMode.GENERIC);
    }

    /**
     * {@code count} client ports whose 4-tuples ({@code client}:port to {@code router}:{@code port})
     * share one verdict slot, found with Java's slot hash (the kernel's, VerdictSlotsTest checks).
     */
    public static List<Integer> collidingClientPorts(int count, InetAddress client, InetAddress router, int port) {
        int slots = client instanceof java.net.Inet6Address ? SharedStructs.VERDICT_SLOTS6 : SharedStructs.VERDICT_SLOTS;
        Map<Integer, List<Integer>> bySlot = new HashMap<>();
        for (int p = 1024; p < 65536; p++) {
            FourTuple t = new FourTuple(client, p, router, port);
            List<Integer> ports = bySlot.computeIfAbsent(SharedStructs.slotIndex(SharedStructs.flowKey(t), slots),
                    k -> new ArrayList<>());
            ports.add(p);
            if (ports.size() == count) {
                return ports;
            }
        }
        throw new IllegalStateException("no " + count + " client ports share a slot");
    }

    /** True when a bpf_link on the host holds program {@code programId} (how tcx attachments show). */
    public static boolean linkHolds(int programId) {
        return Shell.ok("sh", "-c", "bpftool -j link show | jq -r '.[].prog_id'").lines()
                .anyMatch(id -> id.equals(String.valueOf(programId)));
    }

    /** Closes and removes the pins, whatever happened. */
    public static void dispose(KernelDataPath path) {
        if (path != null) {
            try {
                path.close();
            } finally {
                path.removePins();
            }
        }
    }
}
