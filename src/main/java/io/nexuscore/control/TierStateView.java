package io.nexuscore.control;

import io.nexuscore.classify.Tier;
import java.util.Map;

/**
 * Pool state per tier for GET /tiers (queue depth, busy workers, cold starts...), as the tier pools
 * report it. Keys and values must be JSON-friendly (strings, numbers, booleans, maps, lists).
 */
@FunctionalInterface
public interface TierStateView {

    Map<Tier, Map<String, Object>> snapshot();

    TierStateView NONE = Map::of;
}
