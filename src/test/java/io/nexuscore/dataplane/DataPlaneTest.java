package io.nexuscore.dataplane;

import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ASSIGNED_TIER;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ROUTE_SOURCE;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_SCORE;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_TIER;
import static io.nexuscore.dataplane.RawHttp.ascii;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.micrometer.core.instrument.Counter;
import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.Tier;
import io.nexuscore.http.Problem;
import io.nexuscore.testing.Corpus;
import io.nexuscore.testing.HandScoredRequests;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.extension.ExtendWith;

/** The data plane end to end over real loopback sockets, every tier backed by a real local upstream. */
@ExtendWith(VertxExtension.class)
class DataPlaneTest {

    private static LocalOpenAiServer upstream;
    private static RecordingEventSink events;
    private static RouterRuntime router;
    private static HttpClient client;
    private static int port;

    @BeforeAll
    static void start(Vertx vertx) {
        upstream = LocalOpenAiServer.start(vertx).await();
        events = new RecordingEventSink();
        router = RouterFixture.start(RouterFixture.config(upstream), events);
        port = router.dataPlanePort();
        client = vertx.createHttpClient(new PoolOptions().setHttp1MaxSize(4));
    }

    @AfterAll
    static void stop() {
        router.close();
    }

    @Test
    void eachTierServesTheRequestsItsScoreSelects(VertxTestContext ctx) {
        int[] sizes = {20, 400, 800};
        Tier[] intended = {Tier.NANO, Tier.SMALL, Tier.LARGE};
        List<Future<RouterFixture.Reply>> replies = new ArrayList<>();
        for (int size : sizes) {
            replies.add(RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(size)));
        }
        Future.all(replies).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            for (int i = 0; i < sizes.length; i++) {
                HandScoredRequests.Request row = RouterFixture.handScoredChat(sizes[i]); // scores 4, 79, 162
                Tier expected = row.tier();
                assertEquals(intended[i], expected, "test premise: body of " + sizes[i] + " scores into " + intended[i]);
                RouterFixture.Reply reply = replies.get(i).result();
                assertEquals(200, reply.status(), reply.body().toString());
                assertEquals(expected.label(), reply.header(HEADER_ASSIGNED_TIER));
                assertEquals(String.valueOf(row.score()), reply.header(HEADER_SCORE));
                assertEquals("user", reply.header(HEADER_ROUTE_SOURCE));
                assertNotNull(reply.header(HEADER_TIER));
                assertEquals("nexus-" + expected.label(), reply.json().getString("model"));
                assertEquals("served by " + expected.label(),
                        reply.json().getJsonArray("choices").getJsonObject(0).getJsonObject("message").getString("content"));
            }
            ctx.completeNow();
        })));
    }

    @Test
    void taskKeywordInTheRequestLineRaisesTheScore(VertxTestContext ctx) {
        JsonObject body = new JsonObject().put("prompt", RouterFixture.words(200)); // 40 words: 41 tokens (hand-worked)
        Future<RouterFixture.Reply> analyze = RouterFixture.post(client, port, "/v1/tasks/analyze", body);
        Future<RouterFixture.Reply> plain = RouterFixture.post(client, port, "/v1/tasks/echo", body);
        Future.all(analyze, plain).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            assertEquals(HandScoredRequests.ANALYZE_200.body(), body.encode(), "test premise: the hand-worked rows' body");
            int analyzeScore = HandScoredRequests.ANALYZE_200.score(); // 41 + 25
            int plainScore = HandScoredRequests.ECHO_200.score(); // 41
            assertEquals(plainScore + 25, analyzeScore, "test premise: 'ana' adds its weight");
            assertEquals(String.valueOf(analyzeScore), analyze.result().header(HEADER_SCORE));
            assertEquals(String.valueOf(plainScore), plain.result().header(HEADER_SCORE));
            assertEquals("small", analyze.result().header(HEADER_ASSIGNED_TIER));
            assertEquals("nano", plain.result().header(HEADER_ASSIGNED_TIER));
            JsonObject json = analyze.result().json();
            assertEquals("text_completion", json.getString("object"));
            assertEquals("analyze", json.getString("task"));
            assertEquals("served by small", json.getJsonArray("choices").getJsonObject(0).getString("text"));
            ctx.completeNow();
        })));
    }

    @Test
    void keepAliveConnectionGetsTheRightTierForEveryRequest(Vertx vertx, VertxTestContext ctx) {
        HttpClient single = vertx.createHttpClient(new PoolOptions().setHttp1MaxSize(1));
        int[] sizes = {20, 800, 20, 800, 400, 20};
        List<String> tiers = Collections.synchronizedList(new ArrayList<>());
        Set<HttpConnection> connections = Collections.newSetFromMap(new IdentityHashMap<>());
        // Started on a context, as RouterFixture.exchange does: the CI run of 2026-12-06 02:19 timed
        // out here with the chain begun on the test's own thread.
        Future<Void> chain = RouterFixture.onContext(single, () -> {
            Future<Void> requests = Future.succeededFuture();
            for (int size : sizes) {
                requests = requests.compose(v -> single.request(new RequestOptions().setMethod(HttpMethod.POST)
                                .setHost("127.0.0.1").setPort(port).setURI("/v1/chat/completions"))
                        .compose(req -> req.send(RouterFixture.chat(size).toBuffer()))
                        .compose(response -> {
                            connections.add(response.request().connection());
                            tiers.add(response.getHeader(HEADER_ASSIGNED_TIER) + "/" + response.getHeader(HEADER_TIER));
                            return response.body().mapEmpty();
                        }));
            }
            return requests;
        });
        chain.onComplete(ctx.succeeding(v -> ctx.verify(() -> {
            List<String> expected = new ArrayList<>();
            for (int size : sizes) {
                Tier tier = RouterFixture.handScoredChat(size).tier();
                expected.add(tier.label() + "/" + observedFor(size));
            }
            assertEquals(expected, tiers);
            assertEquals(1, connections.size(), "all requests on one keep-alive connection");
            ctx.completeNow();
        })));
    }

    /** The local upstream reports content/4 prompt tokens + 1 completion token. */
    private static String observedFor(int contentSize) {
        return RouterFixture.THRESHOLDS.tierFor(Math.min(255, contentSize / 4 + 1)).label();
    }

    @Test
    void responsesFollowTheOpenAiSchema(VertxTestContext ctx) {
        Future<RouterFixture.Reply> chat = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(10));
        Future<RouterFixture.Reply> completion = RouterFixture.post(client, port, "/v1/completions",
                new JsonObject().put("model", "gpt-x").put("prompt", new JsonArray().add("hello ").add("world")).put("max_tokens", 5));
        Future.all(chat, completion).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            JsonObject c = chat.result().json();
            assertEquals("application/json", chat.result().header("Content-Type"));
            assertTrue(c.getString("id").startsWith("chatcmpl-"));
            assertEquals("chat.completion", c.getString("object"));
            assertTrue(c.getLong("created") > 0);
            assertEquals("nexus-nano", c.getString("model"));
            JsonObject choice = c.getJsonArray("choices").getJsonObject(0);
            assertEquals(0, choice.getInteger("index"));
            assertEquals("assistant", choice.getJsonObject("message").getString("role"));
            assertEquals("stop", choice.getString("finish_reason"));
            assertUsage(c.getJsonObject("usage"));

            JsonObject t = completion.result().json();
            assertEquals("text_completion", t.getString("object"));
            assertEquals("served by nano", t.getJsonArray("choices").getJsonObject(0).getString("text"));
            assertUsage(t.getJsonObject("usage"));
            JsonObject sent = upstream.bodies().stream()
                    .filter(b -> b.getJsonArray("messages").getJsonObject(0).getString("content").equals("hello world"))
                    .findFirst().orElseThrow();
            assertEquals(5, sent.getInteger("max_tokens"), "max_tokens reaches the upstream");
            assertEquals("upstream-nano", sent.getString("model"), "the tier's upstream model, not the client's");
            ctx.completeNow();
        })));
    }

    private static void assertUsage(JsonObject usage) {
        int prompt = usage.getInteger("prompt_tokens");
        int completion = usage.getInteger("completion_tokens");
        assertEquals(prompt + completion, usage.getInteger("total_tokens"));
        assertEquals(1, completion);
    }

    @Test
    void streamingIsPassedThroughWithTierHeadersAndEndsWithTheSummaryChunk(Vertx vertx, VertxTestContext ctx) {
        double assessed = router.registry().find("nexus_assessed_requests").tag("assigned", "nano")
                .counters().stream().mapToDouble(c -> c.count()).sum();
        // Earlier tests send the same chat: only an event of this request may end the wait below.
        Set<RecordingEventSink.Event> earlier = Collections.newSetFromMap(new IdentityHashMap<>());
        earlier.addAll(events.events());
        RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(20).put("stream", true)
                        .put("stream_options", new JsonObject().put("include_usage", true)))
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertEquals(200, reply.status());
                    assertEquals("text/event-stream", reply.header("Content-Type"));
                    assertEquals("nano", reply.header(HEADER_ASSIGNED_TIER));
                    assertNotNull(reply.header(DataPlaneHandler.HEADER_SCORE));
                    assertEquals("user", reply.header(DataPlaneHandler.HEADER_ROUTE_SOURCE));
                    assertNull(reply.header(HEADER_TIER), "the tier's assessment is unknown when the head goes out");
                    StringBuilder text = new StringBuilder();
                    String[] events = reply.body().toString().split("\n\n");
                    for (String event : events) {
                        assertTrue(event.startsWith("data: "), event);
                        String data = event.substring(6);
                        if (!data.equals("[DONE]")) {
                            JsonArray choices = new JsonObject(data).getJsonArray("choices");
                            if (!choices.isEmpty()) {
                                text.append(choices.getJsonObject(0).getJsonObject("delta").getString("content"));
                            }
                        }
                    }
                    assertEquals("data: [DONE]", events[events.length - 1]);
                    assertEquals(5, events.length, "three chunks as the upstream sent them, the summary, then [DONE]");
                    assertEquals("served by nano", text.toString());
                    // The upstream's usage-only chunk became the summary: one chunk with usage, not two.
                    JsonObject summary = new JsonObject(events[3].substring(6));
                    assertEquals("chat.completion.chunk", summary.getString("object"));
                    assertTrue(summary.getJsonArray("choices").isEmpty());
                    assertUsage(summary.getJsonObject("usage"));
                    JsonObject nexus = summary.getJsonObject("nexuscore");
                    assertEquals("nano", nexus.getString("assigned_tier"));
                    assertEquals("nano", nexus.getString("observed_tier"), "20 bytes: a nano answer");
                    assertEquals("user", nexus.getString("route_source"));
                    assertEquals(Integer.parseInt(reply.header(DataPlaneHandler.HEADER_SCORE)), nexus.getInteger("score"));
                    assertEquals(summary.getJsonObject("usage").getInteger("total_tokens"), nexus.getInteger("observed_score"));
                })))
                .compose(reply -> events.awaitEvent(vertx, e -> !earlier.contains(e) && e.type().equals("request")
                        && "nano".equals(e.data().getString("observed_tier"))
                        && e.data().getInteger("prompt_tokens", 0) == RouterFixture.chat(20).getJsonArray("messages")
                                .getJsonObject(0).getString("content").length() / 4))
                .onComplete(ctx.succeeding(event -> ctx.verify(() -> {
                    assertEquals(200, event.data().getInteger("status"));
                    double now = router.registry().find("nexus_assessed_requests").tag("assigned", "nano")
                            .counters().stream().mapToDouble(c -> c.count()).sum();
                    assertTrue(now > assessed, "a streamed answer with usage is assessed too");
                    ctx.completeNow();
                })));
    }

    @Test
    void modelsListsEveryTierAndEveryUpstreamModel(VertxTestContext ctx) {
        RouterFixture.send(client, port, HttpMethod.GET, "/v1/models", null)
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertEquals(200, reply.status());
                    JsonArray data = reply.json().getJsonArray("data");
                    // Every model a client may name: the tiers' and, for upstream tiers, the upstream's.
                    assertEquals(6, data.size());
                    assertEquals(Set.of("nexus-nano", "nexus-small", "nexus-large",
                                    "upstream-nano", "upstream-small", "upstream-large"),
                            Set.copyOf(data.stream().map(o -> ((JsonObject) o).getString("id")).toList()));
                    ctx.completeNow();
                })));
    }

    @Test
    void everyRequestPublishesAnEventAndCountsMetrics(Vertx vertx, VertxTestContext ctx) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
                .setURI("/v1/tasks/summarize").putHeader("X-NX-Tenant", "acme");
        double before = requests("nano", "200");
        RouterFixture.exchange(client, options, new JsonObject().put("prompt", "tiny").toBuffer())
                // The event is published right after the response is written: the client can be faster.
                .compose(body -> events.awaitEvent(vertx, e -> e.type().equals("request")
                        && "acme".equals(e.data().getString("tenant"))))
                .onComplete(ctx.succeeding(found -> ctx.verify(() -> {
                    JsonObject event = found.data();
                    assertEquals("nano", event.getString("assigned_tier"));
                    assertEquals("summarize", event.getString("endpoint"));
                    assertEquals(200, event.getInteger("status"));
                    assertEquals("user", event.getString("route_source"));
                    assertNotNull(event.getString("observed_tier"));
                    // The upstream's usage (prompt + completion tokens) is its assessment; a nano one here.
                    assertNotNull(event.getInteger("prompt_tokens"));
                    assertTrue(event.getInteger("observed_score") <= RouterFixture.THRESHOLDS.nanoMax());
                    assertEquals(new JsonObject().put("strict", false).put("banded", false).put("gross", false),
                            event.getJsonObject("misroute"));
                    assertTrue(event.getLong("timestamp_ns") > 1_600_000_000_000_000_000L);
                    assertTrue(event.getLong("latency_us") >= 0);
                    assertEquals(before + 1, requests("nano", "200"));
                    String scrape = router.registry().scrape();
                    for (String name : List.of("nexus_requests_total{", "nexus_request_latency_seconds{",
                            "nexus_route_source_total{", "nexus_kernel_user_disagreements_total",
                            "nexus_assessed_requests_total{")) {
                        assertTrue(scrape.contains(name), name + " missing from the Prometheus scrape");
                    }
                    ctx.completeNow();
                })));
    }

    /** A function-calling request: the tool definitions, JSON the guests never count, sized {@code count}. */
    private static JsonArray tools(int count) {
        JsonArray tools = new JsonArray();
        for (int i = 0; i < count; i++) {
            tools.add(new JsonObject().put("type", "function").put("function", new JsonObject()
                    .put("name", "tool_" + i)
                    .put("description", "Get the current weather in a given location, with units and an optional horizon")
                    .put("parameters", new JsonObject().put("type", "object").put("properties", new JsonObject()
                                    .put("location", new JsonObject().put("type", "string").put("description", "The city"))
                                    .put("unit", new JsonObject().put("type", "string")
                                            .put("enum", new JsonArray().add("celsius").add("fahrenheit"))))
                            .put("required", new JsonArray().add("location")))));
        }
        return tools;
    }

    /**
     * Tool definitions (3.5 KB) beside a short question, after the messages and before them: the byte
     * scan would count them as prompt (score 255, large) where the guests count the question (nano);
     * the tier comes from the parsed prompt. A request whose body is its prompt keeps its decision.
     */
    private static JsonObject chatOf(String content) {
        return new JsonObject().put("model", "whatever").put("messages", new JsonArray()
                .add(new JsonObject().put("role", "user").put("content", content)));
    }

    @Test
    void bytesThatAreNotThePromptDoNotMakeARequestLarge() throws InterruptedException {
        double before = fallbacks("non_prompt_body");
        double nano = requests("nano", "200");
        double large = requests("large", "200");
        // A real question of at most 150 bytes (well under 60 tokens by any count), not a word repeated.
        JsonObject question = chatOf(Corpus.shortQuestion(150));
        JsonObject after = question.copy().put("tools", tools(12));
        JsonObject first = new JsonObject().put("model", "whatever").put("tools", tools(12))
                .put("messages", question.getJsonArray("messages"));
        assertTrue(after.encode().length() > 3000 && after.encode().length() < RouterFixture.MAX_BODY, "the tools outweigh the prompt");
        for (JsonObject body : List.of(after, first)) {
            RouterFixture.Reply reply = RouterFixture.post(client, port, "/v1/chat/completions", body).await();
            assertEquals(200, reply.status(), reply.body().toString());
            assertEquals("nano", reply.header(HEADER_ASSIGNED_TIER), body.encode().substring(0, 80));
            assertEquals("nano", reply.header(HEADER_TIER), "the guests' truth agrees");
            assertEquals("user", reply.header(DataPlaneHandler.HEADER_ROUTE_SOURCE));
        }
        assertEquals(before + 2, fallbacks("non_prompt_body"));
        // A long prompt and nothing else: the body's decision stands, no re-decision counted.
        RouterFixture.Reply plain = RouterFixture.post(client, port, "/v1/chat/completions",
                chatOf(Corpus.atLeast(3000))).await();
        assertEquals("large", plain.header(HEADER_ASSIGNED_TIER));
        assertEquals(before + 2, fallbacks("non_prompt_body"));
        awaitServed("nano", nano + 2);
        awaitServed("large", large + 1);
    }

    /**
     * A prompt the byte scan cannot see as a string, a completion's prompt given as a list of
     * strings, gets an estimate from the body's length (about 4.25 bytes a token): a Greek question
     * of 81 cl100k tokens in 257 bytes would go to nano, 40 short English questions (201 tokens)
     * to small. The tier comes from the parsed prompt instead: the one cl100k_base gives. Content
     * given as a list of parts is scanned (its "text" keys) and needs no second decision.
     */
    @Test
    void aPromptTheScanCannotSeeIsDecidedFromItsText() throws InterruptedException {
        Encoding cl100k = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        double before = fallbacks("unscanned_prompt");
        for (String text : List.of("Ποια είναι η πρωτεύουσα της Ελλάδας και γιατί; ".repeat(2), "Is it a cat? ".repeat(40))) {
            Tier truth = RouterFixture.THRESHOLDS.tierFor(cl100k.countTokensOrdinary(text));
            int half = text.length() / 2;
            JsonObject completion = new JsonObject().put("model", "whatever")
                    .put("prompt", new JsonArray().add(text.substring(0, half)).add(text.substring(half)));
            assertNotEquals(truth, tierOfScan("POST /v1/completions HTTP/1.1", completion, true), "the length would misroute it");
            RouterFixture.Reply reply = RouterFixture.post(client, port, "/v1/completions", completion).await();
            assertEquals(200, reply.status(), reply.body().toString());
            assertEquals(truth.label(), reply.header(HEADER_ASSIGNED_TIER), text);
            assertEquals("user", reply.header(DataPlaneHandler.HEADER_ROUTE_SOURCE));

            JsonObject parts = new JsonObject().put("model", "whatever").put("messages", new JsonArray().add(new JsonObject()
                    .put("role", "user").put("content", new JsonArray().add(new JsonObject().put("type", "text").put("text", text)))));
            assertEquals(truth, tierOfScan("POST /v1/chat/completions HTTP/1.1", parts, false), "the scan reads the parts' text");
            RouterFixture.Reply chat = RouterFixture.post(client, port, "/v1/chat/completions", parts).await();
            assertEquals(truth.label(), chat.header(HEADER_ASSIGNED_TIER), text);
        }
        assertEquals(before + 2, fallbacks("unscanned_prompt"), "the two completions re-decided from the parsed prompt");
    }

    /** The tier the byte scan of {@code body} gives, asserting whether it saw a prompt string. */
    private static Tier tierOfScan(String requestLine, JsonObject body, boolean blind) {
        byte[] bytes = body.encode().getBytes(StandardCharsets.UTF_8);
        PromptEstimate scanned = PromptEstimate.scan(bytes, 0, bytes.length, bytes.length);
        assertEquals(blind, scanned.blind(), body.encode());
        return RouterFixture.THRESHOLDS.tierFor(RouterFixture.SCORER.score(requestLine.getBytes(StandardCharsets.ISO_8859_1), scanned));
    }

    /**
     * The upstream gets the client's chat as it was written (system prompt, turns, tools, sampling
     * options), only the model changed to the tier's, and the client gets the upstream's answer as it
     * was written (tool calls, finish reason, fields the router does not know), only its model the
     * tier's: function calling works through the router.
     */
    @Test
    void theChatAndItsAnswerPassThroughWithTheTiersModel() throws InterruptedException {
        double nano = requests("nano", "200");
        JsonObject body = new JsonObject().put("model", "client-model").put("temperature", 0.25).put("user", "u-7")
                .put("messages", new JsonArray()
                        .add(new JsonObject().put("role", "system").put("content", "Answer in one word."))
                        .add(new JsonObject().put("role", "user").put("content", "Weather in Paris?")))
                .put("tools", tools(2)).put("tool_choice", "auto");
        int before = upstream.bodies().size();
        RouterFixture.Reply reply = RouterFixture.post(client, port, "/v1/chat/completions", body).await();
        assertEquals(200, reply.status(), reply.body().toString());
        JsonObject received = upstream.bodies().stream().skip(before)
                .filter(json -> "u-7".equals(json.getString("user"))).findFirst().orElseThrow();
        assertEquals(body.copy().put("model", "upstream-" + reply.header(HEADER_ASSIGNED_TIER)), received);
        assertEquals("nano", reply.header(HEADER_ASSIGNED_TIER));
        // The model called a tool: its call, finish reason and every other field reach the client as
        // the model server wrote them; only the model is the tier's.
        JsonObject answer = reply.json();
        JsonObject choice = answer.getJsonArray("choices").getJsonObject(0);
        assertEquals("tool_calls", choice.getString("finish_reason"));
        assertNull(choice.getJsonObject("message").getValue("content"));
        assertEquals(new JsonObject().put("name", "tool_0").put("arguments", "{\"city\":\"Zürich\"}"),
                choice.getJsonObject("message").getJsonArray("tool_calls").getJsonObject(0).getJsonObject("function"));
        assertTrue(choice.containsKey("logprobs"));
        assertEquals("fp-local-nano", answer.getString("system_fingerprint"));
        assertEquals("nexus-nano", answer.getString("model"));
        awaitServed("nano", nano + 1);
    }

    /**
     * A body that arrives in pieces (here seven writes, cut inside multi-byte characters and inside
     * the model's value) is read whole and reaches the upstream as the client wrote it, only the model
     * the tier's: the reader joins the pieces, the upstream request is spliced from them.
     */
    @Test
    void aBodyInPiecesReachesTheUpstreamWhole() throws Exception {
        String marker = "pieces-" + System.nanoTime();
        JsonObject body = new JsonObject().put("model", "client-model").put("user", marker)
                .put("messages", new JsonArray()
                        .add(new JsonObject().put("role", "system").put("content", "Réponds brièvement. 回答要简短。"))
                        .add(new JsonObject().put("role", "user").put("content", "Grüße aus Zürich 🙂 ".repeat(40))));
        byte[] bytes = body.encode().getBytes(StandardCharsets.UTF_8);
        // Expect: 100-continue: the router starts reading the body as it sends the 100, so each piece
        // written after it comes to the reader on its own (before it, they may pile up into one read).
        byte[] head = ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Expect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n");
        String text = new String(bytes, StandardCharsets.ISO_8859_1); // one char a byte: indexOf finds byte offsets
        int e = text.indexOf(new String("é".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
        int hui = text.indexOf(new String("回".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
        int smile = text.indexOf(new String("🙂".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
        // inside "client-model", inside "é", between the second and third byte of "回", inside "🙂" twice
        int[] cuts = {0, 12, e + 1, hui + 2, smile + 1, smile + 3, bytes.length - 5, bytes.length};
        int before = upstream.bodies().size();
        try (java.net.Socket socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(5_000);
            socket.setTcpNoDelay(true);
            socket.getOutputStream().write(head);
            byte[] interim = socket.getInputStream().readNBytes(25);
            assertEquals("HTTP/1.1 100 Continue\r\n\r\n", new String(interim, StandardCharsets.ISO_8859_1));
            for (int i = 0; i + 1 < cuts.length; i++) {
                socket.getOutputStream().write(bytes, cuts[i], cuts[i + 1] - cuts[i]);
                socket.getOutputStream().flush();
                Thread.sleep(20); // separate reads on the router's side
            }
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(response.startsWith("HTTP/1.1 200"), response);
        }
        JsonObject received = upstream.bodies().stream().skip(before)
                .filter(json -> marker.equals(json.getString("user"))).findFirst().orElseThrow();
        assertEquals("upstream-", received.getString("model").substring(0, 9));
        assertEquals(body.copy().put("model", received.getString("model")), received);
    }

    /**
     * Waits (up to 5 s) until {@code tier}'s 200s reach {@code expected}, then asserts it: a request
     * is counted once its response's write completed, which can be just after the client read it, so
     * a test that returns at once could have its count land in the next test's window.
     */
    private static void awaitServed(String tier, double expected) throws InterruptedException {
        for (int i = 0; i < 500 && requests(tier, "200") < expected; i++) {
            Thread.sleep(10);
        }
        assertEquals(expected, requests(tier, "200"), tier + " 200s");
    }

    private static double fallbacks(String reason) {
        Counter counter = router.registry().find("nexus_verdict_fallbacks").tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }

    private static double requests(String tier, String status) {
        Counter counter = router.registry().find("nexus_requests").tag("tier", tier).tag("status", status).counter();
        return counter == null ? 0 : counter.count();
    }

    static double errors(RouterRuntime runtime, String type) {
        Counter counter = runtime.registry().find("nexus_http_errors").tag("type", type).counter();
        return counter == null ? 0 : counter.count();
    }

    // ---- bad input -------------------------------------------------------------------------

    @Test
    void malformedJsonIs400(VertxTestContext ctx) {
        double before = errors(router, "malformed-json");
        RouterFixture.send(client, port, HttpMethod.POST, "/v1/chat/completions", Buffer.buffer("{\"messages\": ["))
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertProblem(reply, 400, "malformed-json");
                    assertEquals(before + 1, errors(router, "malformed-json"));
                    ctx.completeNow();
                })));
    }

    @Test
    void wrongShapeIs400NamingTheField(VertxTestContext ctx) {
        Future<RouterFixture.Reply> noMessages = RouterFixture.post(client, port, "/v1/chat/completions",
                new JsonObject().put("prompt", "chat wants messages"));
        Future<RouterFixture.Reply> negative = RouterFixture.post(client, port, "/v1/completions",
                new JsonObject().put("prompt", "x").put("max_tokens", -1));
        Future.all(noMessages, negative).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            assertProblem(noMessages.result(), 400, "invalid-request");
            assertTrue(noMessages.result().json().getString("detail").contains("messages"));
            assertProblem(negative.result(), 400, "invalid-request");
            assertTrue(negative.result().json().getString("detail").contains("max_tokens"));
            ctx.completeNow();
        })));
    }

    @Test
    void unknownPathIs404(VertxTestContext ctx) {
        double before = errors(router, "not-found");
        RouterFixture.post(client, port, "/v1/embeddings", new JsonObject())
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertProblem(reply, 404, "not-found");
                    assertEquals("/v1/embeddings", reply.json().getString("instance"));
                    assertEquals(before + 1, errors(router, "not-found"));
                    ctx.completeNow();
                })));
    }

    @Test
    void wrongMethodIs405WithAllow(VertxTestContext ctx) {
        Future<RouterFixture.Reply> get = RouterFixture.send(client, port, HttpMethod.GET, "/v1/chat/completions", null);
        Future<RouterFixture.Reply> post = RouterFixture.send(client, port, HttpMethod.POST, "/v1/models", Buffer.buffer("{}"));
        Future.all(get, post).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            assertProblem(get.result(), 405, "method-not-allowed");
            assertEquals("POST", get.result().header("Allow"));
            assertProblem(post.result(), 405, "method-not-allowed");
            assertEquals("GET, HEAD", post.result().header("Allow"));
            ctx.completeNow();
        })));
    }

    @Test
    void malformedHttpIs400AndCounted() throws Exception {
        double before = errors(router, "malformed-http");
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("this is not http\r\n\r\n"));
        assertEquals(400, exchange.status(), exchange.response());
        assertTrue(exchange.hasHeader("Content-Type", Problem.CONTENT_TYPE), exchange.response());
        assertEquals(Problem.TYPE_BASE + "malformed-http", new JsonObject(exchange.body()).getString("type"));
        assertTrue(exchange.closedByServer());
        assertEquals(before + 1, errors(router, "malformed-http"));
    }

    @Test
    void oversizedHeadIs431AndCountedAsMalformedHttp() throws Exception {
        double before = errors(router, "malformed-http");
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Big: "
                + "b".repeat(16 * 1024) + "\r\n\r\n"));
        assertEquals(431, exchange.status(), exchange.response());
        assertEquals(Problem.TYPE_BASE + "malformed-http", new JsonObject(exchange.body()).getString("type"));
        assertEquals(before + 1, errors(router, "malformed-http"));
    }

    @Test
    void declaredBodyOverTheLimitIs413BeforeTheBodyIsSent() throws Exception {
        double before = errors(router, "body-too-large");
        // Only the head goes out: a 413 that arrives proves the router did not wait for the body.
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("POST /v1/chat/completions HTTP/1.1\r\n"
                + "Host: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"));
        assertEquals(413, exchange.status(), exchange.response());
        assertTrue(exchange.hasHeader("Content-Type", Problem.CONTENT_TYPE));
        assertEquals(Problem.TYPE_BASE + "body-too-large", new JsonObject(exchange.body()).getString("type"));
        assertTrue(exchange.closedByServer(), "the connection is closed rather than drained");
        assertEquals(before + 1, errors(router, "body-too-large"));
    }

    /** curl sends Expect: 100-continue for bodies over 1 KiB and waits for the 100 before sending. */
    @Test
    void expectContinueGetsA100OnlyWhenTheBodyFits() throws Exception {
        String body = RouterFixture.chat(2000).encode();
        String head = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
                + "Connection: close\r\nContent-Type: application/json\r\nContent-Length: ";
        try (java.net.Socket socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write(ascii(head + body.length() + "\r\n\r\n"));
            byte[] interim = new byte[25];
            int n = socket.getInputStream().readNBytes(interim, 0, interim.length);
            assertEquals("HTTP/1.1 100 Continue\r\n\r\n", new String(interim, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1));
            socket.getOutputStream().write(ascii(body));
            String response = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
            assertTrue(response.startsWith("HTTP/1.1 200"), response);
        }
        RawHttp.Exchange refused = RawHttp.exchange(port, ascii(head + (RouterFixture.MAX_BODY + 1) + "\r\n\r\n"));
        assertEquals(413, refused.status(), "no 100 Continue for a body that will be refused: " + refused.response());
    }

    /**
     * A chunked body Netty cannot decode (here a chunk size that is not hex) made Vert.x close the
     * connection without a word; the client now gets a 400 naming the decoder's complaint.
     */
    @Test
    void undecodableChunkedBodyIs400AndCounted() throws Exception {
        double before = errors(router, "malformed-http");
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\n{\"mod\r\nzz\r\nel\":1}\r\n0\r\n\r\n"));
        assertRefusedAndClosed(exchange, 400, "the request body could not be decoded: ", before);
    }

    /**
     * The one answer on the connection is a {@code malformed-http} problem with this status whose
     * detail holds {@code detailPart}, counted once, and the server closed the connection.
     */
    private void assertRefusedAndClosed(RawHttp.Exchange exchange, int status, String detailPart, double errorsBefore) {
        assertEquals(List.of(Integer.toString(status)), exchange.statuses(), exchange.response());
        assertTrue(exchange.hasHeader("Content-Type", Problem.CONTENT_TYPE), exchange.response());
        JsonObject problem = new JsonObject(exchange.body());
        assertEquals(Problem.TYPE_BASE + "malformed-http", problem.getString("type"));
        assertTrue(problem.getString("detail").contains(detailPart), problem.encode());
        assertTrue(exchange.closedByServer());
        assertEquals(errorsBefore + 1, errors(router, "malformed-http"));
    }

    /**
     * Refused connections (an undecodable body behind a good request, bytes that are not HTTP, a TLS
     * handshake) between pairs of concurrent keep-alive requests cost none of those requests an answer.
     * The JDK's client: the test's Vert.x client, driven from this thread, lost answers in this mix
     * (see {@link RouterFixture#exchange}), which first looked like the router's doing.
     */
    @Test
    void refusedConnectionsAmongKeepAliveRequestsCostThemNoAnswer() throws Exception {
        java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        String chat = RouterFixture.chat(10).encode();
        String good = RouterFixture.chat(20).encode();
        double served = requests("nano", "200");
        for (int i = 0; i < 300; i++) {
            RawHttp.exchange(port, ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + good.length() + "\r\n\r\n" + good
                    + "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"));
            RawHttp.exchange(port, ascii("this is not http\r\n\r\n"));
            RawHttp.exchange(port, new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00});
            var first = jdk.sendAsync(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(chat)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            var second = jdk.sendAsync(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + port + "/v1/tasks/summarize"))
                    .header("X-NX-Tenant", "acme")
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"prompt\":\"tiny\"}")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, first.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode(), "pair " + i);
            assertEquals(200, second.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode(), "pair " + i);
        }
        awaitServed("nano", served + 900); // the good request before each refused body, and each pair
    }

    /** Pipelined behind a good request, the undecodable body is the second request's: 200, then 400. */
    @Test
    void undecodableChunkedBodyBehindAGoodRequestFailsOnlyItsOwn() throws Exception {
        double served = requests("nano", "200");
        String body = RouterFixture.chat(20).encode();
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body
                + "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"));
        List<String> statuses = exchange.statuses();
        assertEquals(List.of("200", "400"), statuses, exchange.response());
        assertTrue(exchange.closedByServer());
        awaitServed("nano", served + 1);
    }

    /**
     * Ambiguous body framing, end to end, each followed by what a smuggler would hide behind it (a
     * whole request, or a well-formed chunked body that would otherwise be served): one answer,
     * counted, and the connection closed with the rest unread. Netty alone read {@code
     * Transfer-Encoding: gzip} as "no body" and answered the request behind it, and dropped a
     * Content-Length beside chunked and kept the connection open (RFC 9112 §6.3 says close).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "Content-Length: 27\\r\\nTransfer-Encoding: chunked | 1b\\r\\n{\"model\":\"x\",\"prompt\":\"hi\"}\\r\\n0\\r\\n\\r\\n"
                    + " | 400 | both Content-Length and Transfer-Encoding",
            "Transfer-Encoding: gzip | GET /v1/models HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n | 400 | chunked is not the last",
            "Transfer-Encoding: gzip, chunked | 0\\r\\n\\r\\n | 501 | 'gzip' is not supported",
    })
    void ambiguousFramingIsRefusedAndNothingBehindItIsServed(String headers, String behind, int status, String detail)
            throws Exception {
        double before = errors(router, "malformed-http");
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii(("POST /v1/completions HTTP/1.1\\r\\nHost: localhost\\r\\n"
                + "Content-Type: application/json\\r\\n" + headers + "\\r\\n\\r\\n" + behind).replace("\\r\\n", "\r\n")));
        assertRefusedAndClosed(exchange, status, detail, before);
    }

    /**
     * An https:// client on the plain-HTTP port: its ClientHello has no line end for Netty's decoder
     * to wait for, so it used to hang until the header timeout. Now a 400 at once, counted, and the
     * real TLS client fails its handshake with the familiar "not TLS" error instead of a timeout.
     */
    @Test
    void aTlsHandshakeIsAnswered400AtOnceAndCounted() throws Exception {
        double before = errors(router, "malformed-http");
        byte[] clientHelloStart = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03, 0x03};
        RawHttp.Exchange exchange = RawHttp.exchange(port, clientHelloStart);
        assertRefusedAndClosed(exchange, 400, "TLS handshake", before);

        javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) javax.net.ssl.SSLContext.getDefault().getSocketFactory()
                .createSocket(java.net.InetAddress.getLoopbackAddress(), port);
        try (tls) {
            tls.setSoTimeout(5_000);
            org.junit.jupiter.api.Assertions.assertThrows(javax.net.ssl.SSLException.class, tls::startHandshake);
        }
        assertEquals(before + 2, errors(router, "malformed-http"));
        assertEquals(200, RawHttp.exchange(port, ascii("GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                .status(), "plain HTTP is untouched");
    }

    /**
     * A page in a browser on this machine posting to the router (a no-cors text/plain POST needs no
     * preflight, and the browser sends its Origin): refused before the body is read, counted, and no
     * model runs for it. API clients send no Origin and are untouched (every other test).
     */
    @Test
    void aBrowsersCrossSiteRequestIs403BeforeItsBodyIsRead() throws Exception {
        double before = errors(router, "forbidden-origin");
        double served = requests("nano", "200");
        String body = RouterFixture.chat(10).encode();
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost:"
                + port + "\r\nOrigin: http://attacker.example\r\nContent-Type: text/plain\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body));
        assertEquals(List.of("403"), exchange.statuses(), exchange.response());
        assertEquals(Problem.TYPE_BASE + "forbidden-origin", new JsonObject(exchange.body()).getString("type"));
        assertTrue(exchange.closedByServer());
        assertEquals(before + 1, errors(router, "forbidden-origin"));
        assertEquals(served, requests("nano", "200"), "nothing was served for it");
    }

    /** RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400; HTTP/1.0 may omit it. */
    @Test
    void anHttp11RequestWithoutHostIs400() throws Exception {
        double before = errors(router, "malformed-http");
        RawHttp.Exchange exchange = RawHttp.exchange(port, ascii("GET /v1/models HTTP/1.1\r\n\r\n"));
        assertRefusedAndClosed(exchange, 400, "needs a Host header", before);
        RawHttp.Exchange http10 = RawHttp.exchange(port, ascii("GET /v1/models HTTP/1.0\r\n\r\n"));
        assertEquals(200, http10.status(), http10.response());
    }

    @Test
    void chunkedBodyOverTheLimitIs413() throws Exception {
        String head = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
        String chunk = Integer.toHexString(1024) + "\r\n" + "z".repeat(1024) + "\r\n";
        List<byte[]> parts = new ArrayList<>();
        parts.add(ascii(head));
        for (int i = 0; i < 2 * RouterFixture.MAX_BODY / 1024; i++) {
            parts.add(ascii(chunk));
        }
        RawHttp.Exchange exchange = RawHttp.exchange(port, parts.toArray(new byte[0][]));
        assertEquals(413, exchange.status(), exchange.response());
        assertEquals(Problem.TYPE_BASE + "body-too-large", new JsonObject(exchange.body()).getString("type"));
        assertTrue(exchange.closedByServer());
    }

    @Test
    void aBodyJustUnderTheLimitIsServed(VertxTestContext ctx) {
        JsonObject body = RouterFixture.chat(0);
        int overhead = body.toBuffer().length();
        JsonObject atLimit = RouterFixture.chat((int) RouterFixture.MAX_BODY - overhead);
        assertEquals(RouterFixture.MAX_BODY, atLimit.toBuffer().length());
        RouterFixture.post(client, port, "/v1/chat/completions", atLimit)
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertEquals(200, reply.status());
                    assertEquals("large", reply.header(HEADER_ASSIGNED_TIER));
                    assertFalse(reply.header(HEADER_SCORE).isEmpty());
                    ctx.completeNow();
                })));
    }

    static void assertProblem(RouterFixture.Reply reply, int status, String slug) {
        assertEquals(status, reply.status(), reply.body().toString());
        assertEquals(Problem.CONTENT_TYPE, reply.header("Content-Type"));
        JsonObject problem = reply.json();
        assertEquals(Problem.TYPE_BASE + slug, problem.getString("type"));
        assertEquals(status, problem.getInteger("status"));
        assertNotNull(problem.getString("title"));
        assertNotNull(problem.getString("detail"));
    }
}
