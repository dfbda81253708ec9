package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.classify.Tier;
import io.vertx.core.Vertx;
import java.lang.System.Logger.Level;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;

/**
 * Kernel mode's tenant floors for the data plane: a copy of the pinned {@code tenant_policy} map,
 * authoritative for every connection. The SYN mark covers only connections the TC chain saw and
 * marked (not SYN-cookie connections, not other interfaces) and never changes after accept; this
 * copy covers them all and follows changes: writes through the control plane refresh it before they
 * return, and a periodic re-read picks up changes made behind its back (bpftool).
 *
 * Lookups read memory only (the data plane calls them on event loops); the re-read runs on a worker.
 */
public final class PinnedTenantFloors implements TenantFloors, PrefixFloors, AutoCloseable {

    /** How soon a change made outside the control plane (bpftool) reaches open connections. */
    public static final long REFRESH_MS = 1_000;
    private static final System.Logger LOG = System.getLogger(PinnedTenantFloors.class.getName());

    private final PrefixFloors pinned;
    private volatile Map<Ipv4Prefix, Tier> snapshot;
    private final Vertx vertx;
    private final long timer;

    /** @param pinned the kernel map (every call a syscall) */
    public PinnedTenantFloors(Vertx vertx, PrefixFloors pinned) {
        this.pinned = pinned;
        this.vertx = vertx;
        this.snapshot = Map.copyOf(pinned.entries());
        this.timer = vertx.setPeriodic(REFRESH_MS, id -> vertx.executeBlocking(() -> {
            refresh();
            return null;
        }, false));
    }

    @Override
    public Optional<Tier> floorFor(Inet4Address client) {
        return InMemoryPrefixFloors.longestMatch(snapshot, ByteBuffer.wrap(client.getAddress()).getInt());
    }

    @Override
    public boolean authoritative() {
        return true;
    }

    @Override
    public synchronized void put(Ipv4Prefix prefix, Tier floor) {
        pinned.put(prefix, floor);
        refresh();
    }

    @Override
    public synchronized boolean remove(Ipv4Prefix prefix) {
        boolean removed = pinned.remove(prefix);
        refresh();
        return removed;
    }

    @Override
    public Map<Ipv4Prefix, Tier> entries() {
        return pinned.entries();
    }

    @Override
    public int capacity() {
        return pinned.capacity();
    }

    private void refresh() {
        try {
            snapshot = Map.copyOf(pinned.entries());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot re-read the tenant map, keeping the last copy: {0}", e.getMessage());
        }
    }

    @Override
    public void close() {
        vertx.cancelTimer(timer);
    }
}
