package io.nexuscore.tiers;

import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;

/**
 * Pins the calling thread to a CPU set with libc {@code sched_setaffinity(0, size, mask)}, through
 * the router's one libc binding ({@link LibC}). Only CPUs that exist here count: a set naming absent
 * CPUs is skipped with one log line (a config written for a bigger machine still starts).
 */
final class CpuAffinity {

    private static final System.Logger LOG = System.getLogger(CpuAffinity.class.getName());

    private CpuAffinity() {
    }

    /** CPUs this machine has online (from /sys/devices/system/cpu/online, e.g. "0-1"). */
    static BitSet onlineCpus() {
        BitSet online = new BitSet();
        try {
            for (String part : Files.readString(Path.of("/sys/devices/system/cpu/online")).trim().split(",")) {
                String[] range = part.split("-");
                int from = Integer.parseInt(range[0]);
                int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                online.set(from, to + 1);
            }
        } catch (IOException | RuntimeException e) {
            online.set(0, java.lang.Runtime.getRuntime().availableProcessors());
        }
        return online;
    }

    /**
     * Whether {@code cpus} can be used for pinning here: false for an empty set, and false (with one
     * log line) when it names a CPU this machine does not have online.
     *
     * @param who names the threads in the message, e.g. "tier nano"
     */
    static boolean usable(List<Integer> cpus, String who) {
        if (cpus.isEmpty()) {
            return false;
        }
        BitSet online = onlineCpus();
        for (int cpu : cpus) {
            if (!online.get(cpu)) {
                LOG.log(System.Logger.Level.INFO, who + ": CPU " + cpu + " of " + cpus + " is not online here (online: "
                        + online + "); workers are not pinned");
                return false;
            }
        }
        return true;
    }

    /**
     * Pins the current thread to {@code cpus} (check {@link #usable} first).
     *
     * @param who names the thread in messages, e.g. "tier nano worker 3"
     * @throws io.nexuscore.kernel.libbpf.BpfException when the kernel refuses, naming the call, the threads and the errno
     */
    static void pinCurrentThread(List<Integer> cpus, String who) {
        int maxCpu = cpus.stream().mapToInt(Integer::intValue).max().orElseThrow();
        // cpu_set_t is an array of unsigned longs: round the mask up to whole 8-byte words.
        byte[] mask = new byte[((maxCpu / 64) + 1) * 8];
        for (int cpu : cpus) {
            mask[cpu / 8] |= (byte) (1 << (cpu % 8));
        }
        Native.check(LibC.get().sched_setaffinity(0, mask.length, mask), "sched_setaffinity", who + ", cpus " + cpus);
    }
}
