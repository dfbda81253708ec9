package io.nexuscore.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TenantKeysTest {

    @Test
    void hashIsTheSha256OfTheKeyInLowerCaseHex() {
        // sha256("test"), as `printf %s test | sha256sum` prints it
        assertEquals("sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", TenantKeys.hash("test"));
    }

    @Test
    void keysNameTheirTenantAndOnlyTheirs() {
        TenantKeys keys = TenantKeys.inMemory();
        keys.put("acme", List.of(TenantKeys.hash("a1"), TenantKeys.hash("a2")));
        keys.put("globex", List.of(TenantKeys.hash("g1")));
        assertEquals(Optional.of("acme"), keys.tenantOf("a2"));
        assertEquals(Optional.of("globex"), keys.tenantOf("g1"));
        assertEquals(Optional.empty(), keys.tenantOf("a3"));
        assertEquals(Optional.empty(), keys.tenantOf(""));
        assertThrows(TenantKeys.KeyInUse.class, () -> keys.put("globex", List.of(TenantKeys.hash("a1"))));
        assertEquals(Optional.of("acme"), keys.tenantOf("a1"), "a refused put changes nothing");
        keys.put("acme", List.of(TenantKeys.hash("a3")));
        assertEquals(Optional.empty(), keys.tenantOf("a1"), "a put replaces the tenant's keys");
        assertTrue(keys.delete("acme"));
        assertFalse(keys.delete("acme"));
        assertEquals(Optional.empty(), keys.tenantOf("a3"));
    }

    @Test
    void onlyWellFormedHashesAreTaken() {
        TenantKeys keys = TenantKeys.inMemory();
        for (String bad : new String[] {"plaintext-key", "sha256:ABC", TenantKeys.hash("k").toUpperCase(),
                "sha1:" + "0".repeat(64), TenantKeys.hash("k") + "0"}) {
            assertThrows(IllegalArgumentException.class, () -> keys.put("acme", List.of(bad)), bad);
        }
        assertEquals(Map.of(), keys.list());
    }

    @Test
    void savedAndLoadedBesideTheStateFile(@TempDir Path dir) throws Exception {
        Path file = TenantKeys.besideStateFile(dir.resolve("state.json"));
        assertEquals(dir.resolve("state.keys.json"), file);
        TenantKeys keys = TenantKeys.load(file);
        keys.put("acme", List.of(TenantKeys.hash("secret-key-1")));
        assertFalse(Files.readString(file).contains("secret-key-1"));
        TenantKeys reloaded = TenantKeys.load(file);
        assertEquals(Optional.of("acme"), reloaded.tenantOf("secret-key-1"));
        assertEquals(keys.list(), reloaded.list());
        Files.writeString(file, "{\"tenants\":{\"acme\":[\"not-a-hash\"]}}");
        assertThrows(IllegalStateException.class, () -> TenantKeys.load(file));
    }

    @Test
    void aConditionalReplaceHappensOnlyWhileTheHashesAreAsExpected() {
        TenantKeys keys = TenantKeys.inMemory();
        List<String> first = List.of(TenantKeys.hash("a1"));
        List<String> second = List.of(TenantKeys.hash("a2"));
        assertTrue(keys.replace("acme", List.of(), first), "it had none");
        assertFalse(keys.replace("acme", List.of(), second), "it has keys now");
        assertFalse(keys.replace("acme", second, List.of()), "not removed: its keys are not the expected ones");
        assertEquals(first, keys.get("acme"), "the refused writes changed nothing");
        assertTrue(keys.replace("acme", first, second));
        assertEquals(Optional.of("acme"), keys.tenantOf("a2"));
        assertTrue(keys.replace("acme", second, List.of()));
        assertEquals(Map.of(), keys.list());
    }
}
