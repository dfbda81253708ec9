package io.nexuscore.dataplane;

import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.HandScoredRequests;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.TempDirs;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.internal.http.HttpClientInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/** Router configurations and client helpers shared by the data-plane tests. */
final class RouterFixture {

    static final Scorer SCORER = new Scorer(ScoreWeights.DEFAULT);
    static final Thresholds THRESHOLDS = Thresholds.DEFAULT;
    static final long MAX_BODY = 4096;

    private RouterFixture() {
    }

    /**
     * All three tiers backed by {@code upstream}, user-space mode, two acceptors on a free port; the
     * control plane on another free port with its state file in a temp directory (never the
     * system-wide defaults: tests must not collide with a running router or with each other).
     */
    static JsonObject config(LocalOpenAiServer upstream) {
        JsonObject tiers = new JsonObject();
        for (Tier tier : Tier.values()) {
            tiers.put(tier.label(), new JsonObject()
                    .put("model", "nexus-" + tier.label())
                    .put("instances", 8)
                    .put("queueCapacity", 64)
                    .put("upstream", new JsonObject()
                            .put("baseUrl", upstream.baseUrl(tier.label()))
                            .put("model", "upstream-" + tier.label())
                            .put("timeoutMs", 5_000)));
        }
        return new JsonObject()
                .put("dataPlane", new JsonObject()
                        .put("host", "127.0.0.1")
                        .put("port", FreePort.pick())
                        .put("maxBodyBytes", MAX_BODY)
                        .put("instances", 2))
                .put("control", new JsonObject()
                        .put("host", "127.0.0.1")
                        .put("port", FreePort.pick())
                        .put("stateFile", tempStateFile().toString()))
                .put("kernel", new JsonObject().put("mode", "user"))
                .put("tiers", tiers);
    }

    /**
     * The routers' state directories, removed with everything in them when the test JVM exits: the
     * router writes files of its own beside the state file (control.token, state.keys.json), so
     * deleteOnExit on the two paths made here left every directory behind (300 after a day of runs).
     */
    private static final Set<Path> STATE_DIRS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> STATE_DIRS.forEach(dir -> {
            try {
                TempDirs.deleteRecursively(dir);
            } catch (UncheckedIOException e) {
                System.err.println("RouterFixture: could not remove " + dir + ": " + e.getCause()); // the others still go
            }
        })));
    }

    private static Path tempStateFile() {
        try {
            Path dir = Files.createTempDirectory("nexus-dataplane-test");
            STATE_DIRS.add(dir);
            return dir.resolve("state.json");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }


    static RouterRuntime start(JsonObject config, EventSink events) {
        return RouterRuntime.start(RouterConfig.fromJson(config), events);
    }

    /** A chat body whose content is {@code size} characters of words ("word word wo..."): ~0.2 tokens each. */
    static JsonObject chat(int size) {
        return new JsonObject().put("model", "whatever").put("messages", new JsonArray()
                .add(new JsonObject().put("role", "user").put("content", words(size))));
    }

    /** {@code size} characters of "word word ...". */
    static String words(int size) {
        return "word ".repeat(size / 5 + 1).substring(0, size);
    }

    /**
     * The score and tier of {@link #chat}({@code size}) on /v1/chat/completions, worked out by hand
     * (testing/HandScoredRequests), never by the scorer under test.
     */
    static HandScoredRequests.Request handScoredChat(int size) {
        HandScoredRequests.Request row = HandScoredRequests.chatOfWords(size);
        if (!row.body().equals(chat(size).encode())) {
            throw new IllegalStateException("chat(" + size + ") is not the body the hand-worked row is for: " + row.body());
        }
        return row;
    }

    record Reply(int status, MultiMap headers, Buffer body) {
        JsonObject json() {
            return body.toJsonObject();
        }

        String header(String name) {
            return headers.get(name);
        }
    }

    static Future<Reply> send(HttpClient client, int port, HttpMethod method, String path, Buffer body) {
        return exchange(client, new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(port).setURI(path),
                body);
    }

    /**
     * One request and its whole answer, issued on a Vert.x context even when called from a test's own
     * thread: Vert.x 5.0.7's client, driven from a thread that is not Vert.x's, now and then never
     * completes an answer it has read off the socket (a 30 s test timeout in CI; reproduced about once
     * in 200–1,400 pairs of concurrent pooled requests, never on a context, nor with the JDK's client
     * or a raw socket against the same router, which had answered 200 and published the event).
     */
    static Future<Reply> exchange(HttpClient client, RequestOptions options, Buffer body) {
        return onContext(client, () -> client.request(options)
                .compose(request -> (body == null ? request.send() : request.send(body))
                        .compose(response -> response.body()
                                .map(b -> new Reply(response.statusCode(), response.headers(), b)))));
    }

    /**
     * Runs {@code work} (requests on {@code client}) on a Vert.x context: at once when the caller is
     * on one, else on a context of the client's Vert.x. Every test that drives a client itself, not
     * through {@link #exchange}, starts there (see {@link #exchange} for why).
     */
    static <T> Future<T> onContext(HttpClient client, Supplier<Future<T>> work) {
        if (Vertx.currentContext() != null) {
            return work.get();
        }
        Context context = ((HttpClientInternal) client).vertx().getOrCreateContext();
        Promise<T> result = Promise.promise();
        context.runOnContext(v -> work.get().onComplete(result));
        return result.future();
    }

    static Future<Reply> post(HttpClient client, int port, String path, JsonObject body) {
        return send(client, port, HttpMethod.POST, path, body.toBuffer());
    }
}
