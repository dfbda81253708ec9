package io.nexuscore.tiers;

import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.config.TierConfig;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/** Builds the Wasm pools for the tiers that run guests (tiers with an upstream are left out). */
public final class TierPools {

    private TierPools() {
    }

    public static Map<Tier, TierBackend> create(RouterConfig config, MeterRegistry registry) {
        return create(config.tiers(), registry);
    }

    /**
     * Starts one {@link WasmTierPool} per tier without an upstream. Every tier's engine limits are
     * checked before any pool starts, so a bad config fails fast; if a pool fails to start, the ones
     * already started are closed.
     */
    public static Map<Tier, TierBackend> create(Map<Tier, TierConfig> tiers, MeterRegistry registry) {
        for (TierConfig tier : tiers.values()) {
            if (tier.upstream().isEmpty()) {
                WasmTierPool.checkFits(tier);
            }
        }
        Map<Tier, TierBackend> pools = new EnumMap<>(Tier.class);
        try {
            for (TierConfig tier : tiers.values()) {
                if (tier.upstream().isEmpty()) {
                    pools.put(tier.tier(), WasmTierPool.start(tier, registry));
                }
            }
        } catch (RuntimeException e) {
            pools.values().forEach(TierBackend::close);
            throw e;
        }
        return Collections.unmodifiableMap(pools);
    }
}
