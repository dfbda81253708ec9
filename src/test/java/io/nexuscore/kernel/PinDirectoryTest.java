package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.PinDirectory;
import io.nexuscore.kernel.libbpf.BpfFs;
import io.nexuscore.kernel.libbpf.BpfMap;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.KernelConfig;
import io.nexuscore.testing.Privileged;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pin directory in the real bpffs: created 0700 and root's; one that another user made first,
 * one writable by a group, a symlink in its place and a symlinked pin all stop the start with an
 * error naming the path. The checks run before any program is loaded.
 */
class PinDirectoryTest {

    private static final int NOBODY = 65534;

    @BeforeAll
    static void root() {
        KernelTestSupport.requireKernel(); // root and bpffs
        Privileged.require(Privileged.isRoot(), "chown needs root");
        BpfFs.ensureMounted();
    }

    @Test
    void aNewPinDirectoryIs0700AndRoots() {
        Path pinDir = KernelTestSupport.uniquePinDir();
        try {
            BpfFs.createDirectories(pinDir);
            assertEquals("700 root", Shell.ok("stat", "-c", "%a %U", pinDir.toString()).strip());
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }

    @Test
    void aLoadedRoutersPinDirectoryIs700Root() {
        Path pinDir = KernelTestSupport.uniquePinDir();
        try {
            KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING, Set.of(8080),
                    KernelConfig.XdpMode.GENERIC).close();
            assertEquals("700 root", Shell.ok("stat", "-c", "%a %U", pinDir.toString()).strip());
            assertTrue(Files.exists(pinDir.resolve("score_thresholds")), "the maps are pinned in it");
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }

    @Test
    void aPinDirectoryAnotherUserCreatedStopsTheStartNamingIt() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        Files.createDirectory(pinDir, PosixFilePermissions.asFileAttribute(PinDirectory.OWNER_ONLY));
        Shell.ok("chown", NOBODY + ":" + NOBODY, pinDir.toString());
        try {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> KernelDataPath.loadWithoutAttaching(
                    pinDir, KernelTestSupport.DEFAULT_SCORING, Set.of(8080), KernelConfig.XdpMode.GENERIC).close());
            assertTrue(e.getMessage().contains(pinDir.toString()) && e.getMessage().contains("uid " + NOBODY), e.getMessage());
            assertTrue(Files.isDirectory(pinDir), "the refused directory is left for the operator to inspect");
            try (var entries = Files.list(pinDir)) {
                assertEquals(0, entries.count(), "nothing was pinned into it");
            }
        } finally {
            Files.deleteIfExists(pinDir);
        }
    }

    @Test
    void aGroupWritablePinDirectoryIsRefused() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        Files.createDirectory(pinDir);
        Files.setPosixFilePermissions(pinDir, PosixFilePermissions.fromString("rwxrwx---"));
        try {
            PinDirectory.Refused e = assertThrows(PinDirectory.Refused.class, () -> BpfFs.createDirectories(pinDir));
            assertTrue(e.getMessage().contains(pinDir.toString()) && e.getMessage().contains("chmod 700"), e.getMessage());
        } finally {
            Files.deleteIfExists(pinDir);
        }
    }

    @Test
    void aSymlinkInPlaceOfThePinDirectoryIsRefused() throws Exception {
        Path target = KernelTestSupport.uniquePinDir();
        Path link = KernelTestSupport.uniquePinDir();
        Files.createDirectory(target, PosixFilePermissions.asFileAttribute(PinDirectory.OWNER_ONLY));
        Files.createSymbolicLink(link, target);
        try {
            PinDirectory.Refused e = assertThrows(PinDirectory.Refused.class, () -> BpfFs.createDirectories(link));
            assertTrue(e.getMessage().contains(link + " is a symlink"), e.getMessage());
        } finally {
            Files.deleteIfExists(link);
            Files.deleteIfExists(target);
        }
    }

    @Test
    void aSymlinkedPinIsNeverOpened() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        Path elsewhere = KernelTestSupport.uniquePinDir();
        BpfFs.createDirectories(pinDir);
        BpfFs.createDirectories(elsewhere);
        try {
            Shell.ok("bpftool", "map", "create", elsewhere.resolve("score_thresholds").toString(), "type", "array",
                    "key", "4", "value", "8", "entries", "1", "name", "score_thresholds");
            Files.createSymbolicLink(pinDir.resolve("score_thresholds"), elsewhere.resolve("score_thresholds"));
            PinDirectory.Refused e = assertThrows(PinDirectory.Refused.class,
                    () -> BpfMap.openPinned(pinDir, "score_thresholds", 4, 8).close());
            assertTrue(e.getMessage().contains(pinDir.resolve("score_thresholds") + " is a symlink"), e.getMessage());
        } finally {
            Files.deleteIfExists(pinDir.resolve("score_thresholds"));
            Files.deleteIfExists(elsewhere.resolve("score_thresholds"));
            Files.deleteIfExists(pinDir);
            Files.deleteIfExists(elsewhere);
        }
    }

    @Test
    void theMountScriptMountsBpffs0700() throws Exception {
        String script = Files.readString(Path.of("scripts/mount-bpffs.sh"));
        assertTrue(script.contains("mount -t bpf -o " + BpfFs.MOUNT_OPTIONS + " bpf /sys/fs/bpf"),
                "scripts/mount-bpffs.sh and BpfFs.MOUNT_OPTIONS drifted apart");
        Privileged.require(Shell.run("which", "unshare").exitCode() == 0, "unshare(1) is not installed");
        // A private mount namespace: the host's bpffs (and every pin in it) stays as it is.
        String mode = Shell.ok("unshare", "-m", "--propagation", "private", "bash", "-c",
                "umount -l /sys/fs/bpf && scripts/mount-bpffs.sh >/dev/null && stat -c %a /sys/fs/bpf").strip();
        assertEquals("1700", mode, "root only (bpffs always adds the sticky bit to its root; the default is 1777)");
    }
}
