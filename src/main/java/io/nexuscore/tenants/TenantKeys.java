package io.nexuscore.tenants;

import io.nexuscore.config.AtomicFile;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The data plane's API keys, by tenant: {@code Authorization: Bearer <key>} names the tenant whose
 * key it is. Only hashes are held, written and shown: {@code sha256:<hex>}, the SHA-256 of the key's
 * UTF-8 bytes, unsalted (keys are random tokens, not passwords: a salt buys nothing against a
 * 256-bit guess and would cost a hash per stored key per request). The operator sends the hash, so
 * the plaintext never reaches the control plane.
 *
 * <p>A hash belongs to one tenant. Saved in a JSON file beside the control plane's state file (mode
 * 0600), rewritten atomically on every change; the lookup reads an immutable snapshot and never
 * blocks. Changes touch the disk: call them on worker threads.
 */
public final class TenantKeys {

    public static final String HASH_PREFIX = "sha256:";
    /** The keys file's size at most: ~70 bytes a hash, so room for a few hundred thousand keys. */
    private static final long MAX_FILE_BYTES = 32L << 20;
    private static final Pattern HASH = Pattern.compile("sha256:[0-9a-f]{64}");

    /** A hash another tenant holds. */
    public static final class KeyInUse extends RuntimeException {
        public KeyInUse(String hash, String owner) {
            super("key " + hash + " already belongs to tenant '" + owner + "'");
        }
    }

    private record Entry(byte[] hash, String tenant) {
    }

    private final Optional<Path> file;
    /** Guarded by this; the source of {@link #entries}. */
    private final Map<String, List<String>> byTenant = new TreeMap<>();
    private volatile Entry[] entries = new Entry[0];

    private TenantKeys(Optional<Path> file) {
        this.file = file;
    }

    /** Keys that live as long as the process (tests, tools). */
    public static TenantKeys inMemory() {
        return new TenantKeys(Optional.empty());
    }

    /** The keys saved in {@code file}, or none when it does not exist yet; changes are saved there. */
    public static TenantKeys load(Path file) {
        TenantKeys keys = new TenantKeys(Optional.of(file));
        if (Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try {
                // Hashes of keys that name tenants: only root's own 0600 file, never through a link.
                JsonObject tenants = new JsonObject(io.nexuscore.config.PrivateFile.read(file, MAX_FILE_BYTES))
                        .getJsonObject("tenants");
                if (tenants == null) {
                    throw new IllegalArgumentException("no 'tenants' object");
                }
                for (String id : tenants.fieldNames()) {
                    List<String> hashes = new ArrayList<>();
                    for (Object hash : tenants.getJsonArray(id)) {
                        hashes.add(checked((String) hash));
                    }
                    keys.byTenant.put(id, List.copyOf(hashes));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read tenant keys file " + file + ": " + e.getMessage(), e);
            } catch (DecodeException | ClassCastException | NullPointerException | IllegalArgumentException e) {
                throw new IllegalStateException("tenant keys file " + file + " is invalid (" + e.getMessage()
                        + "); fix or delete it", e);
            }
            keys.publish();
        }
        return keys;
    }

    /** Where the keys are kept beside a state file: {@code state.json} gives {@code state.keys.json}. */
    public static Path besideStateFile(Path stateFile) {
        String name = stateFile.getFileName().toString();
        String stem = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
        return stateFile.resolveSibling(stem + ".keys.json");
    }

    /** {@code sha256:<hex>} of a key, as stored and as the API takes it. */
    public static String hash(String key) {
        return HASH_PREFIX + HexFormat.of().formatHex(sha256(key));
    }

    /**
     * The tenant whose key this is. Hashes the key once and compares the hash with every stored one
     * in constant time, without stopping at a match: the time taken says nothing about which stored
     * hash matched or how much of one did.
     */
    public Optional<String> tenantOf(String key) {
        byte[] presented = sha256(key);
        String owner = null;
        for (Entry entry : entries) {
            if (MessageDigest.isEqual(presented, entry.hash()) & owner == null) {
                owner = entry.tenant();
            }
        }
        return Optional.ofNullable(owner);
    }

    /** Key hashes by tenant id, in id order; tenants without keys are absent. */
    public synchronized Map<String, List<String>> list() {
        return new TreeMap<>(byTenant);
    }

    /** Whether the tenant holds at least one key. */
    public synchronized boolean has(String id) {
        return byTenant.containsKey(id);
    }

    public synchronized List<String> get(String id) {
        return byTenant.getOrDefault(id, List.of());
    }

    /**
     * Replaces a tenant's key hashes (an empty list removes them) and saves.
     *
     * @return the hashes now stored, duplicates dropped, in the order given
     * @throws IllegalArgumentException when a hash is not {@code sha256:} and 64 lower-case hex digits
     * @throws KeyInUse                 when another tenant holds one of them
     */
    public synchronized List<String> put(String id, List<String> hashes) {
        LinkedHashSet<String> unique = new LinkedHashSet<>();
        for (String hash : hashes) {
            unique.add(checked(hash));
        }
        byTenant.forEach((other, held) -> {
            if (!other.equals(id)) {
                held.stream().filter(unique::contains).findFirst().ifPresent(h -> {
                    throw new KeyInUse(h, other);
                });
            }
        });
        List<String> previous = byTenant.get(id);
        List<String> next = List.copyOf(unique);
        if (next.isEmpty()) {
            byTenant.remove(id);
        } else {
            byTenant.put(id, next);
        }
        try {
            save();
        } catch (UncheckedIOException e) {
            // The API promises a change survives a restart; without the file it would not.
            if (previous == null) {
                byTenant.remove(id);
            } else {
                byTenant.put(id, previous);
            }
            throw e;
        }
        publish();
        return next;
    }

    /**
     * Replaces a tenant's key hashes with {@code next} only while they are still {@code expected}
     * (empty: none), in one step: a writer that read the store earlier (the fleet's agent) never
     * overwrites a change made here since.
     *
     * @return false, having written nothing, when the tenant's hashes are no longer {@code expected}
     * @throws IllegalArgumentException as {@link #put}
     * @throws KeyInUse                 as {@link #put}
     */
    public synchronized boolean replace(String id, List<String> expected, List<String> next) {
        if (!get(id).equals(expected)) {
            return false;
        }
        put(id, next);
        return true;
    }

    /** Removes all of a tenant's keys. @return true when it had any */
    public synchronized boolean delete(String id) {
        if (!byTenant.containsKey(id)) {
            return false;
        }
        put(id, List.of());
        return true;
    }

    /** True when {@code hash} is {@code sha256:} and 64 lower-case hex digits. */
    public static boolean isHash(String hash) {
        return hash != null && HASH.matcher(hash).matches();
    }

    private static String checked(String hash) {
        if (!isHash(hash)) {
            throw new IllegalArgumentException("a key hash is 'sha256:' and 64 lower-case hex digits (the SHA-256 of the key)");
        }
        return hash;
    }

    private static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private void publish() {
        List<Entry> all = new ArrayList<>();
        byTenant.forEach((id, hashes) -> hashes.forEach(h ->
                all.add(new Entry(HexFormat.of().parseHex(h.substring(HASH_PREFIX.length())), id))));
        entries = all.toArray(Entry[]::new);
    }

    /** A temporary file beside the target, synced and renamed over it: never a torn file. */
    private void save() {
        if (file.isEmpty()) {
            return;
        }
        Path target = file.get();
        JsonObject tenants = new JsonObject();
        byTenant.forEach((id, hashes) -> tenants.put(id, new JsonArray(hashes)));
        byte[] bytes = new JsonObject().put("tenants", tenants).encodePrettily().getBytes(StandardCharsets.UTF_8);
        try {
            AtomicFile.write(target, bytes, true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot save tenant keys to " + target + ": " + e, e);
        }
    }
}
