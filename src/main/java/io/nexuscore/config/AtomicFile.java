package io.nexuscore.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;

/** The router's state files (thresholds, tenant keys) written whole or not at all. */
public final class AtomicFile {

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
            FileAttribute<?>[] attributes = ownerOnly
                    ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))}
                    : new FileAttribute<?>[0];
            tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp", attributes);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(bytes));
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
