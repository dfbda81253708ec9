package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Sends a list of requests (each meant for a tier) to the router with at most {@code concurrency}
 * in flight, and records per intended tier: latency (HdrHistogram, microseconds), errors by status
 * or exception, the tier the router assigned (X-NX-Assigned-Tier) against the intended one, the
 * guest's observed tier (X-NX-Tier) against the assigned one (a misroute), and the route source.
 * Loopback only: the base URI must name 127.0.0.1, ::1 or localhost.
 */
final class LoadRun implements AutoCloseable {

    /** Results for one intended tier. */
    static final class TierResult {
        final Histogram latencyMicros = new ConcurrentHistogram(3_600_000_000L, 3);
        final LongAdder sent = new LongAdder();
        final LongAdder ok = new LongAdder();
        final LongAdder misclassified = new LongAdder();
        final LongAdder misrouted = new LongAdder();
        final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
        final Map<String, LongAdder> routeSources = new ConcurrentHashMap<>();

        long errorCount() {
            return errors.values().stream().mapToLong(LongAdder::sum).sum();
        }
    }

    private final URI base;
    private final HttpClient client;
    private final ExecutorService executor;
    private final Duration requestTimeout;

    LoadRun(URI base, int concurrency, Duration requestTimeout) {
        String host = base.getHost();
        if (!("127.0.0.1".equals(host) || "localhost".equals(host) || "[::1]".equals(host) || "::1".equals(host))) {
            throw new IllegalArgumentException("load runs are loopback only, got " + base);
        }
        this.base = base;
        this.requestTimeout = requestTimeout;
        this.executor = Executors.newFixedThreadPool(Math.max(2, Math.min(concurrency, 16)), r -> {
            Thread t = new Thread(r, "load-client");
            t.setDaemon(true);
            return t;
        });
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(executor)
                .build();
    }

    /**
     * Sends every request; returns when all have answered or failed, or when {@code deadline} passes
     * (requests not yet sent are then counted as "not sent" errors).
     */
    Map<Tier, TierResult> run(List<Tier> requests, int concurrency, int simulateMs, Duration deadline)
            throws InterruptedException {
        Map<Tier, TierResult> results = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            results.put(tier, new TierResult());
        }
        Map<Tier, String> bodies = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            bodies.put(tier, LoadMix.body(tier, tier == Tier.LARGE ? simulateMs : 0));
        }
        Semaphore inFlight = new Semaphore(concurrency);
        CountDownLatch done = new CountDownLatch(requests.size());
        long end = System.nanoTime() + deadline.toNanos();
        for (Tier tier : requests) {
            TierResult result = results.get(tier);
            long left = end - System.nanoTime();
            if (left <= 0 || !inFlight.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                result.errors.computeIfAbsent("not sent (deadline)", k -> new LongAdder()).increment();
                done.countDown();
                continue;
            }
            result.sent.increment();
            send(tier, bodies.get(tier), result).whenComplete((r, e) -> {
                inFlight.release();
                done.countDown();
            });
        }
        if (!done.await(Math.max(0, end - System.nanoTime()) + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS)) {
            // Counted once, on the nano row: which tier the stragglers belong to is not tracked.
            results.get(Tier.NANO).errors.computeIfAbsent("unanswered at deadline", k -> new LongAdder()).add(done.getCount());
        }
        return results;
    }

    /** One request; completes when it is recorded. */
    java.util.concurrent.CompletableFuture<Void> send(Tier intended, String body, TierResult result) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(LoadMix.PATH))
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        long start = System.nanoTime();
        return client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).handle((response, failure) -> {
            long micros = (System.nanoTime() - start) / 1_000;
            if (failure != null) {
                Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
                result.errors.computeIfAbsent(cause.getClass().getSimpleName(), k -> new LongAdder()).increment();
                return null;
            }
            if (response.statusCode() / 100 != 2) {
                result.errors.computeIfAbsent("HTTP " + response.statusCode(), k -> new LongAdder()).increment();
                return null;
            }
            result.ok.increment();
            result.latencyMicros.recordValue(Math.max(1, micros));
            Optional<String> assigned = response.headers().firstValue("X-NX-Assigned-Tier");
            Optional<String> observed = response.headers().firstValue("X-NX-Tier");
            if (!assigned.map(intended.label()::equalsIgnoreCase).orElse(false)) {
                result.misclassified.increment();
            }
            if (assigned.isPresent() && observed.isPresent() && !assigned.get().equalsIgnoreCase(observed.get())) {
                result.misrouted.increment();
            }
            String source = response.headers().firstValue("X-NX-Route-Source").orElse("?");
            result.routeSources.computeIfAbsent(source, k -> new LongAdder()).increment();
            return null;
        });
    }

    static String header() {
        return String.format(Locale.ROOT, "%-6s %6s %6s %6s %9s %9s %9s %9s %8s %8s  %s",
                "tier", "sent", "ok", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "misclass", "misroute", "route source / errors");
    }

    static String row(String name, TierResult r) {
        Histogram h = r.latencyMicros;
        Map<String, Long> sources = new TreeMap<>();
        r.routeSources.forEach((k, v) -> sources.put(k, v.sum()));
        Map<String, Long> errors = new TreeMap<>();
        r.errors.forEach((k, v) -> errors.put(k, v.sum()));
        return String.format(Locale.ROOT, "%-6s %6d %6d %6d %9.2f %9.2f %9.2f %9.2f %8d %8d  %s%s",
                name, r.sent.sum(), r.ok.sum(), r.errorCount(),
                ms(h, 50), ms(h, 95), ms(h, 99), h.getTotalCount() == 0 ? 0.0 : h.getMaxValue() / 1000.0,
                r.misclassified.sum(), r.misrouted.sum(), sources, errors.isEmpty() ? "" : " " + errors);
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0.0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
