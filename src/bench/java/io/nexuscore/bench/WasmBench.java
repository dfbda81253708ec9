package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.TierRequest;
import io.nexuscore.tiers.wasm.ChicoryEngine;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestAbi;
import io.nexuscore.tiers.wasm.WasmEngine;
import io.nexuscore.tiers.wasm.WasmtimeEngine;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * Wasm tier benchmark (not a test; run bench/wasm-bench.sh). Prints, per engine, in one run:
 * instantiate time per tier guest at the tier's default ceiling, the cost of one bare export call,
 * an empty-ish request round trip and a 4 KB request round trip through the full ABI
 * (cabi_realloc + copy in + handle + lift + cabi_post_handle), and the Chicory : wasmtime ratios.
 */
public final class WasmBench {

    private static final int INSTANTIATE_RUNS = 300;
    private static final int CALL_RUNS = 50_000;

    private WasmBench() {
    }

    record Stats(double medianUs, double p99Us, double meanUs) {
        static Stats of(long[] nanos) {
            long[] s = nanos.clone();
            Arrays.sort(s);
            double mean = Arrays.stream(s).average().orElse(0) / 1e3;
            return new Stats(s[s.length / 2] / 1e3, s[(int) (s.length * 0.99)] / 1e3, mean);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "median %9.3f us  p99 %9.3f us  mean %9.3f us", medianUs, p99Us, meanUs);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<Tier, byte[]> guests = new EnumMap<>(Tier.class);
        for (Tier t : Tier.values()) {
            guests.put(t, resource("guests/" + t.label() + ".wasm"));
        }
        TierRequest empty = new TierRequest("t", "", 0, TierRequest.Simulation.NONE);
        StringBuilder p = new StringBuilder();
        while (p.length() < 4096) {
            p.append("token").append(p.length() % 97).append(' ');
        }
        TierRequest fourKb = new TierRequest("summarize", p.substring(0, 4096), 0, TierRequest.Simulation.NONE);

        System.out.printf("wasm-bench: java %s, %d CPUs, %d instantiations and %d calls per figure%n",
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), INSTANTIATE_RUNS, CALL_RUNS);
        Map<String, Stats> results = new java.util.LinkedHashMap<>();
        for (TierConfig.Engine kind : TierConfig.Engine.values()) {
            try (WasmEngine engine = kind == TierConfig.Engine.CHICORY ? new ChicoryEngine() : new WasmtimeEngine()) {
                for (Tier tier : Tier.values()) {
                    long ceilingPages = TierConfig.defaults(tier).memoryLimitPages();
                    if (ceilingPages > engine.maxMemoryPages()) {
                        System.out.printf("%-8s instantiate %-5s  n/a: the %d-page ceiling exceeds the engine's %d%n",
                                engine.name(), tier.label(), ceilingPages, engine.maxMemoryPages());
                        continue;
                    }
                    long t0 = System.nanoTime();
                    WasmEngine.GuestModule module = engine.compile(tier.label(), guests.get(tier));
                    double compileMs = (System.nanoTime() - t0) / 1e6;
                    long[] nanos = new long[INSTANTIATE_RUNS];
                    for (int i = -INSTANTIATE_RUNS; i < INSTANTIATE_RUNS; i++) {
                        long s = System.nanoTime();
                        CoreInstance inst = module.instantiate(i, (int) ceilingPages);
                        long d = System.nanoTime() - s;
                        inst.close();
                        if (i >= 0) {
                            nanos[i] = d;
                        }
                    }
                    Stats st = Stats.of(nanos);
                    results.put(engine.name() + " instantiate " + tier.label(), st);
                    System.out.printf("%-8s instantiate %-5s  %s   (module compile %.1f ms, once)%n",
                            engine.name(), tier.label(), st, compileMs);
                }
                WasmEngine.GuestModule nano = engine.compile("nano", guests.get(Tier.NANO));
                try (CoreInstance inst = nano.instantiate(0, 1024)) {
                    Stats bare = measure(() -> inst.call(CoreInstance.Export.POST_HANDLE, 0));
                    Stats emptyTrip = measure(() -> inst.withDeadline(1000, () -> GuestAbi.call(inst, empty)));
                    Stats fourTrip = measure(() -> inst.withDeadline(1000, () -> GuestAbi.call(inst, fourKb)));
                    results.put(engine.name() + " bare call", bare);
                    results.put(engine.name() + " empty round trip", emptyTrip);
                    results.put(engine.name() + " 4KB round trip", fourTrip);
                    System.out.printf("%-8s bare export call          %s%n", engine.name(), bare);
                    System.out.printf("%-8s empty request round trip  %s%n", engine.name(), emptyTrip);
                    System.out.printf("%-8s 4 KB request round trip   %s%n", engine.name(), fourTrip);
                }
            }
        }
        for (Tier tier : new Tier[] {Tier.NANO, Tier.LARGE}) {
            poolQueueWait(TierConfig.defaults(tier));
        }
        System.out.println();
        System.out.println("ratio chicory : wasmtime (medians; 1 : x means wasmtime takes x times as long)");
        for (String what : new String[] {"instantiate nano", "instantiate small", "bare call", "empty round trip", "4KB round trip"}) {
            Stats c = results.get("chicory " + what);
            Stats w = results.get("wasmtime " + what);
            if (c != null && w != null) {
                System.out.printf(Locale.ROOT, "  %-18s %9.3f us : %9.3f us = 1 : %.1f%n", what, c.medianUs(), w.medianUs(),
                        w.medianUs() / c.medianUs());
            }
        }
    }

    /**
     * Queue wait (time a job spends in the tier's bounded queue) through a real pool at its default config: 4 client
     * threads in a closed loop, so the queue holds at most 4 and the figure is the hand-off from
     * submit() to a worker.
     */
    private static void poolQueueWait(TierConfig config) throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        int clients = 4;
        int perClient = 5_000;
        try (io.nexuscore.tiers.WasmTierPool pool = io.nexuscore.tiers.WasmTierPool.start(config, registry)) {
            TierRequest req = new TierRequest("chat", "what is the capital of France?", 0, TierRequest.Simulation.NONE);
            Thread[] threads = new Thread[clients];
            for (int c = 0; c < clients; c++) {
                threads[c] = new Thread(() -> {
                    for (int i = 0; i < perClient; i++) {
                        pool.submit(req).join();
                    }
                });
                threads[c].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            io.micrometer.core.instrument.distribution.HistogramSnapshot snap =
                    registry.get("nexus.tier.queue.wait").timer().takeSnapshot();
            StringBuilder pct = new StringBuilder();
            for (io.micrometer.core.instrument.distribution.ValueAtPercentile v : snap.percentileValues()) {
                pct.append(String.format(Locale.ROOT, "  p%.0f %8.1f us", v.percentile() * 100,
                        v.value(java.util.concurrent.TimeUnit.MICROSECONDS)));
            }
            System.out.printf("pool %-5s (%s, %d instances) queue wait over %d requests:%s  mean %.1f us%n",
                    config.tier().label(), config.engine().name().toLowerCase(Locale.ROOT), config.instances(), snap.count(),
                    pct, snap.mean(java.util.concurrent.TimeUnit.MICROSECONDS));
        }
    }

    private static Stats measure(Runnable call) {
        for (int i = 0; i < CALL_RUNS; i++) {
            call.run();
        }
        long[] nanos = new long[CALL_RUNS];
        for (int i = 0; i < CALL_RUNS; i++) {
            long s = System.nanoTime();
            call.run();
            nanos[i] = System.nanoTime() - s;
        }
        return Stats.of(nanos);
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = WasmBench.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException(name + " is not on the classpath: build first (mvn -DskipTests package)");
            }
            return in.readAllBytes();
        }
    }
}
