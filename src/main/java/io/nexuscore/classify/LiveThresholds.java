package io.nexuscore.classify;

import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The one threshold-read policy. The live thresholds sit in a {@link ThresholdStore} (the pinned
 * {@code score_thresholds} map in kernel mode, memory in user space) and are read three ways:
 * <ul>
 *   <li>the tier decision reads {@link #store()} on every request, exact;</li>
 *   <li>code on an event loop reads {@link #snapshot()}: the store itself when a read costs
 *       {@link ReadCost#MEMORY} (both of the router's stores: memory, and the mmap'ed kernel map), else
 *       a copy refreshed off the loop every {@link #SNAPSHOT_REFRESH};</li>
 *   <li>the control plane compares the store with what it last saw every {@link #CHANGE_POLL}, to
 *       report changes made behind its back (bpftool, the kernel loop) as events.</li>
 * </ul>
 */
public final class LiveThresholds implements AutoCloseable {

    /** How stale an event-loop reader's copy may be in kernel mode. */
    public static final Duration SNAPSHOT_REFRESH = Duration.ofMillis(ThresholdSnapshot.REFRESH_MS);
    /** How soon the control plane notices (and publishes) a change it did not make. */
    public static final Duration CHANGE_POLL = Duration.ofMillis(500);

    private final ThresholdStore store;
    private final ReadCost cost;
    private final Supplier<Thresholds> snapshot;
    private final AutoCloseable refresh;

    private LiveThresholds(ThresholdStore store, ReadCost cost, Supplier<Thresholds> snapshot, AutoCloseable refresh) {
        this.store = store;
        this.cost = cost;
        this.snapshot = snapshot;
        this.refresh = refresh;
    }

    /** Starts the snapshot refresh when reads are syscalls; {@link #close} stops it. */
    public static LiveThresholds start(Vertx vertx, ThresholdStore store, ReadCost cost) {
        if (!cost.blocking()) {
            return new LiveThresholds(store, cost, store::read, () -> { });
        }
        ThresholdSnapshot snapshot = new ThresholdSnapshot(vertx, store);
        return new LiveThresholds(store, cost, snapshot, snapshot);
    }

    /** Exact reads and writes; a syscall when {@link #cost()} says so. */
    public ThresholdStore store() {
        return store;
    }

    public ReadCost cost() {
        return cost;
    }

    /** Never blocks: for event loops. */
    public Supplier<Thresholds> snapshot() {
        return snapshot;
    }

    @Override
    public void close() throws Exception {
        refresh.close();
    }
}
