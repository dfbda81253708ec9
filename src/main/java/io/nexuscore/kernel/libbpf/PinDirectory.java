package io.nexuscore.kernel.libbpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;

/**
 * The pin directory is the router's own: whoever can write in it can unlink or swap the maps the
 * router reuses at its next start (thresholds, tenant floors, the verdict store). /sys/fs/bpf is
 * often mounted 1777, so a local user can create {@code /sys/fs/bpf/nexuscore} before the first
 * start. Hence: a missing directory is created 0700; an existing one (and every directory above it)
 * must be owned by root (or this process's user), must not be a symlink and must not be writable
 * by group or others (an ancestor may be, when sticky, as /sys/fs/bpf and /tmp are); pins are
 * opened only when they are not symlinks. Anything else stops the start with an error naming the path.
 */
public final class PinDirectory {

    public static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final int ROOT_UID = 0;

    private PinDirectory() {
    }

    /** The check failed: the message names the path and how to fix it. */
    public static final class Refused extends IllegalStateException {
        Refused(String message) {
            super(message);
        }
    }

    /** Creates what is missing of {@code dir} (each level 0700), then {@link #verify}s it. */
    public static void prepare(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = abs; p != null && !Files.exists(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
            missing.push(p);
        }
        verifyAncestors(missing.isEmpty() ? abs.getParent() : missing.peek().getParent()); // before creating under them
        for (Path p : missing) {
            try {
                Files.createDirectory(p, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                // The umask can only remove bits, but a default ACL could add some: set the mode outright.
                Files.setPosixFilePermissions(p, OWNER_ONLY);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create pin directory " + p + ": " + e.getMessage(), e);
            }
        }
        verify(abs);
    }

    /** {@code dir} and its ancestors: no symlink, owned by root or us, not writable by others (see the class comment). */
    public static void verify(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        PosixFileAttributes attrs = attributes(abs);
        if (attrs.isSymbolicLink() || !attrs.isDirectory()) {
            throw new Refused("pin directory " + abs + " is " + (attrs.isSymbolicLink() ? "a symlink" : "not a directory")
                    + ": refused (pins are never reached through links); remove it and start again");
        }
        checkOwner(abs, "pin directory");
        if (writableByOthers(attrs.permissions())) {
            throw new Refused("pin directory " + abs + " has mode " + PosixFilePermissions.toString(attrs.permissions())
                    + ", writable by group or others, who could swap the router's pins: chmod 700 " + abs
                    + " (or remove it and let the router create it)");
        }
        verifyAncestors(abs.getParent());
    }

    private static void verifyAncestors(Path from) {
        verifyAncestors(from, "pin directory");
    }

    /**
     * Every directory from {@code from} up to /: no symlink, owned by root (or us), not writable by
     * group or others unless sticky. Otherwise whoever can write one could rename what lies below it.
     */
    public static void verifyAncestors(Path from, String what) {
        for (Path p = from; p != null; p = p.getParent()) {
            PosixFileAttributes attrs = attributes(p);
            if (attrs.isSymbolicLink()) {
                throw new Refused(what + " parent " + p + " is a symlink: refused (never reached through links)");
            }
            checkOwner(p, what + " parent");
            if (writableByOthers(attrs.permissions()) && !sticky(p)) {
                throw new Refused(what + " parent " + p + " is writable by group or others and not sticky: "
                        + "anyone could rename what lies below it; use a directory under root-owned parents");
            }
        }
    }

    /**
     * {@code pinDir/name} when it is not a symlink (or does not exist yet). bpf_obj_get(2) follows
     * links; the directory check above makes a planted link impossible, this refuses a left-over one.
     */
    public static Path pin(Path pinDir, String name) {
        Path pin = pinDir.resolve(name);
        if (Files.isSymbolicLink(pin)) {
            throw new Refused("pin " + pin + " is a symlink: refused (pins are never followed through links); remove it");
        }
        return pin;
    }

    /** bpf_obj_get on {@code pinDir/name}, refusing a symlink: the fd of the pinned object. */
    public static int open(Path pinDir, String name) {
        Path pin = pin(pinDir, name);
        return Native.check(LibBpf.get().bpf_obj_get(pin.toString()), "bpf_obj_get", pin.toString());
    }

    /** True when {@code dir} exists, is a real directory owned by root (or us) and not writable by others. */
    public static boolean trusted(Path dir) {
        try {
            verify(dir);
            return true;
        } catch (Refused | UncheckedIOException e) {
            return false;
        }
    }

    /** False as well when {@code p} vanished. */
    public static boolean ownedByRootOrUs(Path p) {
        try {
            int uid = uid(p);
            return uid == ROOT_UID || uid == ownUid();
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    private static void checkOwner(Path p, String what) {
        int uid = uid(p);
        if (uid != ROOT_UID && uid != ownUid()) {
            throw new Refused(what + " " + p + " is owned by uid " + uid + ", not root: another user could swap the "
                    + "router's pins; remove it (rm -r " + p + ") or chown root " + p + " and start again");
        }
    }

    static boolean writableByOthers(Set<PosixFilePermission> perms) {
        return perms.contains(PosixFilePermission.GROUP_WRITE) || perms.contains(PosixFilePermission.OTHERS_WRITE);
    }

    private static boolean sticky(Path p) {
        try {
            return (((Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS)) & 01000) != 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat " + p + ": " + e.getMessage(), e);
        }
    }

    private static PosixFileAttributes attributes(Path p) {
        try {
            return Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new UncheckedIOException("pin directory " + p + " does not exist", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat " + p + ": " + e.getMessage(), e);
        }
    }

    static int uid(Path p) {
        try {
            return (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat " + p + ": " + e.getMessage(), e);
        }
    }

    /** This process's effective uid: /proc/self belongs to it. */
    static int ownUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"); // followed: /proc/<pid>
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat /proc/self: " + e.getMessage(), e);
        }
    }
}
