package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;

/**
 * Tier isolation, measured in one run against a running router: nano latency alone, then nano
 * latency while large requests (each busy for simulate_ms inside its guest) keep the large tier's
 * workers saturated and its queue non-empty. Prints P50/P99 for both and the ratio; the design's
 * target is nano P99 under the mix at most 1.5x nano P99 alone. Loopback only, bounded.
 *
 * <pre>
 * java -cp ... io.nexuscore.bench.IsolationBench [--url http://127.0.0.1:8080] [--nano 3000]
 *     [--concurrency 8] [--large-concurrency 8] [--simulate-ms 200]
 * </pre>
 */
public final class IsolationBench {

    private IsolationBench() {
    }

    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        URI url = URI.create(a.value("url", "http://127.0.0.1:8080"));
        int nano = a.intValue("nano", 3000);
        int concurrency = a.intValue("concurrency", 8);
        int largeConcurrency = a.intValue("large-concurrency", 8);
        int simulateMs = a.intValue("simulate-ms", 200);
        Duration deadline = Duration.ofSeconds(a.intValue("deadline-s", 300));

        try (LoadRun nanoLoad = new LoadRun(url, concurrency, Duration.ofSeconds(30));
             LoadRun largeLoad = new LoadRun(url, largeConcurrency, Duration.ofSeconds(120))) {
            // Warm-up: JIT on both sides, connections, every guest instance touched once.
            nanoLoad.run(Collections.nCopies(Math.min(nano, 1000), Tier.NANO), concurrency, 0, deadline);
            largeLoad.run(Collections.nCopies(largeConcurrency, Tier.LARGE), largeConcurrency, 0, deadline);

            LoadRun.TierResult alone = nanoLoad.run(Collections.nCopies(nano, Tier.NANO), concurrency, 0, deadline).get(Tier.NANO);

            // Background: keep largeConcurrency large requests in flight until the nano run is done.
            LoadRun.TierResult large = new LoadRun.TierResult();
            AtomicBoolean running = new AtomicBoolean(true);
            Semaphore inFlight = new Semaphore(largeConcurrency);
            String largeBody = LoadMix.body(Tier.LARGE, simulateMs);
            Thread pump = new Thread(() -> {
                while (running.get()) {
                    try {
                        inFlight.acquire();
                    } catch (InterruptedException e) {
                        return;
                    }
                    large.sent.increment();
                    largeLoad.send(Tier.LARGE, largeBody, large).whenComplete((r, e) -> inFlight.release());
                }
            }, "large-pump");
            pump.start();
            Thread.sleep(Math.max(1_000, 3L * simulateMs));   // the large workers are busy and requests queue
            long largeBefore = large.ok.sum();
            LoadRun.TierResult mixed = nanoLoad.run(Collections.nCopies(nano, Tier.NANO), concurrency, 0, deadline).get(Tier.NANO);
            long largeDuring = large.ok.sum() - largeBefore;
            running.set(false);
            pump.interrupt();
            pump.join();
            inFlight.acquire(largeConcurrency);   // let the last large requests finish before closing

            Histogram a1 = alone.latencyMicros;
            Histogram m1 = mixed.latencyMicros;
            System.out.printf(Locale.ROOT, "isolation: %s, %d nano requests per phase at concurrency %d; large: %d in flight, simulate_ms %d%n",
                    url, nano, concurrency, largeConcurrency, simulateMs);
            System.out.println(LoadRun.header());
            System.out.println(LoadRun.row("alone", alone));
            System.out.println(LoadRun.row("mixed", mixed));
            System.out.println(LoadRun.row("large", large));
            System.out.printf(Locale.ROOT, "large requests completed during the mixed nano phase: %d%n", largeDuring);
            double p50Ratio = LoadRun.ms(m1, 50) / LoadRun.ms(a1, 50);
            double p99Ratio = LoadRun.ms(m1, 99) / LoadRun.ms(a1, 99);
            System.out.printf(Locale.ROOT, "nano P50 alone %.3f ms, mixed %.3f ms (x%.2f); nano P99 alone %.3f ms, mixed %.3f ms (x%.2f); target P99 ratio <= 1.5: %s%n",
                    LoadRun.ms(a1, 50), LoadRun.ms(m1, 50), p50Ratio, LoadRun.ms(a1, 99), LoadRun.ms(m1, 99), p99Ratio,
                    p99Ratio <= 1.5 ? "met" : "NOT met");
            System.exit(alone.errorCount() == 0 && mixed.errorCount() == 0 ? 0 : 1);
        }
    }
}
