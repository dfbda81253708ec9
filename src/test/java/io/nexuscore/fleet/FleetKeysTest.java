package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.fleet.FleetKeys.Reason;
import io.nexuscore.fleet.FleetKeys.Refused;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The envelope (who may write what the routers take) and the secret file's checks. */
class FleetKeysTest {

    private static final String OLD = "0123456789abcdef0123456789abcdef-old";
    private static final String NEW = "fedcba9876543210fedcba9876543210-new";
    private static final String BODY = "{\"version\":7,\"thresholds\":{\"nano_max\":60,\"small_max\":130}}";

    @Test
    void aSealedValueOpensToItsBody() throws Refused {
        FleetKeys keys = FleetKeys.of(List.of(NEW));
        assertEquals(BODY, keys.open("m", "k", keys.seal("m", "k", BODY)));
    }

    @Test
    void aDocumentWithoutAnEnvelopeIsUnsigned() {
        assertEquals(Reason.UNSIGNED, refusal(FleetKeys.of(List.of(NEW)), "m", "k", BODY));
    }

    @Test
    void anAlteredBodyDoesNotVerify() {
        FleetKeys keys = FleetKeys.of(List.of(NEW));
        JsonObject envelope = new JsonObject(keys.seal("m", "k", BODY));
        envelope.put("body", BODY.replace("\"nano_max\":60", "\"nano_max\":7"));
        assertEquals(Reason.BAD_MAC, refusal(keys, "m", "k", envelope.encode()));
    }

    @Test
    void aMacMadeUpForTheRightKeyIdDoesNotVerify() {
        FleetKeys keys = FleetKeys.of(List.of(NEW));
        JsonObject envelope = new JsonObject(keys.seal("m", "k", BODY)).put("mac", "00".repeat(32));
        assertEquals(Reason.BAD_MAC, refusal(keys, "m", "k", envelope.encode()));
    }

    @Test
    void aValueSignedForAnotherEntryDoesNotVerifyHere() {
        // A router's signed heartbeat copied into the policy slot: same secret, other map and key.
        FleetKeys keys = FleetKeys.of(List.of(NEW));
        String heartbeat = keys.seal(FleetService.MEMBERS_MAP, "n1", BODY);
        assertEquals(Reason.BAD_MAC, refusal(keys, SharedMapPolicy.MAP, SharedMapPolicy.KEY, heartbeat));
        assertEquals(Reason.BAD_MAC, refusal(keys, FleetService.MEMBERS_MAP, "n2", heartbeat));
    }

    @Test
    void anotherSecretIsAnUnknownKey() {
        String foreign = FleetKeys.of(List.of(OLD)).seal("m", "k", BODY);
        assertEquals(Reason.UNKNOWN_KEY, refusal(FleetKeys.of(List.of(NEW)), "m", "k", foreign));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "not json", "[1,2]", "{\"mac\":1,\"kid\":\"a\",\"body\":\"x\"}",
            "{\"mac\":\"00\",\"kid\":\"a\"}", "{\"mac\":\"00\",\"kid\":\"a\",\"body\":\"x\",\"extra\":1}"})
    void whatIsNotAnEnvelopeIsMalformed(String value) {
        assertEquals(Reason.MALFORMED, refusal(FleetKeys.of(List.of(NEW)), "m", "k", value));
    }

    @Test
    void duringARotationOldAndNewSignersAcceptEachOther() throws Refused {
        FleetKeys notYet = FleetKeys.of(List.of(OLD, NEW)); // step 1: the new secret accepted, the old one signs
        FleetKeys switched = FleetKeys.of(List.of(NEW, OLD)); // step 2: the new secret signs
        FleetKeys done = FleetKeys.of(List.of(NEW)); // step 3: the old one dropped
        assertNotEquals(notYet.currentKid(), switched.currentKid());
        assertEquals(BODY, switched.open("m", "k", notYet.seal("m", "k", BODY)));
        assertEquals(BODY, notYet.open("m", "k", switched.seal("m", "k", BODY)));
        assertEquals(BODY, done.open("m", "k", switched.seal("m", "k", BODY)));
        assertEquals(Reason.UNKNOWN_KEY, refusal(done, "m", "k", notYet.seal("m", "k", BODY)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"short", "0123456789abcdef 0123456789abcdef"})
    void aWeakOrSpacedSecretIsRefused(String secret) {
        assertThrows(IllegalArgumentException.class, () -> FleetKeys.of(List.of(secret)));
    }

    @Test
    void aSecretFileOfTheRightShapeLoads(@TempDir Path dir) throws Exception {
        Path file = secretFile(dir, NEW + "\n" + OLD + "\n", "rw-------");
        FleetKeys keys = FleetKeys.load(file);
        assertEquals(FleetKeys.of(List.of(NEW)).currentKid(), keys.currentKid(), "the first line signs");
        assertEquals(BODY, keys.open("m", "k", FleetKeys.of(List.of(OLD)).seal("m", "k", BODY)), "the second verifies");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));
        assertEquals(keys.currentKid(), FleetKeys.load(file).currentKid());
    }

    @ParameterizedTest
    @ValueSource(strings = {"rw-r-----", "rw----r--", "rw-rw-rw-"})
    void aSecretFileOthersCanReadIsRefused(String mode, @TempDir Path dir) throws Exception {
        Path file = secretFile(dir, NEW, mode);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FleetKeys.load(file));
        assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("0600"), e.getMessage());
    }

    @Test
    void aSymlinkToASecretFileIsRefused(@TempDir Path dir) throws Exception {
        Path file = secretFile(dir, NEW, "rw-------");
        Path link = Files.createSymbolicLink(dir.resolve("link"), file);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FleetKeys.load(link));
        assertTrue(e.getMessage().contains("symlink"), e.getMessage());
    }

    @Test
    void aDirectoryIsRefused(@TempDir Path dir) {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FleetKeys.load(dir));
        assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
    }

    @Test
    void aSecretFileOwnedBySomeoneElseIsRefused(@TempDir Path dir) throws Exception {
        int self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        org.junit.jupiter.api.Assumptions.assumeTrue(self == 0, "only root can give a file away (running as uid " + self + ")");
        Path file = secretFile(dir, NEW, "rw-------");
        Files.setAttribute(file, "unix:uid", 65534);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FleetKeys.load(file));
        assertTrue(e.getMessage().contains("owned by uid 65534"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\n\n", "a\nb\nc"})
    void aSecretFileWithoutOneOrTwoSecretsIsRefused(String content, @TempDir Path dir) throws Exception {
        String text = content.equals("a\nb\nc") ? NEW + "\n" + OLD + "\n" + NEW + "x" : content;
        Path file = secretFile(dir, text, "rw-------");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FleetKeys.load(file));
        assertTrue(e.getMessage().contains("one or two secrets"), e.getMessage());
    }

    private static Path secretFile(Path dir, String content, String mode) throws Exception {
        Path file = dir.resolve("fleet.secret");
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private static Reason refusal(FleetKeys keys, String map, String key, String value) {
        return assertThrows(Refused.class, () -> keys.open(map, key, value)).reason();
    }
}
