package io.nexuscore.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.Privileged;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which files a classifier reload reads, on the real filesystem (no program is loaded): the object is
 * opened with openat(2) relative to a descriptor of kernel.reloadDir, never through a link, and every
 * directory above kernel.reloadDir must be one nobody but root can rename things in.
 */
class ReloadObjectsTest {

    @TempDir
    Path tmp;

    private Path reloadDir(Path parent) throws Exception {
        Path dir = Files.createDirectories(parent.resolve("reload"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        return dir;
    }

    @Test
    void anObjectInTheDirectoryIsCopiedByteForByte() throws Exception {
        Privileged.require(Privileged.isRoot(), "the rules want root's files");
        Path dir = reloadDir(tmp);
        byte[] bytes = "\u007fELF not really, but bytes".getBytes();
        Files.write(dir.resolve("classify.bpf.o"), bytes);
        Path copy = new ReloadObjects(Optional.of(dir)).privateCopy(dir.resolve("classify.bpf.o"));
        try {
            assertArrayEquals(bytes, Files.readAllBytes(copy));
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    @Test
    void aSymlinkedObjectIsRefused() throws Exception {
        Privileged.require(Privileged.isRoot(), "the rules want root's files");
        Path dir = reloadDir(tmp);
        Path real = Files.write(tmp.resolve("elsewhere.bpf.o"), new byte[] {1, 2, 3});
        Files.createSymbolicLink(dir.resolve("classify.bpf.o"), real);
        ForbiddenObject e = assertThrows(ForbiddenObject.class,
                () -> new ReloadObjects(Optional.of(dir)).privateCopy(dir.resolve("classify.bpf.o")));
        assertEquals("no-symlink", e.rule());
    }

    /** Today's code checked only the directory itself: a writable parent let anyone swap it. */
    @Test
    void aReloadDirectoryUnderAParentOthersCanWriteIsRefused() throws Exception {
        Privileged.require(Privileged.isRoot(), "the rules want root's files");
        Path shared = Files.createDirectories(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx")); // no sticky bit
        Path dir = reloadDir(shared);
        Files.write(dir.resolve("classify.bpf.o"), new byte[] {1, 2, 3});
        ForbiddenObject e = assertThrows(ForbiddenObject.class,
                () -> new ReloadObjects(Optional.of(dir)).privateCopy(dir.resolve("classify.bpf.o")));
        assertEquals("root-owned", e.rule());
        assertTrue(e.getMessage().contains(shared.toString()), e.getMessage());
    }
}
