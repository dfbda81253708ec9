package io.nexuscore.bench;

import io.nexuscore.classify.Tier;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * The peer comparison behind bench/peer-bench.sh: one request mix (nano:small:large = 25:5:1, OpenAI
 * chat completions) sent directly to three local mock upstreams (one per tier), through NexusCore
 * (tiers backed by those upstreams, the tier chosen by the request's score) and through Portkey's
 * gateway (conditional routing on request metadata over the same three targets). Per target and
 * concurrency: requests/s, P50/P99, and the P50/P99 added over the direct calls; plus how many
 * answers came from the intended upstream. Loopback only, bounded by --requests.
 *
 * <pre>
 * java -cp ... io.nexuscore.bench.PeerBench --upstreams http://127.0.0.1:19001,http://...:19002,http://...:19003
 *     --nexuscore http://127.0.0.1:18080 --portkey http://127.0.0.1:18787 [--requests 3000] [--concurrency 1,32]
 * </pre>
 */
public final class PeerBench {

    private PeerBench() {
    }

    private record Result(String target, int concurrency, int requests, double seconds, Histogram micros,
                          long errors, long wrongUpstream) {
    }

    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        String[] upstreams = a.value("upstreams", "").split(",");
        if (upstreams.length != 3) {
            throw new IllegalArgumentException("--upstreams needs three base URLs (nano,small,large)");
        }
        URI nexus = loopback(a.value("nexuscore", "http://127.0.0.1:8080"));
        URI portkey = loopback(a.value("portkey", "http://127.0.0.1:8787"));
        int requests = a.intValue("requests", 3000);
        List<Integer> levels = new ArrayList<>();
        for (String c : a.value("concurrency", "1,32").split(",")) {
            levels.add(Integer.parseInt(c.strip()));
        }
        Map<Tier, URI> direct = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            direct.put(tier, loopback(upstreams[tier.ordinal()].strip()));
        }
        String portkeyConfig = portkeyConfig(upstreams);

        List<Tier> mix = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            int slot = i % 31;
            mix.add(slot < 25 ? Tier.NANO : slot < 30 ? Tier.SMALL : Tier.LARGE);
        }
        Collections.shuffle(mix, new Random(7));

        int maxConcurrency = levels.stream().mapToInt(Integer::intValue).max().orElse(1);
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setConnectTimeout(5_000),
                new PoolOptions().setHttp1MaxSize(maxConcurrency).setMaxWaitQueueSize(-1));
        // Requests are issued on an event-loop context: Vert.x 5.0.7's client pool, called from a
        // foreign thread, now and then loses a request.
        Context context = vertx.getOrCreateContext();
        List<Result> results = new ArrayList<>();
        try {
            for (int concurrency : levels) {
                for (String target : List.of("direct", "nexuscore", "portkey")) {
                    Target t = switch (target) {
                        case "direct" -> tier -> options(direct.get(tier));
                        case "nexuscore" -> tier -> options(nexus);
                        default -> tier -> options(portkey)
                                .putHeader("x-portkey-config", portkeyConfig)
                                .putHeader("x-portkey-metadata", "{\"tier\":\"" + tier.label() + "\"}");
                    };
                    run(client, context, t, target, mix.subList(0, Math.min(300, mix.size())), concurrency);   // warm-up
                    results.add(run(client, context, t, target, mix, concurrency));
                }
            }
        } finally {
            vertx.close().await();
        }

        System.out.printf(Locale.ROOT, "peer benchmark: %d requests per run (nano:small:large = 25:5:1), chat completions, loopback mock upstreams%n", requests);
        System.out.printf(Locale.ROOT, "%-10s %4s %9s %9s %9s %11s %11s %7s %9s%n",
                "target", "c", "req/s", "p50_ms", "p99_ms", "+p50_ms", "+p99_ms", "errors", "wrong_up");
        for (Result r : results) {
            Result base = results.stream().filter(d -> d.target().equals("direct") && d.concurrency() == r.concurrency())
                    .findFirst().orElseThrow();
            System.out.printf(Locale.ROOT, "%-10s %4d %9.0f %9.3f %9.3f %11.3f %11.3f %7d %9d%n",
                    r.target(), r.concurrency(), r.requests() / r.seconds(), LoadRun.ms(r.micros(), 50), LoadRun.ms(r.micros(), 99),
                    LoadRun.ms(r.micros(), 50) - LoadRun.ms(base.micros(), 50),
                    LoadRun.ms(r.micros(), 99) - LoadRun.ms(base.micros(), 99), r.errors(), r.wrongUpstream());
        }
    }

    private interface Target {
        RequestOptions request(Tier tier);
    }

    private static RequestOptions options(URI base) {
        return new RequestOptions().setMethod(HttpMethod.POST)
                .setAbsoluteURI(base.resolve("/v1/chat/completions").toString())
                .setIdleTimeout(30_000)
                .putHeader("Content-Type", "application/json")
                .putHeader("Authorization", "Bearer sk-local");
    }

    private static Result run(HttpClient client, Context context, Target target, String name, List<Tier> mix, int concurrency)
            throws InterruptedException {
        Histogram micros = new org.HdrHistogram.ConcurrentHistogram(60_000_000L, 3);
        LongAdder errors = new LongAdder();
        LongAdder wrong = new LongAdder();
        Semaphore inFlight = new Semaphore(concurrency);
        long start = System.nanoTime();
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (Tier tier : mix) {
            inFlight.acquire();
            RequestOptions options = target.request(tier);
            String body = chatBody(tier);
            CompletableFuture<Void> done = new CompletableFuture<>();
            all.add(done);
            long t0 = System.nanoTime();
            context.runOnContext(v -> client.request(options)
                    .compose(request -> request.send(Buffer.buffer(body)))
                    .compose(response -> response.body().map(b -> new Answer(response.statusCode(), response.headers(), b.toString())))
                    .onComplete(ar -> {
                        long us = (System.nanoTime() - t0) / 1_000;
                        inFlight.release();
                        if (ar.failed() || ar.result().status() != 200) {
                            errors.increment();
                        } else {
                            micros.recordValue(Math.max(1, us));
                            if (!fromIntendedUpstream(tier, ar.result())) {
                                wrong.increment();
                            }
                        }
                        done.complete(null);
                    }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
        return new Result(name, concurrency, mix.size(), (System.nanoTime() - start) / 1e9, micros, errors.sum(), wrong.sum());
    }

    private record Answer(int status, MultiMap headers, String body) {
    }

    /** The mocks name themselves mock-0/1/2 in `model`; NexusCore reports its tier model and header instead. */
    private static boolean fromIntendedUpstream(Tier tier, Answer answer) {
        String assigned = answer.headers().get("X-NX-Assigned-Tier");
        if (assigned != null) {
            return assigned.equalsIgnoreCase(tier.label());
        }
        return answer.body().contains("\"model\":\"mock-" + tier.ordinal() + "\"");
    }

    static String chatBody(Tier tier) {
        String prompt = LoadMix.body(tier, 0);
        prompt = prompt.substring("{\"prompt\":\"".length(), prompt.length() - 2);
        return "{\"model\":\"auto\",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}]}";
    }

    /** Conditional routing on x-portkey-metadata.tier over the three upstreams. */
    static String portkeyConfig(String[] upstreams) {
        StringBuilder targets = new StringBuilder();
        for (Tier tier : Tier.values()) {
            if (targets.length() > 0) {
                targets.append(',');
            }
            targets.append("{\"name\":\"").append(tier.label()).append("\",\"provider\":\"openai\",\"api_key\":\"sk-local\",")
                    .append("\"custom_host\":\"").append(upstreams[tier.ordinal()].strip()).append("/v1\"}");
        }
        return "{\"strategy\":{\"mode\":\"conditional\",\"conditions\":["
                + "{\"query\":{\"metadata.tier\":{\"$eq\":\"nano\"}},\"then\":\"nano\"},"
                + "{\"query\":{\"metadata.tier\":{\"$eq\":\"small\"}},\"then\":\"small\"}],\"default\":\"large\"},"
                + "\"targets\":[" + targets + "]}";
    }

    private static URI loopback(String url) {
        URI uri = URI.create(url);
        if (!List.of("127.0.0.1", "localhost").contains(uri.getHost())) {
            throw new IllegalArgumentException("loopback only, got " + url);
        }
        return uri;
    }
}
