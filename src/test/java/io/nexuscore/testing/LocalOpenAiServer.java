package io.nexuscore.testing;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small OpenAI-compatible server on loopback, a real peer for upstream-backed tiers.
 *
 * Answers {@code POST /{name}/v1/chat/completions}: the first path segment names the caller (so one
 * server can back several tiers and tests see which one was called). The reply text is
 * {@code "served by {name}"}; usage counts prompt tokens as content bytes / 4 and one completion
 * token. {@code stream: true} gets three SSE chunks (the last with finish_reason "length", or "stop" when
 * max_tokens is over 3), a usage chunk when
 * {@code stream_options.include_usage} asks for it, and {@code [DONE]}.
 * {@code POST /{name}/v1/responses} and {@code /{name}/v1/messages} answer as servers that speak the
 * Responses and Messages APIs do ("natively served by {name}"), plain or streamed.
 * {@code POST /{name}/v1/embeddings} answers embeddings computed from the inputs' lengths (see {@link #embeddings}).
 * {@link #hold()} parks requests until {@link #release()}, for deadline and queue tests;
 * {@link #delayAnswers(long)} makes it a slow model server (a timer per answer, no thread blocked).
 */
public final class LocalOpenAiServer {

    private final Vertx vertx;
    private final HttpServer server;
    private volatile long delayMs;
    private final AtomicInteger received = new AtomicInteger();
    private final ConcurrentLinkedQueue<JsonObject> bodies = new ConcurrentLinkedQueue<>();
    private final List<Runnable> parked = new ArrayList<>();
    private boolean holding;
    private volatile int failStatus;
    private volatile String failBody;
    private volatile String failRetryAfter;
    private volatile boolean stallMidBody;
    private final AtomicInteger abandoned = new AtomicInteger();
    private final ConcurrentLinkedQueue<Integer> clientPorts = new ConcurrentLinkedQueue<>();

    private LocalOpenAiServer(Vertx vertx, HttpServer server) {
        this.vertx = vertx;
        this.server = server;
    }

    public static Future<LocalOpenAiServer> start(Vertx vertx) {
        return start(vertx, 0);
    }

    /** On a given port (0: any), e.g. to bring back an endpoint the router saw die. */
    public static Future<LocalOpenAiServer> start(Vertx vertx, int port) {
        HttpServer server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port));
        LocalOpenAiServer local = new LocalOpenAiServer(vertx, server);
        server.requestHandler(local::handle);
        return server.listen().map(s -> local);
    }

    public int port() {
        return server.actualPort();
    }

    /** Base URL a tier named {@code name} should use. */
    public String baseUrl(String name) {
        return "http://127.0.0.1:" + port() + "/" + name + "/v1";
    }

    public int received() {
        return received.get();
    }

    public List<JsonObject> bodies() {
        return List.copyOf(bodies);
    }

    /** The client-side port of every request's connection, in arrival order (which connection carried it). */
    public List<Integer> clientPorts() {
        return List.copyOf(clientPorts);
    }

    /** From now on answer each request {@code millis} after its body arrived (0: at once), as a slow model server would. */
    public void delayAnswers(long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("delay must be 0 or more: " + millis);
        }
        delayMs = millis;
    }

    /** From now on, park requests instead of answering them. */
    public synchronized void hold() {
        holding = true;
    }

    /** From now on answer every request with this status and an error body naming the server's secrets (0: stop). */
    public void failWith(int status) {
        failWith(status, null, null);
    }

    /**
     * From now on answer every request with this status, this body (null: one naming the server's
     * secrets) and, unless null, this Retry-After (status 0: stop).
     */
    public void failWith(int status, String body, String retryAfter) {
        failBody = body;
        failRetryAfter = retryAfter;
        failStatus = status;
    }

    /** From now on send the head and the first chunk of every answer, then nothing (a stall mid-body). */
    public void stallMidBody(boolean stall) {
        stallMidBody = stall;
    }

    /** Requests whose connection the router closed or reset before they were answered. */
    public int abandoned() {
        return abandoned.get();
    }

    /**
     * {@link #abandoned()} once it reaches {@code expected}, or as it stands after 5 s: the reset of an
     * abandoned exchange reaches this server after the router has answered its own client.
     */
    public int awaitAbandoned(int expected) throws InterruptedException {
        for (int i = 0; i < 500 && abandoned.get() < expected; i++) {
            Thread.sleep(10);
        }
        return abandoned.get();
    }

    /** Answer every parked request and stop parking. */
    public void release() {
        List<Runnable> toRun;
        synchronized (this) {
            holding = false;
            toRun = new ArrayList<>(parked);
            parked.clear();
        }
        toRun.forEach(Runnable::run);
    }

    public Future<Void> close() {
        return server.close();
    }

    private void handle(HttpServerRequest request) {
        String[] segments = request.path().split("/");
        if (request.method().name().equals("POST") && segments.length == 5 && segments[2].equals("v1")
                && segments[3].equals("chat") && segments[4].equals("completions")) {
            String name = segments[1];
            clientPorts.add(request.remoteAddress().port());
            request.response().closeHandler(v -> abandoned.incrementAndGet());
            request.body().onSuccess(body -> {
                JsonObject json = body.toJsonObject();
                bodies.add(json);
                received.incrementAndGet();
                if (failStatus != 0) {
                    if (failRetryAfter != null) {
                        request.response().putHeader("Retry-After", failRetryAfter);
                    }
                    String failure = failBody;
                    request.response().setStatusCode(failStatus).end(failure != null ? failure
                            : "{\"error\":\"internal secret sk-upstream-4711 at " + request.absoluteURI() + "\"}");
                    return;
                }
                if (stallMidBody) {
                    request.response().setChunked(true).putHeader("Content-Type", "application/json")
                            .write("{\"id\":\"chatcmpl-local\",");
                    return;
                }
                Runnable answer = () -> answer(request, name, json);
                synchronized (this) {
                    if (holding) {
                        parked.add(answer);
                        return;
                    }
                }
                long delay = delayMs;
                if (delay > 0) {
                    vertx.setTimer(delay, t -> answer.run());
                } else {
                    answer.run();
                }
            });
            return;
        }
        if (request.method().name().equals("POST") && segments.length == 4 && segments[2].equals("v1")
                && (segments[3].equals("responses") || segments[3].equals("messages"))) {
            String name = segments[1];
            boolean messages = segments[3].equals("messages");
            String key = request.getHeader(messages ? "x-api-key" : "Authorization");
            request.body().onSuccess(body -> {
                JsonObject json = body.toJsonObject();
                bodies.add(json.copy().put("_path", segments[3]).put("_key", key));
                received.incrementAndGet();
                String text = "natively served by " + name;
                int input = json.encode().length() / 4;
                if (json.getBoolean("stream", false)) {
                    request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
                    for (JsonObject event : messages ? messageEvents(json, text, input) : responseEvents(json, text, input)) {
                        request.response().write("event: " + event.getString("type") + "\ndata: " + event.encode() + "\n\n");
                    }
                    request.response().end();
                    return;
                }
                request.response().putHeader("Content-Type", "application/json")
                        .end((messages ? message(json, text, input) : response(json, text, input, "completed")).toBuffer());
            });
            return;
        }
        if (request.method().name().equals("POST") && segments.length == 4 && segments[2].equals("v1")
                && segments[3].equals("embeddings")) {
            request.body().onSuccess(body -> {
                JsonObject json = body.toJsonObject();
                bodies.add(json);
                received.incrementAndGet();
                if (failStatus != 0) {
                    request.response().setStatusCode(failStatus).end("{\"error\":\"internal secret sk-upstream-4711\"}");
                    return;
                }
                request.response().putHeader("Content-Type", "application/json").end(embeddings(json).toBuffer());
            });
            return;
        }
        request.response().setStatusCode(404).end();
    }

    /*
     * The Responses and Messages APIs as a server that speaks them answers: "natively served by
     * {name}", input tokens = request JSON length / 4, three output tokens; streamed as their events.
     */
    private static JsonObject response(JsonObject request, String text, int input, String status) {
        return new JsonObject().put("id", "resp_local").put("object", "response").put("created_at", 0)
                .put("status", status).put("model", request.getString("model"))
                .put("output", "completed".equals(status) ? new JsonArray().add(new JsonObject().put("type", "message")
                        .put("id", "msg_local").put("status", "completed").put("role", "assistant")
                        .put("content", new JsonArray().add(new JsonObject().put("type", "output_text").put("text", text)
                                .put("annotations", new JsonArray())))) : new JsonArray())
                .put("usage", "completed".equals(status) ? new JsonObject().put("input_tokens", input).put("output_tokens", 3)
                        .put("total_tokens", input + 3) : null);
    }

    private static List<JsonObject> responseEvents(JsonObject request, String text, int input) {
        List<JsonObject> events = new ArrayList<>();
        JsonObject item = new JsonObject().put("type", "message").put("id", "msg_local").put("status", "in_progress")
                .put("role", "assistant").put("content", new JsonArray());
        events.add(new JsonObject().put("type", "response.created").put("response", response(request, text, input, "in_progress")));
        events.add(new JsonObject().put("type", "response.output_item.added").put("output_index", 0).put("item", item));
        events.add(new JsonObject().put("type", "response.content_part.added").put("item_id", "msg_local").put("output_index", 0)
                .put("content_index", 0).put("part", new JsonObject().put("type", "output_text").put("text", "")
                        .put("annotations", new JsonArray())));
        for (String piece : new String[] {"natively ", text.substring("natively ".length())}) {
            events.add(new JsonObject().put("type", "response.output_text.delta").put("item_id", "msg_local")
                    .put("output_index", 0).put("content_index", 0).put("delta", piece).put("logprobs", new JsonArray()));
        }
        JsonObject done = response(request, text, input, "completed");
        events.add(new JsonObject().put("type", "response.output_text.done").put("item_id", "msg_local").put("output_index", 0)
                .put("content_index", 0).put("text", text).put("logprobs", new JsonArray()));
        events.add(new JsonObject().put("type", "response.output_item.done").put("output_index", 0)
                .put("item", done.getJsonArray("output").getJsonObject(0)));
        events.add(new JsonObject().put("type", "response.completed").put("response", done));
        for (int i = 0; i < events.size(); i++) {
            events.get(i).put("sequence_number", i);
        }
        return events;
    }

    private static JsonObject message(JsonObject request, String text, int input) {
        return new JsonObject().put("id", "msg_local").put("type", "message").put("role", "assistant")
                .put("model", request.getString("model"))
                .put("content", new JsonArray().add(new JsonObject().put("type", "text").put("text", text)))
                .put("stop_reason", "end_turn").putNull("stop_sequence")
                .put("usage", new JsonObject().put("input_tokens", input).put("output_tokens", 3));
    }

    private static List<JsonObject> messageEvents(JsonObject request, String text, int input) {
        JsonObject start = message(request, text, input).put("content", new JsonArray()).putNull("stop_reason");
        start.getJsonObject("usage").put("output_tokens", 1);
        return List.of(
                new JsonObject().put("type", "message_start").put("message", start),
                new JsonObject().put("type", "content_block_start").put("index", 0)
                        .put("content_block", new JsonObject().put("type", "text").put("text", "")),
                new JsonObject().put("type", "content_block_delta").put("index", 0)
                        .put("delta", new JsonObject().put("type", "text_delta").put("text", "natively ")),
                new JsonObject().put("type", "content_block_delta").put("index", 0)
                        .put("delta", new JsonObject().put("type", "text_delta").put("text", text.substring("natively ".length()))),
                new JsonObject().put("type", "content_block_stop").put("index", 0),
                new JsonObject().put("type", "message_delta").put("delta", new JsonObject().put("stop_reason", "end_turn")
                        .putNull("stop_sequence")).put("usage", new JsonObject().put("output_tokens", 3)),
                new JsonObject().put("type", "message_stop"));
    }

    /**
     * An embeddings answer in OpenAI's shape: per input, {@code dimensions} (default 4) values, the
     * k-th being the input's length in characters divided by k+1, as float arrays or, with
     * {@code encoding_format: base64}, as little-endian float32 in base64 (what the SDKs ask for by
     * default); usage counts characters / 4.
     */
    private static JsonObject embeddings(JsonObject request) {
        Object input = request.getValue("input");
        List<String> inputs = new ArrayList<>();
        if (input instanceof String s) {
            inputs.add(s);
        } else {
            ((JsonArray) input).forEach(i -> inputs.add(String.valueOf(i)));
        }
        int dimensions = request.getInteger("dimensions", 4);
        boolean base64 = "base64".equals(request.getString("encoding_format"));
        JsonArray data = new JsonArray();
        int tokens = 0;
        for (int i = 0; i < inputs.size(); i++) {
            int length = inputs.get(i).length();
            tokens += length / 4;
            java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(4 * dimensions).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            JsonArray values = new JsonArray();
            for (int k = 0; k < dimensions; k++) {
                float v = (float) length / (k + 1);
                bytes.putFloat(v);
                values.add(v);
            }
            data.add(new JsonObject().put("object", "embedding").put("index", i).put("embedding",
                    base64 ? java.util.Base64.getEncoder().encodeToString(bytes.array()) : values));
        }
        return new JsonObject().put("object", "list").put("data", data).put("model", request.getString("model"))
                .put("usage", new JsonObject().put("prompt_tokens", tokens).put("total_tokens", tokens));
    }

    /**
     * The messages' text as the router flattens it (contents joined by "\n", text parts joined): the
     * router forwards a client's chat request whole, so this counts what a model server would read.
     */
    private static String prompt(JsonArray messages) {
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            Object content = messages.getJsonObject(i).getValue("content");
            if (content instanceof String text) {
                texts.add(text);
            } else if (content instanceof JsonArray parts) {
                StringBuilder joined = new StringBuilder();
                for (int j = 0; j < parts.size(); j++) {
                    if (parts.getValue(j) instanceof JsonObject part && part.getValue("text") instanceof String text) {
                        joined.append(text);
                    }
                }
                texts.add(joined.toString());
            } else {
                texts.add(""); // null (an assistant turn that only called tools)
            }
        }
        return String.join("\n", texts);
    }

    private void answer(HttpServerRequest request, String name, JsonObject json) {
        if (request.response().closed()) {
            return;
        }
        String prompt = prompt(json.getJsonArray("messages"));
        String text = "served by " + name;
        int promptTokens = prompt.length() / 4;
        if (json.getBoolean("stream", false)) {
            request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
            // As model servers stream: every chunk's choice has a finish_reason, null until the last.
            String[] pieces = {"served ", "by ", name};
            // Cut at the limit, as a model is, unless the client's max_tokens leaves room for the three pieces.
            String finish = json.getInteger("max_tokens", 0) > pieces.length ? "stop" : "length";
            for (int i = 0; i < pieces.length; i++) {
                JsonObject chunk = chunk(json, pieces[i]);
                chunk.getJsonArray("choices").getJsonObject(0).put("finish_reason", i < pieces.length - 1 ? null : finish);
                request.response().write(Buffer.buffer("data: " + chunk.encode() + "\n\n"));
            }
            JsonObject options = json.getJsonObject("stream_options");
            if (options != null && options.getBoolean("include_usage", false)) {
                // OpenAI's shape: a last chunk with no choices and the usage.
                request.response().write(Buffer.buffer("data: " + chunk(json, null).put("choices", new JsonArray())
                        .put("usage", usage(promptTokens)).encode() + "\n\n"));
            }
            request.response().end("data: [DONE]\n\n");
            return;
        }
        JsonArray tools = json.getJsonArray("tools");
        JsonObject choice = new JsonObject().put("index", 0);
        if (tools != null && !tools.isEmpty() && !"none".equals(json.getValue("tool_choice"))) {
            // As a model server does when it decides to call a tool: no content, the call, its finish reason.
            String function = tools.getJsonObject(0).getJsonObject("function").getString("name");
            choice.put("message", new JsonObject().put("role", "assistant").putNull("content")
                            .put("tool_calls", new JsonArray().add(new JsonObject().put("id", "call-" + name)
                                    .put("type", "function").put("function", new JsonObject()
                                            .put("name", function).put("arguments", "{\"city\":\"Zürich\"}")))))
                    .put("logprobs", null).put("finish_reason", "tool_calls");
        } else {
            choice.put("message", new JsonObject().put("role", "assistant").put("content", text))
                    .put("finish_reason", "stop");
        }
        JsonObject reply = new JsonObject()
                .put("id", "chatcmpl-local")
                .put("object", "chat.completion")
                .put("created", System.currentTimeMillis() / 1000)
                .put("model", json.getString("model"))
                .put("system_fingerprint", "fp-local-" + name)
                .put("choices", new JsonArray().add(choice))
                .put("usage", usage(promptTokens));
        request.response().putHeader("Content-Type", "application/json").end(reply.toBuffer());
    }

    private static JsonObject usage(int promptTokens) {
        return new JsonObject().put("prompt_tokens", promptTokens).put("completion_tokens", 1)
                .put("total_tokens", promptTokens + 1);
    }

    private static JsonObject chunk(JsonObject request, String piece) {
        return new JsonObject()
                .put("id", "chatcmpl-local")
                .put("object", "chat.completion.chunk")
                .put("model", request.getString("model"))
                .put("choices", new JsonArray().add(new JsonObject()
                        .put("index", 0)
                        .put("delta", new JsonObject().put("content", piece))));
    }

    /** Waits (polling, bounded) until at least {@code count} requests arrived. */
    public void awaitReceived(int count) throws InterruptedException {
        for (int i = 0; i < 500 && received.get() < count; i++) {
            Thread.sleep(10);
        }
        if (received.get() < count) {
            throw new AssertionError("upstream received " + received.get() + " requests, expected " + count);
        }
    }
}
