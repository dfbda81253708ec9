package io.nexuscore.misroute;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicReferenceArray;

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

    /** The four counters: name and description, one place each. */
    private enum Kind {
        ASSESSED_ANSWERS(ASSESSED, "Answers that carry the tier's own assessment (X-NX-Tier), by assigned tier"),
        STRICT_MISROUTES(STRICT, "Strict misroutes: the tier's own assessment differs from the assigned tier"),
        BANDED_MISROUTES(BANDED, "Banded misroutes: the true score lies more than the band outside the assigned tier's range"),
        GROSS_MISROUTES(GROSS, "Gross misroutes: nano assigned and large observed, or the reverse");

        final String meter;
        final String description;

        Kind(String meter, String description) {
            this.meter = meter;
            this.description = description;
        }
    }

    private static final int TIERS = Tier.values().length;
    /** Observed-tier columns: none (the assessed count), then each tier. */
    private static final int COLUMNS = TIERS + 1;

    private final MeterRegistry registry;
    /**
     * Registered counters by kind, assigned tier and observed column, filled as combinations first
     * occur: looked up per answer, so by index rather than by a key string built each time. Two
     * loops registering the same one get the same counter from Micrometer.
     */
    private final AtomicReferenceArray<Counter> counters = new AtomicReferenceArray<>(Kind.values().length * TIERS * COLUMNS);

    public MisrouteMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    public void record(Tier assigned, Tier observed, Misroute misroute) {
        counter(Kind.ASSESSED_ANSWERS, assigned, null).increment();
        if (misroute.strict()) {
            counter(Kind.STRICT_MISROUTES, assigned, observed).increment();
        }
        if (misroute.banded()) {
            counter(Kind.BANDED_MISROUTES, assigned, observed).increment();
        }
        if (misroute.gross()) {
            counter(Kind.GROSS_MISROUTES, assigned, observed).increment();
        }
    }

    /** The counter of this kind for the two tiers (observed null: none), registered on first use. */
    private Counter counter(Kind kind, Tier assigned, Tier observed) {
        int slot = (kind.ordinal() * TIERS + assigned.ordinal()) * COLUMNS + (observed == null ? 0 : observed.ordinal() + 1);
        Counter counter = counters.get(slot);
        if (counter == null) {
            Counter.Builder b = Counter.builder(kind.meter).description(kind.description).tag("assigned", assigned.label());
            if (observed != null) {
                b.tag("observed", observed.label());
            }
            counter = b.register(registry);
            counters.set(slot, counter);
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
