package io.nexuscore.bpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.KernelConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Leaving the host as found: on a veth pair (never lo), another tool's TC filters sit beside ours,
 * at our priority and at another one. Detaching the router removes its own filter only, and the
 * clsact qdisc only when nothing else is left on it.
 */
class TcDetachTest {

    /** A classic-BPF cls_bpf filter ("return -1": accept), what another tool might install. */
    private static final String[] FOREIGN = {"bpf", "bytecode", "1,6 0 0 4294967295,"};

    @Test
    void aForeignFilterAtOurPriorityAndTheQdiscSurviveOurDetach() {
        KernelTestSupport.requireKernel();
        try (VethNetns veth = VethNetns.create()) {
            String dev = veth.hostInterface;
            Shell.ok("tc", "qdisc", "add", "dev", dev, "clsact");
            Shell.ok(concat(new String[] {"tc", "filter", "add", "dev", dev, "ingress", "pref", "1", "handle", "0x1"}, FOREIGN));
            Path pinDir = KernelTestSupport.uniquePinDir();
            KernelDataPath kernel = KernelDataPath.load(new KernelConfig(KernelConfig.Mode.KERNEL, pinDir, List.of(dev),
                    KernelConfig.XdpMode.GENERIC), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
            try {
                assertTrue(filters(dev).contains("handle 0x4e58"), "ours attached: " + filters(dev));
            } finally {
                KernelTestSupport.dispose(kernel);
            }
            String left = filters(dev);
            assertTrue(left.contains("handle 0x1 "), "the foreign filter at priority 1 stays:\n" + left);
            assertTrue(!left.contains("0x4e58"), "ours is gone:\n" + left);
            assertTrue(Shell.ok("tc", "qdisc", "show", "dev", dev).contains("clsact"), "a qdisc we did not create stays");
        }
    }

    @Test
    void theQdiscWeCreatedStaysWhileAnotherToolUsesIt() {
        KernelTestSupport.requireKernel();
        try (VethNetns veth = VethNetns.create()) {
            String dev = veth.hostInterface;
            Path pinDir = KernelTestSupport.uniquePinDir();
            KernelDataPath kernel = KernelDataPath.load(new KernelConfig(KernelConfig.Mode.KERNEL, pinDir, List.of(dev),
                    KernelConfig.XdpMode.GENERIC), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
            try {
                // Added after ours, on the qdisc our attach created.
                Shell.ok(concat(new String[] {"tc", "filter", "add", "dev", dev, "egress", "pref", "7", "handle", "0x2"}, FOREIGN));
            } finally {
                KernelTestSupport.dispose(kernel);
            }
            assertTrue(Shell.ok("tc", "qdisc", "show", "dev", dev).contains("clsact"), "another tool's filter keeps the qdisc");
            assertTrue(Shell.ok("tc", "filter", "show", "dev", dev, "egress").contains("handle 0x2 "));

            // Left on purpose; once it is gone, a load that creates the qdisc takes it away again when empty.
            Shell.ok("tc", "qdisc", "del", "dev", dev, "clsact");
            KernelDataPath again = KernelDataPath.load(new KernelConfig(KernelConfig.Mode.KERNEL, pinDir, List.of(dev),
                    KernelConfig.XdpMode.GENERIC), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
            KernelTestSupport.dispose(again);
            assertEquals(false, Shell.ok("tc", "qdisc", "show", "dev", dev).contains("clsact"),
                    "an empty qdisc we created goes with us");
        }
    }

    private static String filters(String dev) {
        return Shell.ok("tc", "filter", "show", "dev", dev, "ingress");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
