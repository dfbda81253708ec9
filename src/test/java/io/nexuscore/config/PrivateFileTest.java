package io.nexuscore.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.testing.Privileged;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secret files (control token, tenant keys, upstream API key) on the real filesystem: another user's
 * 0600 file, a symlink to root's own, and a file others can read are refused with a message naming
 * the file; a new one is created 0600 without following a link planted at its name.
 */
class PrivateFileTest {

    @TempDir
    Path dir;

    private Path secret(String name, String text, String mode) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private static void chownNobody(Path file) throws IOException {
        Privileged.require(Privileged.isRoot(), "chown needs root");
        UserPrincipal nobody = file.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(file, nobody);
    }

    @Test
    void rootsOwn0600FileIsRead() throws Exception {
        assertEquals("s3cret\n", PrivateFile.read(secret("ok", "s3cret\n", "rw-------"), 1024));
    }

    @Test
    void anotherUsers0600FileIsRefused() throws Exception {
        Path planted = secret("planted", "attacker-chosen-token-0123456789", "rw-------");
        chownNobody(planted);
        IOException e = assertThrows(IOException.class, () -> PrivateFile.read(planted, 1024));
        assertTrue(e.getMessage().contains(planted.toString()) && e.getMessage().contains("not root"), e.getMessage());
    }

    @Test
    void aSymlinkIsRefusedEvenToRootsOwnFile() throws Exception {
        Path real = secret("real", "s3cret", "rw-------");
        Path link = Files.createSymbolicLink(dir.resolve("link"), real);
        IOException e = assertThrows(IOException.class, () -> PrivateFile.read(link, 1024));
        assertTrue(e.getMessage().contains("symlink"), e.getMessage());
    }

    @Test
    void aFileOthersCanReadIsRefused() throws Exception {
        Path open = secret("open", "s3cret", "rw-r--r--");
        IOException e = assertThrows(IOException.class, () -> PrivateFile.read(open, 1024));
        assertTrue(e.getMessage().contains("chmod 600 " + open), e.getMessage());
    }

    @Test
    void createIs0600AndNeverFollowsALinkAtTheName() throws Exception {
        Path fresh = dir.resolve("fresh");
        PrivateFile.create(fresh, "abc".getBytes());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(fresh)));
        assertEquals("abc", Files.readString(fresh));
        Path victim = secret("victim", "untouched", "rw-r--r--");
        Path link = Files.createSymbolicLink(dir.resolve("token"), victim);
        assertThrows(FileAlreadyExistsException.class, () -> PrivateFile.create(link, "x".getBytes()));
        assertEquals("untouched", Files.readString(victim));
    }

    @Test
    void tenantKeysAreNotLoadedThroughASymlinkOrFromAnotherUsersFile() throws Exception {
        String doc = new JsonObject().put("tenants", new JsonObject().put("acme",
                new io.vertx.core.json.JsonArray().add(TenantKeys.hash("nx-attacker-key-000000")))).encode();
        Path real = secret("real.keys.json", doc, "rw-------");
        Path link = Files.createSymbolicLink(dir.resolve("state.keys.json"), real);
        RuntimeException viaLink = assertThrows(RuntimeException.class, () -> TenantKeys.load(link));
        assertTrue(viaLink.getMessage().contains("symlink"), viaLink.getMessage());
        chownNobody(real);
        RuntimeException foreign = assertThrows(RuntimeException.class, () -> TenantKeys.load(real));
        assertTrue(foreign.getMessage().contains("not root"), foreign.getMessage());
    }

    @Test
    void upstreamApiKeyFileIsReadWhenPrivate() throws Exception {
        Path key = secret("upstream.key", "sk-test-0123456789\n", "rw-------");
        UpstreamConfig up = UpstreamConfig.from(new Json(new JsonObject().put("baseUrl", "http://127.0.0.1:9/v1")
                .put("apiKeyFile", key.toString()), "tiers.large.upstream"));
        assertEquals("sk-test-0123456789", up.apiKey().orElseThrow());

        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        ConfigException open = assertThrows(ConfigException.class, () -> UpstreamConfig.from(new Json(new JsonObject()
                .put("baseUrl", "http://127.0.0.1:9/v1").put("apiKeyFile", key.toString()), "tiers.large.upstream")));
        assertTrue(open.getMessage().contains("tiers.large.upstream.apiKeyFile") && open.getMessage().contains("chmod 600"),
                open.getMessage());
        ConfigException both = assertThrows(ConfigException.class, () -> UpstreamConfig.from(new Json(new JsonObject()
                .put("baseUrl", "http://127.0.0.1:9/v1").put("apiKey", "k").put("apiKeyFile", key.toString()), "u")));
        assertTrue(both.getMessage().contains("both set"), both.getMessage());
        assertFalse(open.getMessage().contains("sk-test"), "the key is never echoed");
    }
}
