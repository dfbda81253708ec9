package io.nexuscore.classify;

import java.util.concurrent.atomic.AtomicReference;

/** Thresholds for user-space mode, where no kernel map exists. */
public final class InMemoryThresholdStore implements ThresholdStore {

    private final AtomicReference<ThresholdState> current;

    public InMemoryThresholdStore(Thresholds initial) {
        this.current = new AtomicReference<>(ThresholdState.of(initial, ThresholdState.WRITER_API, 1));
    }

    @Override
    public ThresholdState state() {
        return current.get();
    }

    @Override
    public boolean compareAndSet(ThresholdState expected, ThresholdState next) {
        // Records compare by value, the map's CAS by its 8 bytes: the same rule.
        ThresholdState now = current.get();
        return now.equals(expected) && current.compareAndSet(now, next);
    }
}
