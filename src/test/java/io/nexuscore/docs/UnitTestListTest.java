package io.nexuscore.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * src/test/unit-tests.txt, the list `mvn -Punit test` runs, names only existing test classes, and
 * none of them reaches for what makes a test heavy: a started router or server, the kernel, a
 * Wasm pool, an external process. A test that gains one of those must leave the list.
 */
class UnitTestListTest {

    /** What a pure-Java test never uses; each names the helper or API through which the heavy thing comes in. */
    static final List<String> HEAVY = List.of(
            "RouterRuntime", "RouterFixture.start", "RouterProcess", // a router
            "KernelTestSupport", "KernelDataPath", "LibBpf", "VethNetns", "Privileged.require", // the kernel
            "WasmTierPool", "TierPools", "GuestModules", // Wasm engines
            "ExternalTool", "ExternalProcess", "ProcessBuilder", "OpsRules.run", "Shell.", // external tools
            "LocalOpenAiServer", "createHttpServer", "ChromeDriver"); // servers, browsers

    static List<String> entries() {
        List<String> entries = new ArrayList<>();
        for (String line : Docs.read(Docs.root().resolve("src/test/unit-tests.txt")).split("\n")) {
            String entry = line.strip();
            if (!entry.isEmpty() && !entry.startsWith("#")) {
                entries.add(entry);
            }
        }
        return entries;
    }

    @Test
    void everyEntryIsAnExistingTestClass() {
        List<String> entries = entries();
        assertTrue(entries.size() > 20, "the list holds the pure-Java tests: " + entries.size());
        List<String> wrong = new ArrayList<>();
        for (String entry : entries) {
            Path source = Docs.root().resolve("src/test/java").resolve(entry);
            if (!entry.endsWith("Test.java") || !Files.isRegularFile(source)) {
                wrong.add(entry);
            }
        }
        assertEquals(List.of(), wrong, "entries that name no test class under src/test/java");
    }

    @Test
    void noListedTestReachesForAnythingHeavy() {
        List<String> heavy = new ArrayList<>();
        for (String entry : entries()) {
            if (entry.endsWith("/UnitTestListTest.java")) {
                continue; // this file names the markers it looks for
            }
            String source = Docs.read(Docs.root().resolve("src/test/java").resolve(entry));
            for (String marker : HEAVY) {
                if (source.contains(marker)) {
                    heavy.add(entry + " uses " + marker);
                }
            }
        }
        assertEquals(List.of(), heavy, "tests in src/test/unit-tests.txt that are not pure Java");
    }
}
