package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.KernelConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pins that outlive the router meet the next build: one with the same map definitions reuses them,
 * a verdict map whose definition changed (the verdict store's sizes did on 2026-12-02) is replaced,
 * any other changed map fails the load naming it.
 */
class StalePinTest {

    private static final Set<Integer> PORTS = Set.of(8080);

    @BeforeAll
    static void kernel() {
        KernelTestSupport.requireKernel();
    }

    private static KernelDataPath load(Path pinDir) {
        return KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING, PORTS, KernelConfig.XdpMode.GENERIC);
    }

    @Test
    void theSameBuildReusesEveryPin() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        try {
            load(pinDir).close(); // pins kept
            Map<String, Integer> first = pinnedMapIds(pinDir);
            assertTrue(first.keySet().containsAll(Set.of("score_thresholds", "verdict_slots", "tenant_policy", "adaptive_settings")),
                    "the first load pinned the maps: " + first);
            load(pinDir).close();
            // Reused means the very same kernel objects: a map replaced or re-created gets a new id.
            assertEquals(first, pinnedMapIds(pinDir), "every pin is the same map after the second load");
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }

    /** The kernel's id of every map pinned in the directory, by pin name. */
    private static Map<String, Integer> pinnedMapIds(Path pinDir) throws Exception {
        Map<String, Integer> ids = new TreeMap<>();
        try (Stream<Path> pins = Files.list(pinDir)) {
            for (Path pin : pins.toList()) {
                Shell.Result shown = Shell.run("bpftool", "-j", "map", "show", "pinned", pin.toString());
                if (shown.exitCode() != 0) {
                    continue; // a pinned program (the tail-call chain's entries), not a map
                }
                Matcher id = Pattern.compile("\"id\":(\\d+)").matcher(shown.output());
                assertTrue(id.find(), shown.output());
                ids.put(pin.getFileName().toString(), Integer.parseInt(id.group(1)));
            }
        }
        return ids;
    }

    @Test
    void aStaleVerdictMapIsReplacedAndTheNewStoreServes() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        Files.createDirectories(pinDir);
        try {
            // routing_decisions as builds before 2026-12-02 pinned it: the 1M-entry LRU store.
            Shell.ok("bpftool", "map", "create", pinDir.resolve("routing_decisions").toString(), "type", "lru_hash",
                    "key", "12", "value", "8", "entries", "1000000", "name", "routing_decisions");
            load(pinDir).close();
            String shown = Shell.ok("bpftool", "-j", "map", "show", "pinned", pinDir.resolve("routing_decisions").toString());
            assertTrue(shown.contains("\"max_entries\":" + SharedStructs.VERDICT_FALLBACK), shown);
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }

    @Test
    void aStaleMapHoldingOperatorStateFailsNamingTheMap() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        Files.createDirectories(pinDir);
        try {
            // A tenant_policy of another shape: what it holds was set by an operator, so never replaced.
            Shell.ok("bpftool", "map", "create", pinDir.resolve("tenant_policy").toString(), "type", "hash",
                    "key", "4", "value", "4", "entries", "7", "name", "tenant_policy");
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> load(pinDir));
            String message = e.getMessage();
            assertTrue(message.contains(pinDir.resolve("tenant_policy").toString()), message);
            assertTrue(message.contains("max_entries 7"), message);
            assertTrue(message.contains("./cleanup.sh"), message);
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }
}
