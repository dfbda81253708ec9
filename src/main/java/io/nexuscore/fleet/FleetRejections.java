package io.nexuscore.fleet;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.fleet.FleetKeys.Reason;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Values from the cluster this router refused ({@code nexus_fleet_rejected_total{reason}}). The maps
 * are read every sync and every heartbeat, and a refused value stays where a stranger put it (or is
 * written again as soon as the fleet puts its own back), so a value is counted once however often it
 * is read, and a map's refusals are logged once per reason and {@link #LOG_EVERY}: a stranger can
 * fill neither the counter nor the log. The counter's rate is the measure of an attack, not the log.
 */
final class FleetRejections {

    private static final Logger LOG = System.getLogger(FleetRejections.class.getName());
    /** Distinct refused values remembered (by digest) so that a value read again is not counted again. */
    private static final int REMEMBERED = 1024;
    /** A map's refusals of one reason are logged again after this long, while they go on. */
    static final Duration LOG_EVERY = Duration.ofMinutes(1);

    private final Map<Reason, Counter> counters = new EnumMap<>(Reason.class);
    private final Map<String, Boolean> seen = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED;
        }
    };
    /** When each map-and-reason was last logged (System.nanoTime). */
    private final Map<String, Long> logged = new HashMap<>();
    private final LongSupplier nanoClock;

    FleetRejections(MeterRegistry registry) {
        this(registry, System::nanoTime);
    }

    FleetRejections(MeterRegistry registry, LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
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
     * @return whether it was logged
     */
    synchronized boolean refused(String map, Reason reason, String detail, String identity) {
        if (seen.put(digest(map + '\0' + reason + '\0' + identity), Boolean.TRUE) == null) {
            counters.get(reason).increment();
        }
        long now = nanoClock.getAsLong();
        Long last = logged.get(map + '\0' + reason);
        if (last != null && now - last < LOG_EVERY.toNanos()) {
            return false;
        }
        logged.put(map + '\0' + reason, now);
        LOG.log(Level.WARNING, "fleet: refused a value in " + map + " (" + reason.label() + ": " + detail
                + "); never applied. Something without the fleet's secret writes to the cluster port (see"
                + " nexus_fleet_rejected_total; this is logged at most once a minute per map and reason)");
        return true;
    }

    private static String digest(String identity) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(identity.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    double count(Reason reason) {
        return counters.get(reason).count();
    }
}
