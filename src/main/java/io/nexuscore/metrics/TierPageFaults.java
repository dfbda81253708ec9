package io.nexuscore.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.classify.Tier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Page faults of each tier's worker threads (one guest instance each), minor and major, from
 * {@code /proc/self/task/<tid>/stat}: {@code nexus_tier_page_faults_total{tier,kind}}. A Wasm guest
 * growing or first touching its memory faults in its worker's thread, so these are the guests'
 * page faults (plus the little the worker's own Java code adds).
 *
 * <p>Workers are recognised by their thread name {@code tier-<tier>-worker-<n>} (WasmTierPool), as
 * the kernel keeps it: cut at 15 characters, enough for the tier. Faults of a thread that exits
 * stay counted, so the counter never goes back.
 */
public final class TierPageFaults implements KernelReading {

    /** minor or major, the {@code kind} label. */
    public enum Kind { MINOR, MAJOR }

    private final Path tasks;
    /** tid -> tier and the fault counts at the last reading. */
    private final Map<Long, ThreadFaults> live = new HashMap<>();
    private final Map<Tier, long[]> retired = new EnumMap<>(Tier.class);
    private final Map<String, Long> totals = new ConcurrentHashMap<>();
    private final List<Meter> meters = new ArrayList<>();
    private MeterRegistry registry;

    private record ThreadFaults(Tier tier, long minor, long major) {
    }

    public TierPageFaults() {
        this(Path.of("/proc/self/task"));
    }

    TierPageFaults(Path tasks) {
        this.tasks = tasks;
        for (Tier tier : Tier.values()) {
            retired.put(tier, new long[2]);
        }
    }

    public synchronized TierPageFaults bindTo(MeterRegistry registry) {
        this.registry = registry;
        for (Tier tier : Tier.values()) {
            for (Kind kind : Kind.values()) {
                String key = key(tier, kind);
                meters.add(FunctionCounter.builder("nexus.tier.page.faults", totals, t -> t.getOrDefault(key, 0L))
                        .tag("tier", tier.label()).tag("kind", kind.name().toLowerCase(java.util.Locale.ROOT))
                        .description("Page faults taken by the tier's worker threads (one guest instance each)")
                        .register(registry));
            }
        }
        return this;
    }

    /** Faults of the tier's workers, all readings so far (call {@link #refresh} first). */
    public long faults(Tier tier, Kind kind) {
        return totals.getOrDefault(key(tier, kind), 0L);
    }

    @Override
    public synchronized void refresh() {
        Map<Long, ThreadFaults> now = new HashMap<>();
        try (Stream<Path> dirs = Files.list(tasks)) {
            dirs.forEach(dir -> read(dir).ifPresent(f -> now.put(Long.parseLong(dir.getFileName().toString()), f)));
        } catch (IOException e) {
            return; // /proc unreadable: keep the last totals
        }
        for (Map.Entry<Long, ThreadFaults> gone : live.entrySet()) {
            if (!now.containsKey(gone.getKey())) {
                long[] r = retired.get(gone.getValue().tier());
                r[0] += gone.getValue().minor();
                r[1] += gone.getValue().major();
            }
        }
        live.clear();
        live.putAll(now);
        for (Tier tier : Tier.values()) {
            long minor = retired.get(tier)[0];
            long major = retired.get(tier)[1];
            for (ThreadFaults f : live.values()) {
                if (f.tier() == tier) {
                    minor += f.minor();
                    major += f.major();
                }
            }
            totals.put(key(tier, Kind.MINOR), minor);
            totals.put(key(tier, Kind.MAJOR), major);
        }
    }

    /** A worker thread's tier and faults; empty for other threads and threads that just exited. */
    static Optional<ThreadFaults> read(Path taskDir) {
        try {
            Optional<Tier> tier = tierOf(Files.readString(taskDir.resolve("comm")).trim());
            if (tier.isEmpty()) {
                return Optional.empty();
            }
            long[] faults = faultsFromStat(Files.readString(taskDir.resolve("stat")));
            return Optional.of(new ThreadFaults(tier.get(), faults[0], faults[1]));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The tier of a thread named {@code tier-<tier>-worker-<n>} (possibly cut at 15 characters). */
    static Optional<Tier> tierOf(String comm) {
        for (Tier tier : Tier.values()) {
            if (comm.startsWith("tier-" + tier.label() + "-")) {
                return Optional.of(tier);
            }
        }
        return Optional.empty();
    }

    /**
     * minflt and majflt (fields 10 and 12 of proc(5) stat). The name in parentheses may hold
     * spaces and parentheses: fields are counted after the last ')'.
     */
    static long[] faultsFromStat(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        // f[0] is field 3 (state): field n is f[n - 3].
        return new long[] {Long.parseLong(f[10 - 3]), Long.parseLong(f[12 - 3])};
    }

    private static String key(Tier tier, Kind kind) {
        return tier.label() + '/' + kind;
    }

    @Override
    public synchronized void close() {
        if (registry != null) {
            meters.forEach(registry::remove);
        }
        meters.clear();
    }
}
