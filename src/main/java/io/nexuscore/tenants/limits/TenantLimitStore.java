package io.nexuscore.tenants.limits;

import io.nexuscore.config.AtomicFile;
import io.nexuscore.tenants.TenantId;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Tenants' limits, set through the control plane and shared by the fleet, as {@code TenantKeys} keeps
 * API keys: a JSON file beside the control plane's state file ({@code state.json} gives
 * {@code state.limits.json}), rewritten atomically on every change; the data plane reads an immutable
 * snapshot and never blocks. Changes touch the disk: call them on worker threads.
 */
public final class TenantLimitStore {

    /** The file's size at most: ~120 bytes a tenant, room for a hundred thousand tenants and more. */
    private static final long MAX_FILE_BYTES = 16L << 20;

    private final Optional<Path> file;
    /** Guarded by this; the source of {@link #snapshot}. */
    private final TreeMap<String, TenantLimits> byTenant = new TreeMap<>();
    private volatile Map<String, TenantLimits> snapshot = Map.of();

    private TenantLimitStore(Optional<Path> file) {
        this.file = file;
    }

    /** Limits that live as long as the process (tests, tools). */
    public static TenantLimitStore inMemory() {
        return new TenantLimitStore(Optional.empty());
    }

    /** The limits saved in {@code file}, or none when it does not exist yet; changes are saved there. */
    public static TenantLimitStore load(Path file) {
        TenantLimitStore store = new TenantLimitStore(Optional.of(file));
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            try {
                JsonObject tenants = new JsonObject(io.nexuscore.config.PrivateFile.read(file, MAX_FILE_BYTES))
                        .getJsonObject("tenants");
                if (tenants == null) {
                    throw new IllegalArgumentException("no 'tenants' object");
                }
                for (String id : tenants.fieldNames()) {
                    if (!TenantId.valid(id)) {
                        throw new IllegalArgumentException("tenant id '" + id + "' is not " + TenantId.RULE);
                    }
                    TenantLimits limits = TenantLimits.fromJson(tenants.getJsonObject(id));
                    if (!limits.none()) {
                        store.byTenant.put(id, limits);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read tenant limits file " + file + ": " + e.getMessage(), e);
            } catch (DecodeException | ClassCastException | NullPointerException | IllegalArgumentException e) {
                throw new IllegalStateException("tenant limits file " + file + " is invalid (" + e.getMessage()
                        + "); fix or delete it", e);
            }
            store.publish();
        }
        return store;
    }

    /** Where the limits are kept beside a state file: {@code state.json} gives {@code state.limits.json}. */
    public static Path besideStateFile(Path stateFile) {
        String name = stateFile.getFileName().toString();
        String stem = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
        return stateFile.resolveSibling(stem + ".limits.json");
    }

    /** The tenant's own limits; empty when none are set. Never blocks (the data plane's lookup). */
    public Optional<TenantLimits> of(String tenant) {
        return Optional.ofNullable(snapshot.get(tenant));
    }

    /** Every tenant's limits, in id order. */
    public synchronized SortedMap<String, TenantLimits> list() {
        return new TreeMap<>(byTenant);
    }

    public synchronized Optional<TenantLimits> get(String id) {
        return Optional.ofNullable(byTenant.get(id));
    }

    /**
     * Sets a tenant's limits (all unlimited removes them) and saves.
     *
     * @return true when the tenant had no limits before
     */
    public synchronized boolean put(String id, TenantLimits limits) {
        TenantLimits previous = byTenant.get(id);
        if (limits.none()) {
            byTenant.remove(id);
        } else {
            byTenant.put(id, limits);
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
        return previous == null;
    }

    /** Removes a tenant's limits. @return true when it had any */
    public synchronized boolean delete(String id) {
        if (!byTenant.containsKey(id)) {
            return false;
        }
        put(id, TenantLimits.NONE);
        return true;
    }

    /**
     * Writes {@code next} (empty: removes) only while the tenant's limits are still {@code expected},
     * in one step: the fleet's agent, which read the store earlier, never overwrites a change made here since.
     *
     * @return false, having written nothing, when the limits are no longer {@code expected}
     */
    public synchronized boolean replace(String id, Optional<TenantLimits> expected, Optional<TenantLimits> next) {
        if (!get(id).equals(expected)) {
            return false;
        }
        put(id, next.orElse(TenantLimits.NONE));
        return true;
    }

    private void publish() {
        snapshot = Map.copyOf(byTenant);
    }

    /** A temporary file beside the target, synced and renamed over it: never a torn file. */
    private void save() {
        if (file.isEmpty()) {
            return;
        }
        JsonObject tenants = new JsonObject();
        byTenant.forEach((id, limits) -> tenants.put(id, limits.toJson()));
        byte[] bytes = new JsonObject().put("tenants", tenants).encodePrettily().getBytes(StandardCharsets.UTF_8);
        try {
            AtomicFile.write(file.get(), bytes, true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot save tenant limits to " + file.get() + ": " + e, e);
        }
    }
}
