package io.nexuscore.classify;

import io.vertx.core.Vertx;
import java.util.function.Supplier;

/**
 * A non-blocking view of a blocking threshold store, for code on event loops: in kernel mode a
 * read is a bpf(2) syscall, so the value is refreshed off the loop every {@link #REFRESH_MS} ms
 * and {@link #get()} returns the latest copy. Used where a change a moment late does no harm
 * (the observed tier of an upstream's answer); the data plane's tier decision reads the map itself.
 * Part of the one threshold-read policy, {@link LiveThresholds}.
 */
public final class ThresholdSnapshot implements Supplier<Thresholds>, AutoCloseable {

    static final long REFRESH_MS = 100;

    private final Vertx vertx;
    private final long timer;
    private volatile Thresholds current;

    public ThresholdSnapshot(Vertx vertx, ThresholdStore store) {
        this.vertx = vertx;
        this.current = store.read();
        this.timer = vertx.setPeriodic(REFRESH_MS, id ->
                vertx.executeBlocking(store::read, false).onSuccess(value -> current = value));
    }

    @Override
    public Thresholds get() {
        return current;
    }

    @Override
    public void close() {
        vertx.cancelTimer(timer);
    }
}
