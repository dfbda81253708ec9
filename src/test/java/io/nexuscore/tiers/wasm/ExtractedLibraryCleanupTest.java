package io.nexuscore.tiers.wasm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** wasmtime-java's extracted JNI library does not outlive the engine's start in the temp directory. */
class ExtractedLibraryCleanupTest {

    @Test
    void theLoadedLibrarysTempCopyIsUnlinkedOnceAnEngineExists() throws Exception {
        new WasmtimeEngine().close();
        List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
        List<String> mapped = maps.stream().filter(l -> l.contains("libwasmtime_jni_")).toList();
        assertFalse(mapped.isEmpty(), "wasmtime's library is mapped in this JVM");
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        assertEquals(List.of(), ExtractedLibraryCleanup.extractedCopies(maps, tmp),
                "a copy under the temp directory is still linked: " + mapped);
        for (String line : mapped) {
            if (line.contains(tmp.toString())) {
                assertTrue(line.endsWith("(deleted)"), line);
            }
        }
    }

    @Test
    void onlyMappedCopiesDirectlyUnderTheTempDirectoryAreTaken() {
        List<String> maps = List.of(
                "7f00-7f01 r-xp 00000000 08:01 12 /tmp/libwasmtime_jni_0.19.0_linux_x86_64123.so",
                "7f01-7f02 r--p 00001000 08:01 12 /tmp/libwasmtime_jni_0.19.0_linux_x86_64123.so",
                "7f02-7f03 r-xp 00000000 08:01 13 /tmp/libwasmtime_jni_0.19.0_linux_x86_64999.so (deleted)",
                "7f03-7f04 r-xp 00000000 08:01 14 /usr/lib/libwasmtime_jni_0.19.0_linux_x86_64.so",
                "7f04-7f05 r-xp 00000000 08:01 15 /tmp/sub/libwasmtime_jni_x.so",
                "7f05-7f06 r-xp 00000000 08:01 16 /tmp/libother.so",
                "7f06-7f07 rw-p 00000000 00:00 0 [heap]");
        assertEquals(List.of(Path.of("/tmp/libwasmtime_jni_0.19.0_linux_x86_64123.so")),
                ExtractedLibraryCleanup.extractedCopies(maps, Path.of("/tmp")));
    }
}
