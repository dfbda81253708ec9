package io.nexuscore.bench;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
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
 * <p>{@code --stream-chunks N --chunk-ms M}: a request with {@code "stream": true} is answered as a
 * server-sent event stream of N content chunks, one every M ms (a timer per stream, no thread held),
 * then the finishing chunk (with usage when the client asked for it) and {@code [DONE]}: a model
 * that generates slowly, so many streams stay open at once ({@code bench/scale-streams.sh}). Without
 * these options a streamed request gets the plain JSON answer, as before.
 *
 * <pre>java -cp ... io.nexuscore.bench.MockOpenAi [--delay-ms N] [--stream-chunks N --chunk-ms M] PORT [PORT...]
 * # runs until killed</pre>
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
        return start(ports, delayMs, SlowStream.NONE);
    }

    /**
     * How a streamed answer is paced: {@code chunks} content chunks, one every {@code intervalMs}.
     * {@link #NONE} (0 chunks): streamed requests get the plain JSON answer.
     */
    record SlowStream(int chunks, long intervalMs) {
        static final SlowStream NONE = new SlowStream(0, 0);

        SlowStream {
            if (chunks < 0 || intervalMs < 0 || (chunks > 0 && intervalMs == 0)) {
                throw new IllegalArgumentException("--stream-chunks and --chunk-ms must be 0 or more, and --chunk-ms above 0"
                        + " when chunks are streamed: " + chunks + ", " + intervalMs);
            }
        }

        boolean on() {
            return chunks > 0;
        }
    }

    /** As {@link #start(List, long)}, streamed requests answered as {@code stream} says. */
    static MockOpenAi start(List<Integer> ports, long delayMs, SlowStream stream) {
        if (delayMs < 0) {
            throw new IllegalArgumentException("--delay-ms must be 0 or more: " + delayMs);
        }
        Vertx vertx = Vertx.vertx();
        MockOpenAi mock = new MockOpenAi(vertx);
        for (int i = 0; i < ports.size(); i++) {
            String name = "mock-" + i;
            io.vertx.core.Handler<io.vertx.core.http.HttpServerRequest> handler = req -> req.body().onSuccess(body -> {
                if (!req.path().endsWith("/completions")) {
                    req.response().setStatusCode(404).end();
                    return;
                }
                JsonObject request = parse(body.toString());
                int promptTokens = countWords(prompt(request));
                if (stream.on() && request.getBoolean("stream", false)) {
                    JsonObject options = request.getJsonObject("stream_options");
                    boolean usage = options != null && options.getBoolean("include_usage", false);
                    streamSlowly(vertx, req.response(), name, stream, usage ? promptTokens : -1);
                    return;
                }
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
            });
            HttpServer server = vertx.createHttpServer().requestHandler(handler).listen(ports.get(i), "127.0.0.1").await();
            mock.servers.add(server);
            if (stream.on() && ports.get(i) != 0) {
                // A second server on the same port, on another event loop (Vert.x shares the socket between
                // them): a thousand slow streams' timers and writes then use both cores, not one loop.
                vertx.createHttpServer().requestHandler(handler).listen(ports.get(i), "127.0.0.1").await();
            }
        }
        return mock;
    }

    int port(int index) {
        return servers.get(index).actualPort();
    }

    /**
     * One content chunk every {@code stream.intervalMs()}, then the finishing chunk (usage on it when
     * {@code promptTokens} is 0 or more) and [DONE]. Stops early when the client (the router) goes away.
     */
    private static void streamSlowly(Vertx vertx, HttpServerResponse response, String model, SlowStream stream,
                                     int promptTokens) {
        response.setChunked(true).putHeader("Content-Type", "text/event-stream").putHeader("Cache-Control", "no-cache");
        int[] sent = {0};
        String[] events = eventsOf(model, stream.chunks()); // the same bytes for every stream: no JSON work per chunk
        vertx.setPeriodic(stream.intervalMs(), timer -> {
            if (response.closed() || response.ended()) {
                vertx.cancelTimer(timer);
                return;
            }
            if (sent[0] < stream.chunks()) {
                response.write(events[sent[0]++]);
                return;
            }
            vertx.cancelTimer(timer);
            JsonObject last = chunk(model, new JsonObject(), "stop");
            if (promptTokens >= 0) {
                last.put("usage", new JsonObject().put("prompt_tokens", promptTokens)
                        .put("completion_tokens", stream.chunks()).put("total_tokens", promptTokens + stream.chunks()));
            }
            response.end("data: " + last.encode() + "\n\ndata: [DONE]\n\n");
        });
    }

    private static final java.util.Map<String, String[]> EVENTS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The content events of a stream of {@code chunks} from {@code model}, encoded once. */
    private static String[] eventsOf(String model, int chunks) {
        return EVENTS.computeIfAbsent(model + "/" + chunks, k -> {
            String[] events = new String[chunks];
            for (int i = 0; i < chunks; i++) {
                events[i] = "data: " + chunk(model, new JsonObject().put("content", "tok" + i + " "), null).encode() + "\n\n";
            }
            return events;
        });
    }

    private static JsonObject chunk(String model, JsonObject delta, String finishReason) {
        return new JsonObject()
                .put("id", "chatcmpl-mock")
                .put("object", "chat.completion.chunk")
                .put("created", System.currentTimeMillis() / 1000)
                .put("model", model)
                .put("choices", new JsonArray().add(new JsonObject()
                        .put("index", 0).put("delta", delta).put("finish_reason", finishReason)));
    }

    private static JsonObject parse(String body) {
        try {
            return new JsonObject(body);
        } catch (RuntimeException e) {
            return new JsonObject();
        }
    }

    private static String prompt(JsonObject json) {
        try {
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
        int streamChunks = 0;
        long chunkMs = 0;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--delay-ms") && i + 1 < args.length) {
                delayMs = Long.parseLong(args[++i]);
            } else if (args[i].equals("--stream-chunks") && i + 1 < args.length) {
                streamChunks = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--chunk-ms") && i + 1 < args.length) {
                chunkMs = Long.parseLong(args[++i]);
            } else {
                ports.add(Integer.parseInt(args[i]));
            }
        }
        SlowStream stream = new SlowStream(streamChunks, chunkMs);
        MockOpenAi mock = start(ports, delayMs, stream);
        for (int i = 0; i < ports.size(); i++) {
            System.out.println("mock upstream " + i + " on 127.0.0.1:" + mock.port(i)
                    + (delayMs > 0 ? ", answers after " + delayMs + " ms" : "")
                    + (stream.on() ? ", streams " + streamChunks + " chunks " + chunkMs + " ms apart" : ""));
        }
    }
}
