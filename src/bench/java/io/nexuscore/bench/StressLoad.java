package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * The stress run behind ./stress.sh: nano, small and large requests shuffled together and sent
 * concurrently to the router; prints per intended tier the count, errors, P50/P95/P99/max latency,
 * misclassifications (assigned tier differs from the tier the body was made for) and misroutes as
 * the router judged them (X-NX-Misroute): strict (the guest's observed tier differs from the
 * assigned one), banded (its true score lies more than the band outside the assigned tier's range)
 * and gross (nano and large swapped), then the totals.
 *
 * <pre>
 * java -cp ... io.nexuscore.bench.StressLoad [--url http://127.0.0.1:8080] [--nano 2500] [--small 500]
 *     [--large 100] [--concurrency 64] [--deadline-s 300] [--simulate-ms 0]
 * </pre>
 * Exit code: 0 when every request was answered 2xx, 1 otherwise (the table says which failed).
 */
public final class StressLoad {

    private StressLoad() {
    }

    private static double rate(long count, long of) {
        return of == 0 ? 0.0 : (double) count / of;
    }

    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        List<Tier> requests = new ArrayList<>();
        requests.addAll(Collections.nCopies(a.intValue("nano", 2500), Tier.NANO));
        requests.addAll(Collections.nCopies(a.intValue("small", 500), Tier.SMALL));
        requests.addAll(Collections.nCopies(a.intValue("large", 100), Tier.LARGE));
        Collections.shuffle(requests, new Random(42));
        int concurrency = a.intValue("concurrency", 64);
        int simulateMs = a.intValue("simulate-ms", 0);
        URI url = URI.create(a.value("url", "http://127.0.0.1:8080"));
        Duration deadline = Duration.ofSeconds(a.intValue("deadline-s", 300));

        try (LoadRun load = new LoadRun(url, concurrency, Duration.ofSeconds(60))) {
            // Warm-up (JIT on both sides, connections): a few of each, not recorded.
            load.run(List.of(Tier.NANO, Tier.SMALL, Tier.LARGE, Tier.NANO, Tier.SMALL, Tier.LARGE), 3, 0,
                    Duration.ofSeconds(60));
            long start = System.nanoTime();
            Map<Tier, LoadRun.TierResult> results = load.run(requests, concurrency, simulateMs, deadline);
            double seconds = (System.nanoTime() - start) / 1e9;

            System.out.printf(Locale.ROOT, "stress: %d requests (nano %d, small %d, large %d) to %s, concurrency %d, %.2f s, %.0f req/s%n",
                    requests.size(), a.intValue("nano", 2500), a.intValue("small", 500), a.intValue("large", 100),
                    url, concurrency, seconds, requests.size() / seconds);
            System.out.println(LoadRun.header());
            long errors = 0;
            long ok = 0;
            long misclassified = 0;
            long misrouted = 0;
            long banded = 0;
            long gross = 0;
            for (Tier tier : Tier.values()) {
                LoadRun.TierResult r = results.get(tier);
                System.out.println(LoadRun.row(tier.label(), r));
                errors += r.errorCount();
                ok += r.ok.sum();
                misclassified += r.misclassified.sum();
                misrouted += r.misrouted.sum();
                banded += r.bandedMisroutes.sum();
                gross += r.grossMisroutes.sum();
            }
            System.out.printf(Locale.ROOT, "total: ok %d, errors %d, misclassification rate %.4f, misroute rate %.4f"
                            + " (strict), banded misroute rate %.4f, gross misroute rate %.4f%n",
                    ok, errors, rate(misclassified, ok), rate(misrouted, ok), rate(banded, ok), rate(gross, ok));
            System.exit(errors == 0 ? 0 : 1);
        }
    }
}
