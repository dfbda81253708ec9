package io.nexuscore.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** The router's state files (thresholds, tenant keys) written whole or not at all. */
public final class AtomicFile {

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    private AtomicFile() {
    }

    /**
     * Writes a temporary file beside {@code target}, syncs it and renames it over: a reader or a crash
     * never sees a torn file. {@code ownerOnly}: created 0600 (secrets). The temporary file is removed
     * when anything fails.
     */
    public static void write(Path target, byte[] bytes, boolean ownerOnly) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            FileAttribute<?> mode = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                    ownerOnly ? "rw-------" : "rw-r--r--"));
            tmp = dir.resolve("." + target.getFileName() + "." + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".tmp");
            // Written through the descriptor that created it (CREATE_NEW, no link followed): the
            // bytes cannot land in a file someone else put at that name.
            try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), mode)) {
                ByteBuffer data = ByteBuffer.wrap(bytes);
                while (data.hasRemaining()) {
                    ch.write(data);
                }
                ch.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the original error is the one to report
                }
            }
            throw e;
        }
    }
}
