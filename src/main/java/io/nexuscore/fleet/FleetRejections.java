package io.nexuscore.fleet;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.fleet.FleetKeys.Reason;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Values from the cluster this router refused ({@code nexus_fleet_rejected_total{reason}}). The maps
 * are read every sync and every heartbeat, and a refused value stays where a stranger put it, so it
 * is counted once per distinct value (not once per read) and logged once per map and reason until
 * that map yields a value that verifies again: a stranger can fill neither the counter nor the log.
 */
final class FleetRejections {

    private static final Logger LOG = System.getLogger(FleetRejections.class.getName());
    /** Distinct refused values remembered so that a value read again is not counted again. */
    private static final int REMEMBERED = 1024;

    private final Map<Reason, Counter> counters = new EnumMap<>(Reason.class);
    private final Map<String, Boolean> seen = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED;
        }
    };
    private final Map<String, Reason> logged = new HashMap<>();

    FleetRejections(MeterRegistry registry) {
        for (Reason reason : Reason.values()) {
            counters.put(reason, Counter.builder("nexus.fleet.rejected").tag("reason", reason.label())
                    .description("Values in the fleet's maps this router refused (unsigned, forged, unknown key, "
                            + "malformed, not text, Java-serialized), each distinct value counted once")
                    .register(registry));
        }
    }

    /**
     * A value of {@code map} refused.
     *
     * @param identity what makes this value distinct (its text, or what the failed read said)
     * @return whether it was counted (a value not seen before)
     */
    synchronized boolean refused(String map, Reason reason, String detail, String identity) {
        boolean fresh = seen.put(map + '\0' + reason + '\0' + identity, Boolean.TRUE) == null;
        if (fresh) {
            counters.get(reason).increment();
        }
        if (logged.put(map, reason) != reason) {
            LOG.log(Level.WARNING, "fleet: refused a value in " + map + " (" + reason.label() + ": " + detail
                    + "); never applied. Something without the fleet's secret writes to the cluster port"
                    + " (logged again only when the reason changes)");
        }
        return fresh;
    }

    /** {@code map} yielded a value that verified: the next refusal there is logged again. */
    synchronized void verified(String map) {
        logged.remove(map);
    }

    double count(Reason reason) {
        return counters.get(reason).count();
    }
}
