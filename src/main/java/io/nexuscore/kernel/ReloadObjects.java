package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.PinDirectory;
import io.nexuscore.kernel.libbpf.Errno;
import io.nexuscore.kernel.libbpf.LibBpf;
import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Set;

/**
 * Which object files POST /classifier/reload may load: the router runs as root and a reload runs the
 * object's programs, so only files an administrator put in {@code kernel.reloadDir} qualify. Without
 * that setting only the object in the jar reloads. Each rule has a name the API reports:
 * <ul>
 *   <li>{@code reload-dir}: kernel.reloadDir is set;</li>
 *   <li>{@code inside-dir}: the path names a file directly in it (no "..", no symlinked parent);</li>
 *   <li>{@code root-owned}: the directory, every directory above it and the file belong to root and
 *       nobody else may write them (a sticky ancestor such as /tmp aside);</li>
 *   <li>{@code no-symlink}: the file itself is no symlink: it is opened with openat(2) relative to a
 *       descriptor of the directory (itself opened O_DIRECTORY|O_NOFOLLOW), with O_NOFOLLOW, so no
 *       name is resolved again from / after the checks;</li>
 *   <li>{@code regular-file}: it exists and is a regular file (a FIFO would block a reader forever:
 *       opened O_NONBLOCK, then refused);</li>
 *   <li>{@code size-cap}: at most {@link #MAX_BYTES};</li>
 *   <li>{@code program-set}: its programs are exactly the running object's (checked by the loader).</li>
 * </ul>
 * {@link #privateCopy} reads the file into a private temporary copy, outside any lock, so a slow or
 * hostile file never holds up the data path, /metrics or shutdown.
 */
public final class ReloadObjects {

    public static final long MAX_BYTES = 16L << 20;

    private final Optional<Path> dir;

    public ReloadObjects(Optional<Path> dir) {
        this.dir = dir;
    }

    /** A private copy of {@code requested} for the loader (the caller deletes it), or {@link ForbiddenObject}. */
    public Path privateCopy(Path requested) {
        Path allowed = dir.orElseThrow(() -> new ForbiddenObject("reload-dir", "reloading from a file is off "
                + "(kernel.reloadDir is not set); POST /classifier/reload without a body reloads the object in the jar"));
        if (!requested.isAbsolute() || !requested.normalize().equals(requested) || requested.getParent() == null) {
            throw new ForbiddenObject("inside-dir", requested + " is not a plain absolute path in " + allowed);
        }
        Path realDir;
        try {
            realDir = allowed.toRealPath();
            if (!requested.getParent().toRealPath().equals(realDir)) {
                throw new ForbiddenObject("inside-dir", requested + " is not in kernel.reloadDir " + allowed);
            }
            PinDirectory.verifyAncestors(realDir.getParent(), "kernel.reloadDir " + allowed);
        } catch (PinDirectory.Refused e) {
            throw new ForbiddenObject("root-owned", e.getMessage());
        } catch (IOException | UncheckedIOException e) {
            throw new ForbiddenObject("inside-dir", requested + ": " + e.getMessage());
        }
        // The directory by descriptor (O_NOFOLLOW: not a link swapped in since toRealPath), the file
        // relative to it: what was checked is what is read.
        int dirFd = LibC.get().open(realDir.toString(), LibC.O_RDONLY | LibC.O_DIRECTORY | LibC.O_NOFOLLOW | LibC.O_CLOEXEC);
        if (dirFd < 0) {
            int errno = jnr.ffi.LastError.getLastError(LibBpf.runtime());
            throw new ForbiddenObject("inside-dir", "kernel.reloadDir " + allowed + ": open: " + Errno.describe(errno));
        }
        int fd;
        try {
            Path openedDir = Path.of("/proc/self/fd/" + dirFd);
            requireRootOwned(openedDir, Files.readAttributes(openedDir, PosixFileAttributes.class), "kernel.reloadDir " + allowed);
            fd = LibC.get().openat(dirFd, requested.getFileName().toString(),
                    LibC.O_RDONLY | LibC.O_NOFOLLOW | LibC.O_NONBLOCK | LibC.O_CLOEXEC);
            if (fd < 0) {
                int errno = jnr.ffi.LastError.getLastError(LibBpf.runtime());
                throw errno == LibC.ELOOP
                        ? new ForbiddenObject("no-symlink", requested + " is a symbolic link")
                        : new ForbiddenObject("regular-file", requested + ": openat: " + Errno.describe(errno));
            }
        } catch (IOException e) {
            throw new ForbiddenObject("inside-dir", requested + ": " + e.getMessage());
        } finally {
            LibC.get().close(dirFd);
        }
        try {
            // The attributes of what was opened (the fd), not of whatever the name points to now.
            Path opened = Path.of("/proc/self/fd/" + fd);
            PosixFileAttributes attrs = Files.readAttributes(opened, PosixFileAttributes.class);
            if (!attrs.isRegularFile()) {
                throw new ForbiddenObject("regular-file", requested + " is not a regular file");
            }
            requireRootOwned(opened, attrs, requested.toString());
            if (attrs.size() > MAX_BYTES) {
                throw new ForbiddenObject("size-cap", requested + " is " + attrs.size() + " bytes, over " + MAX_BYTES);
            }
            byte[] bytes = readAll(fd, (int) attrs.size(), requested);
            Path copy = Files.createTempFile("nexus-reload", ".bpf.o"); // 0600
            Files.write(copy, bytes);
            return copy;
        } catch (IOException e) {
            throw new UncheckedIOException("reading reload object " + requested + ": " + e, e);
        } finally {
            LibC.get().close(fd);
        }
    }

    private static void requireRootOwned(Path path, PosixFileAttributes attrs, String what) throws IOException {
        int uid = (Integer) Files.getAttribute(path, "unix:uid");
        Set<PosixFilePermission> perms = attrs.permissions();
        if (uid != 0 || perms.contains(PosixFilePermission.GROUP_WRITE) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new ForbiddenObject("root-owned", what + " must belong to root and be writable by root only (uid "
                    + uid + ", mode " + java.nio.file.attribute.PosixFilePermissions.toString(perms) + ")");
        }
    }

    /** Reads up to {@code expected} bytes, refusing a file that grew past the cap while being read. */
    private static byte[] readAll(int fd, int expected, Path requested) {
        byte[] out = new byte[expected];
        int done = 0;
        while (done < expected) {
            byte[] chunk = new byte[Math.min(1 << 16, expected - done)];
            long n = LibC.get().read(fd, chunk, chunk.length);
            if (n < 0) {
                Native.check(-1, "read", requested.toString());
            }
            if (n == 0) {
                break;
            }
            System.arraycopy(chunk, 0, out, done, (int) n);
            done += (int) n;
        }
        if (LibC.get().read(fd, new byte[1], 1) > 0) {
            throw new ForbiddenObject("size-cap", requested + " grew while being read");
        }
        return done == expected ? out : java.util.Arrays.copyOf(out, done);
    }
}
