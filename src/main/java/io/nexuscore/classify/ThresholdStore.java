package io.nexuscore.classify;

/**
 * The live thresholds. In kernel mode they live in the pinned {@code score_thresholds} map, which
 * operators and the kernel feedback loop may change behind the router's back: always read, never cache.
 */
public interface ThresholdStore {

    Thresholds read();

    void write(Thresholds thresholds);
}
