package io.nexuscore.bench;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * A local OpenAI-compatible upstream for benchmarks: POST .../chat/completions and .../completions
 * answer with a fixed short completion and honest usage (prompt tokens = whitespace-separated
 * words of the prompt, completion tokens = 4), so a router that derives an observed tier from usage
 * sees the request's own size. Loopback only.
 *
 * <p>{@code --delay-ms N} holds every answer N ms (a timer, no thread blocked) once the request's body
 * is in: a model server that really is that slow, so the router measures real latency (the adaptive
 * loop's demo, {@code bench/adaptive-demo.sh}). Without it, answers go at once.
 *
 * <pre>java -cp ... io.nexuscore.bench.MockOpenAi [--delay-ms N] PORT [PORT...]   # runs until killed</pre>
 */
public final class MockOpenAi implements AutoCloseable {

    private final Vertx vertx;
    private final List<HttpServer> servers = new ArrayList<>();

    private MockOpenAi(Vertx vertx) {
        this.vertx = vertx;
    }

    /** One server per port (0 picks a free one), each naming itself in `model` as mock-&lt;index&gt;. */
    static MockOpenAi start(List<Integer> ports) {
        return start(ports, 0);
    }

    /** As {@link #start(List)}, every answer sent {@code delayMs} after its request's body arrived. */
    static MockOpenAi start(List<Integer> ports, long delayMs) {
        if (delayMs < 0) {
            throw new IllegalArgumentException("--delay-ms must be 0 or more: " + delayMs);
        }
        Vertx vertx = Vertx.vertx();
        MockOpenAi mock = new MockOpenAi(vertx);
        for (int i = 0; i < ports.size(); i++) {
            String name = "mock-" + i;
            HttpServer server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
                if (!req.path().endsWith("/completions")) {
                    req.response().setStatusCode(404).end();
                    return;
                }
                int promptTokens = countWords(prompt(body.toString()));
                JsonObject answer = new JsonObject()
                        .put("id", "cmpl-mock")
                        .put("object", "chat.completion")
                        .put("created", System.currentTimeMillis() / 1000)
                        .put("model", name)
                        .put("choices", new JsonArray().add(new JsonObject()
                                .put("index", 0)
                                .put("message", new JsonObject().put("role", "assistant").put("content", "mock answer ok"))
                                .put("finish_reason", "stop")))
                        .put("usage", new JsonObject()
                                .put("prompt_tokens", promptTokens)
                                .put("completion_tokens", 4)
                                .put("total_tokens", promptTokens + 4));
                if (delayMs == 0) {
                    req.response().putHeader("Content-Type", "application/json").end(answer.encode());
                    return;
                }
                vertx.setTimer(delayMs, t -> {
                    if (!req.response().closed()) {
                        req.response().putHeader("Content-Type", "application/json").end(answer.encode());
                    }
                });
            }));
            mock.servers.add(server.listen(ports.get(i), "127.0.0.1").await());
        }
        return mock;
    }

    int port(int index) {
        return servers.get(index).actualPort();
    }

    private static String prompt(String body) {
        try {
            JsonObject json = new JsonObject(body);
            if (json.containsKey("messages")) {
                StringBuilder sb = new StringBuilder();
                for (Object m : json.getJsonArray("messages")) {
                    sb.append(((JsonObject) m).getString("content", "")).append(' ');
                }
                return sb.toString();
            }
            return json.getString("prompt", "");
        } catch (RuntimeException e) {
            return "";
        }
    }

    private static int countWords(String s) {
        String t = s.strip();
        return t.isEmpty() ? 0 : t.split("\\s+").length;
    }

    @Override
    public void close() {
        vertx.close().await();
    }

    public static void main(String[] args) {
        List<Integer> ports = new ArrayList<>();
        long delayMs = 0;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--delay-ms") && i + 1 < args.length) {
                delayMs = Long.parseLong(args[++i]);
            } else {
                ports.add(Integer.parseInt(args[i]));
            }
        }
        MockOpenAi mock = start(ports, delayMs);
        for (int i = 0; i < ports.size(); i++) {
            System.out.println("mock upstream " + i + " on 127.0.0.1:" + mock.port(i)
                    + (delayMs > 0 ? ", answers after " + delayMs + " ms" : ""));
        }
    }
}
