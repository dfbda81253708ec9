package io.nexuscore.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kernel map read is a syscall: the snapshot must refresh it off the event loop and see changes. */
class ThresholdSnapshotTest {

    /** A store that records whether each read ran on an event loop. */
    private static final class RecordingStore implements ThresholdStore {
        final List<Boolean> readOnEventLoop = new CopyOnWriteArrayList<>();
        final InMemoryThresholdStore value = new InMemoryThresholdStore(Thresholds.DEFAULT);

        @Override
        public ThresholdState state() {
            readOnEventLoop.add(Context.isOnEventLoopThread());
            return value.state();
        }

        @Override
        public boolean compareAndSet(ThresholdState expected, ThresholdState next) {
            return value.compareAndSet(expected, next);
        }
    }

    @Test
    void refreshesOffTheEventLoopAndSeesChanges() throws Exception {
        Vertx vertx = Vertx.vertx();
        RecordingStore store = new RecordingStore();
        try (ThresholdSnapshot snapshot = new ThresholdSnapshot(vertx, store)) {
            assertEquals(Thresholds.DEFAULT, snapshot.get());
            store.write(new Thresholds(40, 120));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!snapshot.get().equals(new Thresholds(40, 120)) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(new Thresholds(40, 120), snapshot.get(), "a change reaches the snapshot");
            assertTrue(store.readOnEventLoop.size() > 1, "refreshed periodically");
            assertFalse(store.readOnEventLoop.subList(1, store.readOnEventLoop.size()).contains(true),
                    "no refresh read ran on an event loop");
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
