package io.nexuscore.bpf;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.config.KernelConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pins that outlive the router meet the next build: one with the same map definitions reuses them,
 * one whose definitions changed (the verdict store's sizes did on 2026-12-02) fails naming the map.
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
    void theSameBuildReusesEveryPin() {
        Path pinDir = KernelTestSupport.uniquePinDir();
        try {
            load(pinDir).close(); // pins kept
            KernelDataPath again = load(pinDir);
            again.close();
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }

    @Test
    void aPinWithOtherSizesFailsNamingTheMap() throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        Files.createDirectories(pinDir);
        try {
            // routing_decisions as builds before 2026-12-02 pinned it: the 1M-entry LRU store.
            Shell.ok("bpftool", "map", "create", pinDir.resolve("routing_decisions").toString(), "type", "lru_hash",
                    "key", "12", "value", "8", "entries", "1000000", "name", "routing_decisions");
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> load(pinDir));
            String message = e.getMessage();
            assertTrue(message.contains(pinDir.resolve("routing_decisions").toString()), message);
            assertTrue(message.contains("max_entries 1000000") && message.contains("max_entries " + SharedStructs.VERDICT_FALLBACK),
                    message);
            assertTrue(message.contains("./cleanup.sh"), message);
        } finally {
            KernelDataPath.removePins(pinDir);
        }
    }
}
