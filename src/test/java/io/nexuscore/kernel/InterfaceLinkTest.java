package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfException;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.libbpf.Native;
import io.nexuscore.kernel.libbpf.NetInterface;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.KernelConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The router holds its programs on an interface by bpf_links (XDP and tcx ingress), on a veth pair
 * (never lo): a router killed with SIGKILL leaves nothing attached and the next start succeeds; no
 * other tool displaces our XDP program by netlink while we run, and we never displace theirs; and
 * another tool's clsact qdisc and filters are neither needed nor touched.
 */
class InterfaceLinkTest {

    /** A classic-BPF cls_bpf filter ("return -1": match), what another tool might install. */
    private static final String[] FOREIGN_FILTER = {"bpf", "bytecode", "1,6 0 0 4294967295,"};

    @Test
    void aKilledRouterLeavesNothingAttachedAndTheNextStartSucceeds() throws Exception {
        KernelTestSupport.requireKernel();
        try (VethNetns veth = VethNetns.create()) {
            String dev = veth.hostInterface;
            Path pinDir = KernelTestSupport.uniquePinDir();
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), AttachedUntilKilled.class.getName(),
                    pinDir.toString(), dev).redirectErrorStream(true).start();
            try {
                String line = firstLineStartingWith(child, "attached ");
                String[] ids = line.split(" ");
                assertNotEquals("0", ids[1], line);
                assertTrue(xdpProgramIds(dev).contains(ids[1]), "the child's XDP program is on " + dev + ": " + line);
                assertTrue(KernelTestSupport.linkHolds(Integer.parseInt(ids[2])), "the child's tcx link holds its TC program: " + line);

                child.destroyForcibly(); // SIGKILL: no shutdown hook, no detach
                assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child exits");

                assertEquals("", xdpProgramIds(dev), "no XDP program left on " + dev);
                assertFalse(KernelTestSupport.linkHolds(Integer.parseInt(ids[2])), "no tcx link left holding the TC program");
                KernelDataPath next = KernelDataPath.load(config(pinDir, dev), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
                try {
                    KernelDataPath.Attachment attached = next.attachments().get(0);
                    assertEquals(String.valueOf(attached.xdpProgramId()), xdpProgramIds(dev), "the next start attached");
                    assertNotEquals(0, attached.tcProgramId());
                } finally {
                    KernelTestSupport.dispose(next);
                }
            } finally {
                child.destroyForcibly();
                child.waitFor(30, TimeUnit.SECONDS);
                KernelDataPath.removePins(pinDir); // the killed child's sysctl reference too
            }
        }
    }

    @Test
    void nobodyDisplacesOurXdpProgramAndWeNeverDisplaceTheirs() {
        KernelTestSupport.requireKernel();
        try (VethNetns veth = VethNetns.create()) {
            String dev = veth.hostInterface;
            Path pinDir = KernelTestSupport.uniquePinDir();
            KernelDataPath kernel = KernelDataPath.load(config(pinDir, dev), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
            String ours;
            try {
                ours = xdpProgramIds(dev);
                assertEquals(String.valueOf(kernel.attachments().get(0).xdpProgramId()), ours);
                Shell.Result off = Shell.run("ip", "link", "set", "dev", dev, "xdpgeneric", "off");
                assertNotEquals(0, off.exitCode(), "netlink may not detach a link's program: " + off.output());
                assertEquals(ours, xdpProgramIds(dev), "still ours");
            } finally {
                KernelTestSupport.dispose(kernel);
            }
            assertEquals("", xdpProgramIds(dev), "a clean close detaches");

            // Someone else's XDP program, attached by netlink (a copy of ours stands in for it).
            KernelDataPath other = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
            try {
                BpfProgram theirs = other.programs().get(0);
                int foreign = theirs.id();
                Native.check(NetlinkXdp.LIB.bpf_xdp_attach(NetInterface.byName(dev).index(), theirs.fd(),
                        NetlinkXdp.XDP_FLAGS_SKB_MODE, null), "bpf_xdp_attach", dev);
                String linksBefore = links();
                BpfException busy = assertThrows(BpfException.class,
                        () -> KernelDataPath.load(config(pinDir, dev), KernelTestSupport.DEFAULT_SCORING, Set.of(8080)));
                assertTrue(busy.getMessage().contains("bpf_link_create(XDP)") && busy.getMessage().contains("EBUSY"),
                        busy.getMessage());
                assertEquals(String.valueOf(foreign), xdpProgramIds(dev), "theirs stays attached");
                assertEquals(linksBefore, links(), "the failed start left no link behind");
            } finally {
                Shell.run("ip", "link", "set", "dev", dev, "xdpgeneric", "off");
                KernelTestSupport.dispose(other);
                KernelDataPath.removePins(pinDir);
            }
        }
    }

    @Test
    void anotherToolsQdiscAndFiltersAreNeitherNeededNorTouched() {
        KernelTestSupport.requireKernel();
        try (VethNetns veth = VethNetns.create()) {
            String dev = veth.hostInterface;
            Path pinDir = KernelTestSupport.uniquePinDir();
            KernelDataPath alone = KernelDataPath.load(config(pinDir, dev), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
            try {
                assertFalse(Shell.ok("tc", "qdisc", "show", "dev", dev).contains("clsact"), "tcx needs no clsact qdisc");
                assertNotEquals(0, alone.attachments().get(0).tcProgramId());
            } finally {
                KernelTestSupport.dispose(alone);
            }

            // Their filter mirrors every packet to a spare interface; the action counts what it saw.
            String spare = dev.replace("nxh", "nxm");
            Shell.ok("ip", "link", "add", spare, "type", "veth", "peer", "name", spare + "p");
            try {
                Shell.ok("ip", "link", "set", spare, "up");
                Shell.ok("tc", "qdisc", "add", "dev", dev, "clsact");
                Shell.ok(concat(new String[] {"tc", "filter", "add", "dev", dev, "ingress", "pref", "1", "handle", "0x1"},
                        FOREIGN_FILTER, new String[] {"action", "mirred", "egress", "mirror", "dev", spare}));
                KernelDataPath beside = KernelDataPath.load(config(pinDir, dev), KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
                try {
                    assertTrue(KernelTestSupport.linkHolds(beside.attachments().get(0).tcProgramId()));
                    // Ours runs first (tcx) and hands every packet on (TCX_NEXT): their filter still sees the traffic.
                    long before = packetsTheirFilterSaw(dev);
                    Shell.run("ip", "netns", "exec", veth.namespace, "curl", "-s", "-m", "2",
                            "http://" + veth.hostAddress.getHostAddress() + ":9/");
                    assertTrue(packetsTheirFilterSaw(dev) > before, "their filter saw the connection's packets");
                } finally {
                    KernelTestSupport.dispose(beside);
                }
            } finally {
                Shell.run("ip", "link", "del", spare);
            }
            assertTrue(Shell.ok("tc", "filter", "show", "dev", dev, "ingress").contains("handle 0x1 "), "their filter stays");
            assertTrue(Shell.ok("tc", "qdisc", "show", "dev", dev).contains("clsact"), "their qdisc stays");
        }
    }

    /** The netlink attachment other tools (ip, xdp-loader) make; the router itself no longer does. */
    public interface NetlinkXdp {
        int XDP_FLAGS_SKB_MODE = 1 << 1;
        NetlinkXdp LIB = jnr.ffi.LibraryLoader.create(NetlinkXdp.class).load("bpf");

        int bpf_xdp_attach(int ifindex, int progFd, int flags, jnr.ffi.Pointer opts);
    }

    /** The packet count of the foreign filter's mirred action (`tc -s filter show`). */
    private static long packetsTheirFilterSaw(String dev) {
        String stats = Shell.ok("tc", "-s", "filter", "show", "dev", dev, "ingress");
        Matcher sent = Pattern.compile("Sent \\d+ bytes (\\d+) pkt").matcher(stats);
        if (!sent.find()) {
            throw new AssertionError("no action statistics:\n" + stats);
        }
        return Long.parseLong(sent.group(1));
    }

    private static KernelConfig config(Path pinDir, String dev) {
        return new KernelConfig(KernelConfig.Mode.KERNEL, pinDir, List.of(dev), KernelConfig.XdpMode.GENERIC);
    }

    /** Ids of the XDP programs `bpftool net show` lists on {@code dev}, space-separated ("" when none). */
    private static String xdpProgramIds(String dev) {
        return Shell.ok("sh", "-c", "bpftool -j net show dev " + dev + " | jq -r '[.[0].xdp[]?.id] | map(tostring) | join(\" \")'")
                .strip();
    }

    /** Every bpf_link on the host, as bpftool prints them. */
    private static String links() {
        return Shell.ok("bpftool", "link", "show");
    }

    private static String firstLineStartingWith(Process child, String prefix) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line;
            }
            seen.append(line).append('\n');
        }
        throw new AssertionError("the child exited before attaching:\n" + seen);
    }

    private static String[] concat(String[]... parts) {
        return Arrays.stream(parts).flatMap(Arrays::stream).toArray(String[]::new);
    }
}
