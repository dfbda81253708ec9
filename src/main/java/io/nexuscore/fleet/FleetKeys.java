package io.nexuscore.fleet;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The fleet's shared secrets and the envelope every value a router writes to the cluster travels in:
 * {@code {"kid": …, "mac": …, "body": "<the document's JSON>"}}, the MAC an HMAC-SHA256 over the map's
 * name, the entry's key and the body. Anyone who reaches the Hazelcast port can write the maps (the
 * open-source edition has no member authentication); only a holder of the secret can write a value a
 * router accepts, and binding map and key stops a signed heartbeat from being replayed as a policy.
 *
 * <p>The first secret signs; every secret verifies. Two secrets are a rotation in progress: routers
 * that already sign with the new one and routers that still sign with the old one accept each other.
 */
public final class FleetKeys {

    /** Shortest secret accepted: 32 characters (e.g. {@code openssl rand -hex 32} gives 64). */
    static final int MIN_SECRET_CHARS = 32;
    static final int MAX_SECRET_CHARS = 1024;
    private static final int MAX_FILE_BYTES = 4096;
    private static final String ALGORITHM = "HmacSHA256";
    private static final String DOMAIN = "nexuscore.fleet.v1\n";

    /** A value the router refuses, and why (the {@code reason} tag of nexus_fleet_rejected_total). */
    public enum Reason {
        /** No MAC at all: written by something that does not know the scheme (or the secret). */
        UNSIGNED,
        /** Signed under a key id no secret of this router has. */
        UNKNOWN_KEY,
        /** A known key id, a MAC that does not verify: forged or altered. */
        BAD_MAC,
        /** Not an envelope, or a verified body that is not a valid document. */
        MALFORMED,
        /** A value that is not text at all (another Hazelcast type). */
        NOT_TEXT,
        /** A Java-serialized object: refused by the deserialization filter before any of it ran. */
        JAVA_SERIALIZED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Why a value was refused; the message never contains the value itself. */
    public static final class Refused extends Exception {
        private final Reason reason;

        Refused(Reason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }

        public Reason reason() {
            return reason;
        }
    }

    private record Key(String kid, SecretKeySpec spec) {
    }

    private final List<Key> keys;

    private FleetKeys(List<String> secrets) {
        if (secrets.isEmpty() || secrets.size() > 2) {
            throw new IllegalArgumentException("one or two secrets (current, then previous), got " + secrets.size());
        }
        List<Key> list = new ArrayList<>();
        for (String secret : secrets) {
            if (secret.length() < MIN_SECRET_CHARS || secret.length() > MAX_SECRET_CHARS) {
                throw new IllegalArgumentException("a fleet secret must be " + MIN_SECRET_CHARS + ".." + MAX_SECRET_CHARS
                        + " characters, got " + secret.length());
            }
            if (secret.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
                throw new IllegalArgumentException("a fleet secret must not contain spaces or control characters");
            }
            byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
            list.add(new Key(kidOf(bytes), new SecretKeySpec(bytes, ALGORITHM)));
        }
        this.keys = List.copyOf(list);
    }

    /** Secrets given directly (tests, tools): the first signs. */
    public static FleetKeys of(List<String> secrets) {
        return new FleetKeys(secrets);
    }

    /**
     * Reads {@code cluster.secretFile}: a regular file (not a symlink), owned by root (or by the user the
     * router runs as), readable by its owner only, holding one secret per line: the current one, then
     * optionally the previous one.
     *
     * @throws IllegalStateException naming the file and what is wrong with it
     */
    public static FleetKeys load(Path file) {
        try {
            PosixFileAttributes before = checked(file);
            byte[] content;
            // NOFOLLOW_LINKS: a symlink swapped in after the check is refused by open(2) itself (ELOOP).
            try (SeekableByteChannel channel = Files.newByteChannel(file, Set.of(StandardOpenOption.READ,
                    LinkOption.NOFOLLOW_LINKS))) {
                if (channel.size() > MAX_FILE_BYTES) {
                    throw new IllegalStateException("cluster.secretFile " + file + ": larger than " + MAX_FILE_BYTES + " bytes");
                }
                ByteBuffer buffer = ByteBuffer.allocate((int) channel.size());
                while (buffer.hasRemaining() && channel.read(buffer) > 0) {
                    // read it all
                }
                content = buffer.array();
            }
            // The file read is the file checked: the same inode before and after the open.
            if (!Objects.equals(before.fileKey(), checked(file).fileKey())) {
                throw new IllegalStateException("cluster.secretFile " + file + " was replaced while it was read");
            }
            List<String> secrets = new ArrayList<>();
            for (String line : new String(content, StandardCharsets.UTF_8).split("\n", -1)) {
                String secret = line.strip();
                if (!secret.isEmpty()) {
                    secrets.add(secret);
                }
            }
            return new FleetKeys(secrets);
        } catch (IOException e) {
            throw new IllegalStateException("cluster.secretFile " + file + ": cannot read it: " + e, e);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("cluster.secretFile " + file + ": " + e.getMessage(), e);
        }
    }

    private static PosixFileAttributes checked(Path file) throws IOException {
        PosixFileAttributes attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (attributes.isSymbolicLink()) {
            throw new IllegalStateException("cluster.secretFile " + file + " is a symlink: name the file itself");
        }
        if (!attributes.isRegularFile()) {
            throw new IllegalStateException("cluster.secretFile " + file + " is not a regular file");
        }
        int owner = (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (owner != 0 && owner != self) {
            throw new IllegalStateException("cluster.secretFile " + file + " is owned by uid " + owner
                    + ": it must be owned by root (chown root " + file + ")");
        }
        Set<PosixFilePermission> open = groupOrOther(attributes.permissions());
        if (!open.isEmpty()) {
            throw new IllegalStateException("cluster.secretFile " + file + " is accessible to group or others ("
                    + java.nio.file.attribute.PosixFilePermissions.toString(attributes.permissions())
                    + "): it must be 0600 or 0400 (chmod 600 " + file + ")");
        }
        return attributes;
    }

    /** The key id that signs: a digest of the current secret that says nothing about it. */
    String currentKid() {
        return keys.get(0).kid();
    }

    /** The envelope of {@code body} for entry {@code key} of map {@code map}, signed with the current secret. */
    public String seal(String map, String key, String body) {
        Key current = keys.get(0);
        return new JsonObject().put("kid", current.kid()).put("mac", mac(current, map, key, body)).put("body", body)
                .encode();
    }

    /**
     * The body of a value read from entry {@code key} of {@code map}, once its MAC verifies under one
     * of this router's secrets. Nothing of the value is interpreted before that.
     */
    public String open(String map, String key, String value) throws Refused {
        JsonObject envelope;
        try {
            envelope = new JsonObject(value);
        } catch (RuntimeException e) { // DecodeException, or JSON that is not an object
            throw new Refused(Reason.MALFORMED, "not a JSON object");
        }
        if (!envelope.containsKey("mac")) {
            throw new Refused(Reason.UNSIGNED, "no MAC");
        }
        if (!(envelope.getValue("mac") instanceof String mac) || !(envelope.getValue("kid") instanceof String kid)
                || !(envelope.getValue("body") instanceof String body) || envelope.size() != 3) {
            throw new Refused(Reason.MALFORMED, "not an envelope of kid, mac and body");
        }
        Key known = keys.stream().filter(k -> k.kid().equals(kid)).findFirst()
                .orElseThrow(() -> new Refused(Reason.UNKNOWN_KEY, "signed under key id " + printable(kid)
                        + ", which none of this router's secrets has"));
        byte[] expected = mac(known, map, key, body).getBytes(StandardCharsets.US_ASCII);
        if (!MessageDigest.isEqual(expected, mac.getBytes(StandardCharsets.UTF_8))) {
            throw new Refused(Reason.BAD_MAC, "the MAC does not verify under key id " + kid);
        }
        return body;
    }

    private static String mac(Key key, String map, String entry, String body) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key.spec());
            // Length-prefixed fields: no two (map, key, body) triples share an input.
            mac.update(DOMAIN.getBytes(StandardCharsets.US_ASCII));
            for (String field : List.of(map, entry, body)) {
                byte[] bytes = field.getBytes(StandardCharsets.UTF_8);
                mac.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
                mac.update(bytes);
            }
            return HexFormat.of().formatHex(mac.doFinal());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static String kidOf(byte[] secret) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update("nexuscore.fleet.kid\n".getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(sha.digest(secret), 0, 8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /** A peer's text in a log line: bounded, printable. */
    private static String printable(String text) {
        String cut = text.length() > 32 ? text.substring(0, 32) + "…" : text;
        return '"' + cut.replaceAll("[^\\x20-\\x7e]", "?") + '"';
    }

    private static Set<PosixFilePermission> groupOrOther(Set<PosixFilePermission> permissions) {
        Set<PosixFilePermission> open = java.util.EnumSet.noneOf(PosixFilePermission.class);
        open.addAll(permissions);
        open.removeAll(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE));
        return open;
    }
}
