package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfFs;
import io.nexuscore.kernel.libbpf.Sysctl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference count of a shared sysctl, kept as marker directories in the real bpffs next to two
 * routers' pins. The sysctl itself is a file under a test directory, so the host's
 * net.ipv4.tcp_fwmark_accept (which other routers on this machine rely on) is never touched.
 */
class SharedSysctlTest {

    @TempDir
    Path procSys;

    @Test
    void onlyTheLastUserRestoresTheValueTheFirstOneFound() throws Exception {
        KernelTestSupport.requireKernel(); // needs bpffs, mounted by root
        BpfFs.ensureMounted();
        Sysctl sysctl = new Sysctl("net.ipv4.tcp_fwmark_accept", procSys);
        Files.createDirectories(sysctl.path().getParent());
        Files.writeString(sysctl.path(), "0\n");
        Path first = KernelTestSupport.uniquePinDir();
        Path second = KernelTestSupport.uniquePinDir();
        try {
            SharedSysctl a = new SharedSysctl(sysctl, "1", first);
            SharedSysctl b = new SharedSysctl(sysctl, "1", second);
            a.acquire();
            assertEquals("1", sysctl.read());
            b.acquire();
            assertTrue(Files.isDirectory(second.resolve("sysctl_net_ipv4_tcp_fwmark_accept_was_0")),
                    "the second user records the value the first one found, not the 1 it sees now");

            a.release();
            assertEquals("1", sysctl.read(), "another router still needs it");
            assertFalse(Files.exists(first.resolve("sysctl_net_ipv4_tcp_fwmark_accept_was_0")));
            b.release();
            assertEquals("0", sysctl.read(), "the last user puts the original back");
        } finally {
            KernelDataPath.removePins(first);
            KernelDataPath.removePins(second);
        }
        assertFalse(Files.exists(first), "nothing left in bpffs");
        assertFalse(Files.exists(second));
    }

    @Test
    void markersAnotherUserPlantedOrThatHoldNoNumberAreIgnored() throws Exception {
        KernelTestSupport.requireKernel();
        BpfFs.ensureMounted();
        Sysctl sysctl = new Sysctl("net.ipv4.tcp_fwmark_accept", procSys);
        Files.createDirectories(sysctl.path().getParent());
        Files.writeString(sysctl.path(), "0\n");
        Path planted = KernelTestSupport.uniquePinDir(); // a local user's, as a 1777 bpffs allows
        Path junk = KernelTestSupport.uniquePinDir();    // root's, but its marker is no number
        Path own = KernelTestSupport.uniquePinDir();
        try {
            Files.createDirectories(planted.resolve("sysctl_net_ipv4_tcp_fwmark_accept_was_7"));
            Shell.ok("chown", "-R", "65534:65534", planted.toString());
            Files.createDirectories(junk.resolve("sysctl_net_ipv4_tcp_fwmark_accept_was_1x"));
            SharedSysctl router = new SharedSysctl(sysctl, "1", own);
            BpfFs.createDirectories(own);
            router.acquire();
            assertTrue(Files.isDirectory(own.resolve("sysctl_net_ipv4_tcp_fwmark_accept_was_0")),
                    "the value found in the sysctl is recorded, not the planted 7 or 1x");
            router.release();
            assertEquals("0", sysctl.read(), "the planted markers neither choose the value nor keep it from being restored");
        } finally {
            Shell.run("rm", "-r", planted.toString(), junk.toString());
            KernelDataPath.removePins(own);
        }
        assertFalse(Files.exists(own));
    }
}
