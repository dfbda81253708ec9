package io.nexuscore.bench;

import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.upstream.UpstreamTierBackend;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Chaos benchmark for upstream pools (kept with the tests: it drives the test suite's
 * {@link LocalOpenAiServer} and an in-process router): a router (user-space mode, in this JVM) whose nano tier has two
 * endpoints (local OpenAI-compatible servers) takes steady load while endpoint B is killed,
 * restarted, made to stall (accepts and never answers), and released. Prints per phase the requests,
 * the ones lost (any non-200: none of these had streamed a byte to the client), P50/P99, and the time
 * from kill to ejection and from restart to re-admission. Loopback only, bounded.
 *
 * Usage: ChaosBench [--phase-ms 4000] [--concurrency 16] [--eject-after 3] [--eject-ms 1000]
 *                   [--first-byte-ms 500]
 */
public final class ChaosBench {

    private ChaosBench() {
    }

    private record Sample(String phase, int status, long nanos) {
    }

    public static void main(String[] argv) throws Exception {
        java.util.Map<String, Integer> a = new java.util.HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value, got '" + argv[i] + "'");
            }
            a.put(argv[i].substring(2), Integer.parseInt(argv[i + 1]));
        }
        int phaseMs = a.getOrDefault("phase-ms", 4_000);
        int concurrency = a.getOrDefault("concurrency", 16);
        Vertx vertx = Vertx.vertx();
        LocalOpenAiServer endpointA = LocalOpenAiServer.start(vertx).await();
        int portB = FreePort.pick();
        AtomicReference<LocalOpenAiServer> endpointB = new AtomicReference<>(LocalOpenAiServer.start(vertx, portB).await());
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();

        Path stateDir = Files.createTempDirectory("nexus-chaos");
        Path state = stateDir.resolve("state.json"); // absent: start from the configured thresholds
        JsonObject tiers = new JsonObject();
        for (Tier tier : Tier.values()) {
            tiers.put(tier.label(), new JsonObject().put("instances", 64).put("queueCapacity", 1024)
                    .put("upstream", new JsonObject().put("baseUrl", others.baseUrl(tier.label()))));
        }
        tiers.getJsonObject("nano").put("upstream", new JsonObject()
                .put("baseUrls", new JsonArray().add(endpointA.baseUrl("a")).add("http://127.0.0.1:" + portB + "/b/v1"))
                .put("timeoutMs", 10_000)
                .put("connectTimeoutMs", 500)
                .put("firstByteTimeoutMs", a.getOrDefault("first-byte-ms", 500))
                .put("maxRetries", 1)
                .put("ejectAfter", a.getOrDefault("eject-after", 3))
                .put("ejectMs", a.getOrDefault("eject-ms", 1_000)));
        JsonObject config = new JsonObject()
                .put("dataPlane", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick()).put("instances", 1))
                .put("control", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick())
                        .put("stateFile", state.toString()))
                .put("kernel", new JsonObject().put("mode", "user"))
                .put("tiers", tiers);

        AtomicLong ejectedAt = new AtomicLong();
        AtomicLong readmittedAt = new AtomicLong();
        EventSink events = (type, data) -> {
            if (UpstreamTierBackend.EVENT.equals(type) && data.getString("endpoint", "").contains(":" + portB)) {
                if ("ejected".equals(data.getString("event"))) {
                    ejectedAt.compareAndSet(0, System.nanoTime());
                } else if ("readmitted".equals(data.getString("event"))) {
                    readmittedAt.compareAndSet(0, System.nanoTime());
                }
            }
        };
        RouterRuntime router = RouterRuntime.start(RouterConfig.fromJson(config), events);
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(concurrency));
        String body = new JsonObject().put("messages", new JsonArray()
                .add(new JsonObject().put("role", "user").put("content", "short question"))).encode();

        AtomicReference<String> phase = new AtomicReference<>("warmup");
        AtomicBoolean running = new AtomicBoolean(true);
        ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
        CountDownLatch stopped = new CountDownLatch(concurrency);
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                .setPort(router.dataPlanePort()).setURI("/v1/chat/completions").putHeader("Content-Type", "application/json");
        for (int i = 0; i < concurrency; i++) {
            loop(client, options, body, phase, running, samples, stopped);
        }

        long[] phaseStart = new long[1];
        List<String> order = List.of("warmup", "steady", "b-killed", "b-restarted", "b-stalled", "b-released");
        Thread.sleep(phaseMs / 2);
        phase.set("steady");
        Thread.sleep(phaseMs);
        phase.set("b-killed");
        long killedAt = System.nanoTime();
        endpointB.get().close().await();
        Thread.sleep(phaseMs);
        phase.set("b-restarted");
        long restartedAt = System.nanoTime();
        endpointB.set(LocalOpenAiServer.start(vertx, portB).await());
        Thread.sleep(phaseMs);
        phase.set("b-stalled");
        endpointB.get().hold();
        Thread.sleep(phaseMs);
        phase.set("b-released");
        endpointB.get().release();
        Thread.sleep(phaseMs);
        running.set(false);
        stopped.await(30, TimeUnit.SECONDS);

        System.out.printf(Locale.ROOT, "chaos: two nano endpoints, concurrency %d, %d ms per phase; B killed, restarted, "
                + "stalled (accepts, never answers), released%n", concurrency, phaseMs);
        System.out.printf(Locale.ROOT, "%-12s %8s %6s %9s %9s%n", "phase", "requests", "lost", "p50_ms", "p99_ms");
        for (String p : order) {
            List<Long> nanos = new ArrayList<>();
            int lost = 0;
            for (Sample s : samples) {
                if (s.phase.equals(p)) {
                    nanos.add(s.nanos);
                    lost += s.status == 200 ? 0 : 1;
                }
            }
            Collections.sort(nanos);
            System.out.printf(Locale.ROOT, "%-12s %8d %6d %9.1f %9.1f%n", p, nanos.size(), lost,
                    percentile(nanos, 0.50), percentile(nanos, 0.99));
        }
        System.out.printf(Locale.ROOT, "time to eject after kill:       %s%n", since(killedAt, ejectedAt.get()));
        System.out.printf(Locale.ROOT, "time to re-admit after restart: %s%n", since(restartedAt, readmittedAt.get()));
        System.out.printf(Locale.ROOT, "retries: %.0f, ejections: %.0f, re-admissions: %.0f%n",
                count(router, "nexus_upstream_retries"), count(router, "nexus_upstream_ejections"),
                count(router, "nexus_upstream_readmissions"));
        router.close();
        vertx.close().await();
        try (var files = Files.walk(stateDir)) { // the state file and the generated control token
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    private static void loop(HttpClient client, RequestOptions options, String body, AtomicReference<String> phase,
                             AtomicBoolean running, ConcurrentLinkedQueue<Sample> samples, CountDownLatch stopped) {
        if (!running.get()) {
            stopped.countDown();
            return;
        }
        String p = phase.get();
        long t0 = System.nanoTime();
        client.request(options)
                .compose(req -> req.send(body).compose(resp -> resp.body().map(b -> resp.statusCode())))
                .onComplete(ar -> {
                    samples.add(new Sample(p, ar.succeeded() ? ar.result() : -1, System.nanoTime() - t0));
                    loop(client, options, body, phase, running, samples, stopped);
                });
    }

    private static double percentile(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1)) / 1e6;
    }

    private static String since(long from, long at) {
        return at == 0 ? "never" : String.format(Locale.ROOT, "%.0f ms", (at - from) / 1e6);
    }

    private static double count(RouterRuntime router, String name) {
        return router.registry().find(name).counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
