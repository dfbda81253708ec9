package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Sends a list of requests (each meant for a tier) to the router with at most {@code concurrency}
 * in flight, and records per intended tier: latency (HdrHistogram, microseconds), errors by status
 * or exception, the tier the router assigned (X-NX-Assigned-Tier) against the intended one, the
 * router's misroute judgement of the guest's observed tier (X-NX-Misroute: strict, banded, gross),
 * and the route source.
 * Loopback only: the base URI must name 127.0.0.1, ::1 or localhost. The client is Vert.x's (keep-alive,
 * one connection per request in flight): the JDK's HttpClient capped at ~1,200 requests/s here.
 */
final class LoadRun implements AutoCloseable {

    /** Results for one intended tier. */
    static final class TierResult {
        final Histogram latencyMicros = new ConcurrentHistogram(3_600_000_000L, 3);
        final LongAdder sent = new LongAdder();
        final LongAdder ok = new LongAdder();
        final LongAdder misclassified = new LongAdder();
        final LongAdder misrouted = new LongAdder();
        final LongAdder bandedMisroutes = new LongAdder();
        final LongAdder grossMisroutes = new LongAdder();
        final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
        final Map<String, LongAdder> routeSources = new ConcurrentHashMap<>();

        long errorCount() {
            return errors.values().stream().mapToLong(LongAdder::sum).sum();
        }
    }

    private final Vertx vertx;
    private final HttpClient client;
    private final Duration requestTimeout;
    /** Requests are issued on these event-loop contexts, in turn: Vert.x 5.0.7's client pool, called
     * from a foreign thread, now and then loses a request (seen here after a few hundred). */
    private final Context[] contexts;
    private final AtomicInteger next = new AtomicInteger();

    LoadRun(URI base, int concurrency, Duration requestTimeout) {
        String host = base.getHost();
        if (!("127.0.0.1".equals(host) || "localhost".equals(host) || "[::1]".equals(host) || "::1".equals(host))) {
            throw new IllegalArgumentException("load runs are loopback only, got " + base);
        }
        this.requestTimeout = requestTimeout;
        this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        this.client = vertx.createHttpClient(
                new HttpClientOptions().setDefaultHost(host).setDefaultPort(base.getPort()).setKeepAlive(true)
                        .setConnectTimeout(5_000),
                new PoolOptions().setHttp1MaxSize(Math.max(1, concurrency)).setMaxWaitQueueSize(-1));
        this.contexts = new Context[] {vertx.getOrCreateContext(), vertx.getOrCreateContext()};
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
    CompletableFuture<Void> send(Tier intended, String body, TierResult result) {
        CompletableFuture<Void> recorded = new CompletableFuture<>();
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setURI(LoadMix.PATH)
                .setIdleTimeout(requestTimeout.toMillis()).putHeader("Content-Type", "application/json");
        long start = System.nanoTime();
        contexts[Math.floorMod(next.getAndIncrement(), contexts.length)].runOnContext(v -> client.request(options)
                .compose(request -> request.send(Buffer.buffer(body)))
                .compose(response -> response.body().map(ignored -> response))
                .onComplete(ar -> {
                    record(intended, result, ar.succeeded() ? ar.result() : null, ar.cause(), (System.nanoTime() - start) / 1_000);
                    recorded.complete(null);
                }));
        return recorded;
    }

    private static void record(Tier intended, TierResult result, HttpClientResponse response, Throwable failure, long micros) {
        if (failure != null) {
            result.errors.computeIfAbsent(failure.getClass().getSimpleName(), k -> new LongAdder()).increment();
            return;
        }
        if (response.statusCode() / 100 != 2) {
            result.errors.computeIfAbsent("HTTP " + response.statusCode(), k -> new LongAdder()).increment();
            return;
        }
        result.ok.increment();
        result.latencyMicros.recordValue(Math.max(1, micros));
        String assigned = response.getHeader("X-NX-Assigned-Tier");
        if (!intended.label().equalsIgnoreCase(assigned)) {
            result.misclassified.increment();
        }
        List<String> misroute = List.of(String.valueOf(response.getHeader("X-NX-Misroute")).split(","));
        if (misroute.contains("strict")) {
            result.misrouted.increment();
        }
        if (misroute.contains("banded")) {
            result.bandedMisroutes.increment();
        }
        if (misroute.contains("gross")) {
            result.grossMisroutes.increment();
        }
        String source = response.getHeader("X-NX-Route-Source");
        result.routeSources.computeIfAbsent(source == null ? "?" : source, k -> new LongAdder()).increment();
    }

    static String header() {
        return String.format(Locale.ROOT, "%-6s %6s %6s %6s %9s %9s %9s %9s %8s %8s %8s %8s  %s",
                "tier", "sent", "ok", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "misclass", "mr_strct", "mr_band",
                "mr_gross", "route source / errors");
    }

    static String row(String name, TierResult r) {
        Histogram h = r.latencyMicros;
        Map<String, Long> sources = new TreeMap<>();
        r.routeSources.forEach((k, v) -> sources.put(k, v.sum()));
        Map<String, Long> errors = new TreeMap<>();
        r.errors.forEach((k, v) -> errors.put(k, v.sum()));
        return String.format(Locale.ROOT, "%-6s %6d %6d %6d %9.2f %9.2f %9.2f %9.2f %8d %8d %8d %8d  %s%s",
                name, r.sent.sum(), r.ok.sum(), r.errorCount(),
                ms(h, 50), ms(h, 95), ms(h, 99), h.getTotalCount() == 0 ? 0.0 : h.getMaxValue() / 1000.0,
                r.misclassified.sum(), r.misrouted.sum(), r.bandedMisroutes.sum(), r.grossMisroutes.sum(),
                sources, errors.isEmpty() ? "" : " " + errors);
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0.0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    @Override
    public void close() {
        vertx.close().await();
    }
}
