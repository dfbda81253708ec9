package io.nexuscore.control;

import io.nexuscore.classify.Tier;
import java.lang.reflect.RecordComponent;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Pool state per tier for GET /tiers (queue depth, busy workers, cold starts...), as the tier pools
 * report it. Keys and values must be JSON-friendly (strings, numbers, booleans, maps, lists).
 */
@FunctionalInterface
public interface TierStateView {

    Map<Tier, Map<String, Object>> snapshot();

    TierStateView NONE = Map::of;

    /**
     * A view over snapshot records (such as the pools' state records): each record component becomes
     * a snake_case field ({@code queueDepth} -> {@code queue_depth}); tiers render as their labels.
     */
    static TierStateView ofRecords(Supplier<? extends Map<Tier, ? extends Record>> states) {
        return () -> {
            Map<Tier, Map<String, Object>> out = new EnumMap<>(Tier.class);
            states.get().forEach((tier, state) -> out.put(tier, fields(state)));
            return out;
        };
    }

    private static Map<String, Object> fields(Record state) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (RecordComponent c : state.getClass().getRecordComponents()) {
            Object value;
            try {
                value = c.getAccessor().invoke(state);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read " + state.getClass().getSimpleName() + "." + c.getName(), e);
            }
            if (value instanceof Tier t) {
                value = t.label();
            } else if (value instanceof Enum<?> e) {
                value = e.name().toLowerCase(Locale.ROOT);
            }
            fields.put(c.getName().replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT), value);
        }
        return fields;
    }
}
