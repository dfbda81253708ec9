package io.nexuscore.misroute;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The misroute counters (Prometheus {@code nexus_*_total}), written by the data plane for every
 * answer that carries the tier's own assessment, and read back per assigned tier for GET /tiers.
 * Rates are counter / {@value #ASSESSED}.
 */
public final class MisrouteMeters {

    /** Answers with an observed tier, by assigned tier: the denominator of every rate. */
    public static final String ASSESSED = "nexus_assessed_requests";
    /** Strict misroutes, by assigned and observed tier. */
    public static final String STRICT = "nexus_misroutes";
    /** Banded misroutes, by assigned and observed tier. */
    public static final String BANDED = "nexus_misroutes_banded";
    /** Gross misroutes (nano and large swapped), by assigned and observed tier. */
    public static final String GROSS = "nexus_misroutes_gross";

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public MisrouteMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    public void record(Tier assigned, Tier observed, Misroute misroute) {
        counter(ASSESSED, "Answers that carry the tier's own assessment (X-NX-Tier), by assigned tier",
                assigned, null).increment();
        if (misroute.strict()) {
            counter(STRICT, "Strict misroutes: the tier's own assessment differs from the assigned tier",
                    assigned, observed).increment();
        }
        if (misroute.banded()) {
            counter(BANDED, "Banded misroutes: the true score lies more than the band outside the assigned tier's range",
                    assigned, observed).increment();
        }
        if (misroute.gross()) {
            counter(GROSS, "Gross misroutes: nano assigned and large observed, or the reverse",
                    assigned, observed).increment();
        }
    }

    private Counter counter(String name, String description, Tier assigned, Tier observed) {
        String key = name + '/' + assigned.label() + '/' + (observed == null ? "" : observed.label());
        return counters.computeIfAbsent(key, k -> {
            Counter.Builder b = Counter.builder(name).description(description).tag("assigned", assigned.label());
            if (observed != null) {
                b.tag("observed", observed.label());
            }
            return b.register(registry);
        });
    }

    /**
     * The figures for one assigned tier as GET /tiers shows them: counts and rates (0 when nothing
     * was assessed yet), read from {@code registry}.
     */
    public static JsonObject summary(MeterRegistry registry, Tier assigned) {
        double assessed = sum(registry, ASSESSED, assigned);
        JsonObject out = new JsonObject().put("assessed", (long) assessed);
        for (String[] kind : new String[][] {{"strict", STRICT}, {"banded", BANDED}, {"gross", GROSS}}) {
            double n = sum(registry, kind[1], assigned);
            out.put(kind[0], (long) n).put(kind[0] + "_rate", assessed == 0 ? 0.0 : n / assessed);
        }
        return out;
    }

    private static double sum(MeterRegistry registry, String name, Tier assigned) {
        return registry.find(name).tag("assigned", assigned.label()).counters().stream()
                .mapToDouble(Counter::count).sum();
    }
}
