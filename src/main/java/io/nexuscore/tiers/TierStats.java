package io.nexuscore.tiers;

/** A tier backend that can describe its pool (the Wasm pools do; upstream backends need not). */
public interface TierStats {

    TierPoolState state();
}
