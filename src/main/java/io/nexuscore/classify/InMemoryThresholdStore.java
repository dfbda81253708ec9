package io.nexuscore.classify;

import java.util.concurrent.atomic.AtomicReference;

/** Thresholds for user-space mode, where no kernel map exists. */
public final class InMemoryThresholdStore implements ThresholdStore {

    private final AtomicReference<Thresholds> current;

    public InMemoryThresholdStore(Thresholds initial) {
        this.current = new AtomicReference<>(initial);
    }

    @Override
    public Thresholds read() {
        return current.get();
    }

    @Override
    public void write(Thresholds thresholds) {
        current.set(thresholds);
    }
}
