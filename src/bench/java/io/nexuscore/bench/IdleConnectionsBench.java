package io.nexuscore.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * Many idle keep-alive connections against a router: what each one costs it in memory, and whether
 * a normal request still goes through at its usual latency while they are held.
 *
 * <ol>
 *   <li>baseline: a full GC in the router, its RSS (and NMT categories with {@code --nmt true});
 *       then a normal request back to back on one connection for {@code --probe-seconds}, latency
 *       recorded (P50, P99, max);</li>
 *   <li>opens {@code --connections} keep-alive connections, each sending one nano request and
 *       reading its answer (so each is a served connection, as a client pool leaves it), and holds
 *       them idle;</li>
 *   <li>the router's RSS with them, raw and after a full GC (the raw figure moves with where
 *       the young generation happens to be), and the NMT difference;</li>
 *   <li>the same probe as in 1, with the connections held;</li>
 *   <li>a second request on every held connection: one that fails means the router dropped an
 *       idle connection it should have kept.</li>
 * </ol>
 * Prints one line per phase and a final {@code idle-connections} line with the figures. A probe
 * request slower than {@code --stall-ms} (default 1000) counts as stalled.
 *
 * <pre>IdleConnectionsBench --port P --pid ROUTER_PID [--connections 10000] [--probe-seconds 10]
 *     [--threads 16] [--nmt false] [--histogram false] [--stall-ms 1000]</pre>
 * {@code --histogram true} adds the live heap each held connection costs, by class (two
 * {@code GC.class_histogram}s), the way to find which per-connection objects hold the memory, and
 * {@code memory_per_conn_kb}: the RSS growth after a full GC plus the live heap growth, per
 * connection. That sum is the connection's cost when the router runs on a fixed, pre-touched heap
 * ({@code -Xms = -Xmx, -XX:+AlwaysPreTouch}: the heap's pages are resident from the start, so the
 * RSS growth is the native part alone); on a growing heap the RSS growth already holds the heap part
 * (and whatever young generation G1 chose to touch), so read {@code rss_per_conn_*} there.
 */
public final class IdleConnectionsBench {

    private static final String PATH = "/v1/chat/completions";

    public static void main(String[] argv) throws Exception {
        Args args = Args.parse(argv);
        int port = args.intValue("port", 0);
        long pid = Long.parseLong(args.value("pid", "0"));
        int connections = args.intValue("connections", 10_000);
        int probeSeconds = args.intValue("probe-seconds", 10);
        int threads = args.intValue("threads", 16);
        boolean nmt = Boolean.parseBoolean(args.value("nmt", "false"));
        boolean histogram = Boolean.parseBoolean(args.value("histogram", "false"));
        long stallMs = args.intValue("stall-ms", 1000);
        if (port == 0 || pid == 0) {
            throw new IllegalArgumentException("--port and --pid are required");
        }
        ProcessMemory router = new ProcessMemory(pid);
        byte[] request = RawHttpConnection.post(PATH, BenchBodies.NANO_REQUEST.getBytes());

        router.collect();
        Thread.sleep(1000);
        long rssBefore = router.rssKb();
        Map<String, Long> nmtBefore = nmt ? router.nativeMemory() : Map.of();
        Map<String, Long> classesBefore = histogram ? router.liveClasses() : Map.of();
        Probe alone = probe(port, request, probeSeconds, stallMs);
        System.out.printf("baseline: router rss=%d KB threads=%d; probe alone: %s%n", rssBefore, router.threads(), alone);

        long openStart = System.nanoTime();
        List<RawHttpConnection> held = new ArrayList<>(connections);
        AtomicInteger openFailures = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<RawHttpConnection>> opening = new ArrayList<>(connections);
            for (int i = 0; i < connections; i++) {
                opening.add(pool.submit(() -> {
                    RawHttpConnection c = RawHttpConnection.open(port);
                    try {
                        if (c.exchange(request) != 200) {
                            throw new IOException("first request not answered 200");
                        }
                        return c;
                    } catch (IOException e) {
                        c.close();
                        throw e;
                    }
                }));
            }
            for (Future<RawHttpConnection> f : opening) {
                try {
                    held.add(f.get());
                } catch (java.util.concurrent.ExecutionException e) {
                    if (openFailures.incrementAndGet() <= 3) {
                        System.out.println("open failed: " + e.getCause());
                    }
                }
            }
            double openSeconds = (System.nanoTime() - openStart) / 1e9;
            Thread.sleep(2000);
            long rssHeld = router.rssKb();
            router.collect();
            Thread.sleep(1000);
            long rssHeldCollected = router.rssKb();
            Map<String, Long> nmtHeld = nmt ? router.nativeMemory() : Map.of();
            System.out.printf("held %d connections (%d failed to open) in %.1f s: router rss=%d KB raw, %d KB after a full GC,"
                            + " threads=%d%n", held.size(), openFailures.get(), openSeconds, rssHeld, rssHeldCollected,
                    router.threads());
            if (nmt) {
                System.out.println("nmt committed, held minus baseline: " + ProcessMemory.difference(nmtBefore, nmtHeld));
            }
            long liveHeapGrowth = -1;
            if (histogram) {
                Map<String, Long> classesHeld = router.liveClasses();
                liveHeapGrowth = classesHeld.getOrDefault("Total", 0L) - classesBefore.getOrDefault("Total", 0L);
                System.out.println("live heap per held connection, by class (largest growth first):"
                        + ProcessMemory.growth(classesBefore, classesHeld, 25, Math.max(1, held.size())));
            }

            Probe during = probe(port, request, probeSeconds, stallMs);
            System.out.println("probe with them held: " + during);

            AtomicInteger dropped = new AtomicInteger();
            List<Future<?>> again = new ArrayList<>(held.size());
            for (RawHttpConnection c : held) {
                again.add(pool.submit(() -> {
                    try {
                        if (c.exchange(request) != 200) {
                            dropped.incrementAndGet();
                        }
                    } catch (IOException e) {
                        dropped.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : again) {
                f.get();
            }
            long rssAfter = router.rssKb();
            int n = Math.max(1, held.size());
            System.out.printf("idle-connections connections=%d open_failures=%d dropped=%d rss_per_conn_kb=%.1f"
                            + " rss_per_conn_after_gc_kb=%.1f live_heap_per_conn_kb=%s memory_per_conn_kb=%s probe_alone_p50_us=%d probe_alone_p99_us=%d"
                            + " probe_held_p50_us=%d probe_held_p99_us=%d probe_held_max_us=%d probe_failed=%d probe_stalled=%d"
                            + " rss_after_second_request_kb=%d%n",
                    held.size(), openFailures.get(), dropped.get(), (rssHeld - rssBefore) / (double) n,
                    (rssHeldCollected - rssBefore) / (double) n,
                    liveHeapGrowth < 0 ? "-" : String.format("%.1f", liveHeapGrowth / 1024.0 / n),
                    liveHeapGrowth < 0 ? "-" : String.format("%.1f", ((rssHeldCollected - rssBefore) + liveHeapGrowth / 1024.0) / n),
                    alone.p50(), alone.p99(),
                    during.p50(), during.p99(), during.max(), during.failed(), during.stalled(), rssAfter);
        } finally {
            pool.shutdownNow();
            for (RawHttpConnection c : held) {
                try {
                    c.close();
                } catch (IOException ignored) {
                    // closing on the way out: nothing left to report
                }
            }
        }
    }

    /** Normal requests back to back on one keep-alive connection for {@code seconds}. */
    record Probe(long count, long p50, long p99, long max, int failed, int stalled) {
        @Override
        public String toString() {
            return String.format("requests=%d p50_us=%d p99_us=%d max_us=%d failed=%d stalled=%d",
                    count, p50, p99, max, failed, stalled);
        }
    }

    static Probe probe(int port, byte[] request, int seconds, long stallMs) throws IOException {
        Histogram histogram = new Histogram(3);
        int failed = 0;
        int stalled = 0;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        RawHttpConnection c = RawHttpConnection.open(port);
        try {
            while (System.nanoTime() < end) {
                long start = System.nanoTime();
                try {
                    if (c.exchange(request) != 200) {
                        failed++;
                    }
                } catch (IOException e) {
                    failed++;
                    c.close();
                    c = RawHttpConnection.open(port);
                    continue;
                }
                long micros = (System.nanoTime() - start) / 1_000;
                histogram.recordValue(micros);
                if (micros > stallMs * 1_000) {
                    stalled++;
                }
            }
        } finally {
            c.close();
        }
        return new Probe(histogram.getTotalCount(), histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(99),
                histogram.getMaxValue(), failed, stalled);
    }
}
