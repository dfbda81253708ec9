package io.nexuscore.config;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Files that hold secrets (the control token, tenant key hashes, an upstream API key, a TLS key).
 * The router runs as root: a file another user planted (a 0600 file of their own, or a symlink to
 * one of theirs) must not become its token or its keys. A secret file is read only when it is a
 * regular file (never through a symlink) owned by root or by this process's user, with no group or
 * other permission bits; it is created exclusively, 0600, and written through the descriptor that
 * created it, never reopened by name.
 */
public final class PrivateFile {

    public static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");

    private PrivateFile() {
    }

    /** The file's text, checked as the class comment says; the IOException says what is wrong and how to fix it. */
    public static String read(Path file, long maxBytes) throws IOException {
        PosixFileAttributes before = check(file);
        if (before.size() > maxBytes) {
            throw new IOException(file + " is larger than " + maxBytes + " bytes");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(maxBytes, Integer.MAX_VALUE - 8) + 1);
        try (SeekableByteChannel ch = Files.newByteChannel(file, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                // up to the cap (+1 to notice a file that grew past it)
            }
        }
        // The file checked is the file read: not swapped for another between the check and the open.
        PosixFileAttributes after = check(file);
        if (!Objects.equals(before.fileKey(), after.fileKey())) {
            throw new IOException(file + " was replaced while it was read");
        }
        if (buf.position() > maxBytes) {
            throw new IOException(file + " is larger than " + maxBytes + " bytes");
        }
        return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
    }

    /** Refuses a symlink, a non-regular file, another user's file, or one with group/other bits. */
    public static PosixFileAttributes check(Path file) throws IOException {
        PosixFileAttributes attrs = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (attrs.isSymbolicLink() || !attrs.isRegularFile()) {
            throw new IOException(file + " is not a regular file (a symlink or device is refused)");
        }
        int uid = (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (uid != 0 && uid != ownUid()) {
            throw new IOException(file + " is owned by uid " + uid + ", not root: another user's file is not a secret "
                    + "of this router; chown root " + file + " if it is yours");
        }
        Set<PosixFilePermission> others = EnumSet.copyOf(attrs.permissions().isEmpty()
                ? EnumSet.noneOf(PosixFilePermission.class) : attrs.permissions());
        others.removeAll(EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE));
        if (!others.isEmpty()) {
            throw new IOException(file + " has mode " + PosixFilePermissions.toString(attrs.permissions())
                    + ", which lets others read or change it: chmod 600 " + file);
        }
        return attrs;
    }

    /**
     * Creates {@code file} 0600 (failing when anything, a symlink included, is at that name) and
     * writes {@code bytes} through the created descriptor, synced.
     */
    public static void create(Path file, byte[] bytes) throws IOException {
        try (var ch = Files.newByteChannel(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.DSYNC, LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(OWNER_RW))) {
            ByteBuffer data = ByteBuffer.wrap(bytes);
            while (data.hasRemaining()) {
                ch.write(data);
            }
        }
    }

    /** This process's effective uid: /proc/self belongs to it. */
    static int ownUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat /proc/self: " + e.getMessage(), e);
        }
    }
}
