package io.nexuscore.misroute;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonObject;

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

    private static final String[] NAMES = {ASSESSED, STRICT, BANDED, GROSS};

    private final MeterRegistry registry;
    /**
     * Registered counters by name index (NAMES), assigned tier and observed tier (+1; 0 = none),
     * filled as combinations first occur. Looked up per answer, so no key is built: racing threads
     * may both register one, and Micrometer hands both the same counter.
     */
    private final Counter[][][] counters = new Counter[NAMES.length][Tier.values().length][Tier.values().length + 1];

    public MisrouteMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    public void record(Tier assigned, Tier observed, Misroute misroute) {
        counter(0, "Answers that carry the tier's own assessment (X-NX-Tier), by assigned tier",
                assigned, null).increment();
        if (misroute.strict()) {
            counter(1, "Strict misroutes: the tier's own assessment differs from the assigned tier",
                    assigned, observed).increment();
        }
        if (misroute.banded()) {
            counter(2, "Banded misroutes: the true score lies more than the band outside the assigned tier's range",
                    assigned, observed).increment();
        }
        if (misroute.gross()) {
            counter(3, "Gross misroutes: nano assigned and large observed, or the reverse",
                    assigned, observed).increment();
        }
    }

    /** The counter NAMES[kind] for the two tiers, registered on first use. */
    private Counter counter(int kind, String description, Tier assigned, Tier observed) {
        Counter[] byObserved = counters[kind][assigned.ordinal()];
        int column = observed == null ? 0 : observed.ordinal() + 1;
        Counter counter = byObserved[column];
        if (counter == null) {
            Counter.Builder b = Counter.builder(NAMES[kind]).description(description).tag("assigned", assigned.label());
            if (observed != null) {
                b.tag("observed", observed.label());
            }
            counter = b.register(registry);
            byObserved[column] = counter;
        }
        return counter;
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
