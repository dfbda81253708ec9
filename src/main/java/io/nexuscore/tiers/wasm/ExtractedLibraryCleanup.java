package io.nexuscore.tiers.wasm;

import java.lang.System.Logger.Level;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Deletes the copy of wasmtime's JNI library that wasmtime-java extracts to the temp directory.
 *
 * <p>Why: wasmtime-java (0.19) copies its 17 MB {@code libwasmtime_jni_*.so} from the jar to a new
 * temp file ({@code Files.createTempFile}) in every JVM that loads it, and never deletes it: every
 * router start, and every test JVM, left one behind (88 files, 1.5 GB of /tmp on a machine after a
 * day of runs). Once the library is mapped, the file is no longer needed: Linux keeps an unlinked
 * file's pages for as long as they are mapped. So after the first engine is made, the mapped copy
 * found in {@code /proc/self/maps} under the temp directory is unlinked.
 */
final class ExtractedLibraryCleanup {

    private static final System.Logger LOG = System.getLogger(ExtractedLibraryCleanup.class.getName());
    private static final String LIBRARY_PREFIX = "libwasmtime_jni_";
    private static final AtomicBoolean DONE = new AtomicBoolean();

    private ExtractedLibraryCleanup() {
    }

    /** Once per JVM, after wasmtime's library is loaded: unlinks its extracted copy. Never throws. */
    static void afterLoad() {
        if (!DONE.compareAndSet(false, true)) {
            return;
        }
        Path maps = Path.of("/proc/self/maps");
        if (!Files.isReadable(maps)) {
            return; // not Linux: nothing to do here (the library extracts elsewhere)
        }
        try {
            for (Path copy : extractedCopies(Files.readAllLines(maps), Path.of(System.getProperty("java.io.tmpdir")))) {
                Files.deleteIfExists(copy);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "could not delete wasmtime's extracted JNI library from the temp directory", e);
        }
    }

    /** The mapped files named like wasmtime-java's extracted library, directly under {@code tmpDir}. */
    static List<Path> extractedCopies(List<String> mapsLines, Path tmpDir) {
        Path dir = tmpDir.toAbsolutePath().normalize();
        return mapsLines.stream()
                .map(line -> line.indexOf('/') < 0 ? null : line.substring(line.indexOf('/')))
                .filter(path -> path != null && !path.endsWith(" (deleted)"))
                .map(Path::of)
                .filter(path -> dir.equals(path.getParent()) && path.getFileName().toString().startsWith(LIBRARY_PREFIX))
                .distinct()
                .toList();
    }
}
