package io.nexuscore.control;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.nexuscore.kernel.maps.AdaptiveControl;
import io.nexuscore.kernel.DataPathControl;
import io.nexuscore.kernel.maps.NotInKernelMode;
import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The control plane's own gauges and counters, and the reading of the data plane's latency timers.
 *
 * <p>Kernel figures need syscalls, which a scrape must not make on an event loop: {@link #refresh}
 * (called on a worker before each scrape) copies them into fields the meters read.
 */
final class ControlMetrics {

    /** The data plane's per-request latency timer, tagged {@code tier} (either spelling of the name). */
    static final List<String> REQUEST_LATENCY = List.of("nexus_request_latency", "nexus.request.latency");

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final Map<Tier, Long> tierCounters = new ConcurrentHashMap<>();
    private final Map<String, ProgramStats> programs = new ConcurrentHashMap<>();
    private AtomicInteger adaptiveSettingsValid;

    /** @param thresholds the stored value, as any tool left it: a gauge reports it whether valid or not */
    ControlMetrics(MeterRegistry registry, Supplier<ThresholdState> thresholds) {
        this.registry = registry;
        meters.add(Gauge.builder("nexus.threshold", () -> thresholds.get().nanoMax())
                .tag("bound", "nano_max").description("Stored score threshold").register(registry));
        meters.add(Gauge.builder("nexus.threshold", () -> thresholds.get().smallMax())
                .tag("bound", "small_max").description("Stored score threshold").register(registry));
        meters.add(Gauge.builder("nexus.thresholds.valid", () -> thresholds.get().valid() ? 1 : 0)
                .description("1 when the stored thresholds are in order; 0 when a tool wrote them out of order "
                        + "(classification then uses the clamped values)").register(registry));
    }

    /** Copies the kernel's counters and program stats; registers meters for what appears the first time. */
    synchronized void refresh(DataPathControl kernel) {
        for (Map.Entry<Tier, Long> e : kernel.tierCounters().entrySet()) {
            Tier tier = e.getKey();
            if (tierCounters.put(tier, e.getValue()) == null) {
                meters.add(FunctionCounter.builder("nexus.kernel.classified", tierCounters,
                                m -> m.getOrDefault(tier, 0L))
                        .tag("tier", tier.label())
                        .description("Requests the XDP program classified into this tier (per-CPU sum)")
                        .register(registry));
            }
        }
        for (ProgramStats s : kernel.programStats()) {
            String name = s.program();
            if (programs.put(name, s) == null) {
                meters.add(FunctionCounter.builder("nexus.bpf.runs", programs, m -> m.get(name).runCount())
                        .tag("program", name).description("Program runs counted by bpf_stats").register(registry));
                meters.add(FunctionCounter.builder("nexus.bpf.run.seconds", programs,
                                m -> m.get(name).runTimeNs() / 1e9)
                        .tag("program", name).description("Program run time counted by bpf_stats").register(registry));
                meters.add(Gauge.builder("nexus.bpf.run.per.packet.seconds", programs, m -> perRun(m.get(name)))
                        .tag("program", name).description("Mean run time per packet since stats were enabled")
                        .register(registry));
            }
        }
    }

    /**
     * Whether the pinned adaptive settings obey their rules (a tool may have written them); kernel
     * mode only: in user space there is no loop and no gauge.
     */
    synchronized void refreshAdaptive(AdaptiveControl adaptive) {
        boolean valid;
        try {
            valid = adaptive.status().settingsProblem().isEmpty();
        } catch (NotInKernelMode e) {
            return;
        }
        if (adaptiveSettingsValid == null) {
            adaptiveSettingsValid = new AtomicInteger();
            meters.add(Gauge.builder("nexus.adaptive.settings.valid", adaptiveSettingsValid, AtomicInteger::get)
                    .description("1 when the pinned adaptive settings obey their rules; 0 when a tool wrote values "
                            + "they refuse (GET /adaptive shows the defaults and the problem; a PATCH repairs it)")
                    .register(registry));
        }
        adaptiveSettingsValid.set(valid ? 1 : 0);
    }

    private static double perRun(ProgramStats s) {
        return s.runCount() == 0 ? Double.NaN : s.runTimeNs() / 1e9 / s.runCount();
    }

    /** Latency of the tier's completed requests from the data plane's timer; nulls when it has none. */
    JsonObject latency(Tier tier) {
        Collection<Timer> timers = new ArrayList<>();
        for (String name : REQUEST_LATENCY) {
            timers.addAll(registry.find(name).tag("tier", tier.label()).timers());
        }
        JsonObject json = new JsonObject().put("count", null).put("mean_ms", null).put("max_ms", null)
                .put("p50_ms", null).put("p95_ms", null).put("p99_ms", null);
        if (timers.isEmpty()) {
            return json;
        }
        long count = 0;
        double totalMs = 0;
        double maxMs = 0;
        for (Timer t : timers) {
            count += t.count();
            totalMs += t.totalTime(TimeUnit.MILLISECONDS);
            maxMs = Math.max(maxMs, t.max(TimeUnit.MILLISECONDS));
        }
        json.put("count", count).put("mean_ms", count == 0 ? null : totalMs / count).put("max_ms", maxMs);
        if (timers.size() == 1) {
            // Percentiles only exist when the timer publishes them, and cannot be merged across timers.
            HistogramSnapshot snapshot = timers.iterator().next().takeSnapshot();
            Map<Double, Double> byPercentile = new HashMap<>();
            for (ValueAtPercentile v : snapshot.percentileValues()) {
                byPercentile.put(v.percentile(), v.value(TimeUnit.MILLISECONDS));
            }
            json.put("p50_ms", byPercentile.get(0.5)).put("p95_ms", byPercentile.get(0.95))
                    .put("p99_ms", byPercentile.get(0.99));
        }
        return json;
    }

    void close() {
        meters.forEach(registry::remove);
        meters.clear();
    }
}
