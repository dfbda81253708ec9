package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.Sdks;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The Responses and Messages APIs with the official SDKs as clients (npm {@code openai} and
 * {@code @anthropic-ai/sdk}, PyPI {@code openai} and {@code anthropic}): plain and streamed, the
 * streams read through each SDK's own helper (final response / final message). What each SDK reads
 * is compared with what the router's chat endpoint answers for the same instructions and input, so
 * the translation is checked against the tier itself: the text and the prompt's token count.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ApiSdkSuite {

    static final String INSTRUCTIONS = "You answer briefly";
    static final String INPUT = "Count the words in this sentence please";

    static final String EMBEDDINGS_MODEL = "nexus-embed";

    private Vertx vertx;
    /** A real local OpenAI-compatible server: the embeddings target (and, for upstream tiers, the tiers' upstream). */
    LocalOpenAiServer mock;
    private SdkRouters router;

    /** The router under test, its embeddings target given by {@link #embeddingsConfig}. */
    abstract SdkRouters startRouter(LocalOpenAiServer mock);

    @BeforeAll
    void start() {
        Sdks.requireInstalled();
        vertx = Vertx.vertx();
        mock = LocalOpenAiServer.start(vertx).await();
        router = startRouter(mock);
    }

    @AfterAll
    void stop() {
        try {
            if (router != null) {
                router.close();
            }
        } finally {
            if (vertx != null) {
                vertx.close().await();
            }
        }
    }

    SdkRouters router() {
        return router;
    }

    /** The top-level config that points the router's embeddings at {@code mock}. */
    static JsonObject embeddingsConfig(LocalOpenAiServer mock) {
        return new JsonObject().put("embeddings", new JsonObject().put("model", EMBEDDINGS_MODEL)
                .put("upstream", new JsonObject().put("baseUrl", mock.baseUrl("emb")).put("model", "upstream-embed")));
    }

    /** Checks particular to the tier kind, after the SDK's reads were compared with the chat's. */
    void tierChecks(JsonObject seen) {
    }

    private static final String PY_RESPONSES = """
            import json, openai
            c = openai.OpenAI()
            I = "%s"; P = "%s"
            r = c.responses.create(model="nexus", instructions=I, input=P, max_output_tokens=64)
            with c.responses.stream(model="nexus", instructions=I, max_output_tokens=64,
                                    input=[{"role": "user", "content": [{"type": "input_text", "text": P}]}]) as s:
                deltas = "".join(e.delta for e in s if e.type == "response.output_text.delta")
                f = s.get_final_response()
            print(json.dumps({"plain": r.output_text, "plainIn": r.usage.input_tokens, "plainOut": r.usage.output_tokens,
                              "streamed": f.output_text, "deltas": deltas, "streamedIn": f.usage.input_tokens,
                              "status": f.status}))
            """.formatted(INSTRUCTIONS, INPUT);

    private static final String NODE_RESPONSES = """
            import OpenAI from "openai";
            const c = new OpenAI();
            const I = "%s", P = "%s";
            const r = await c.responses.create({ model: "nexus", instructions: I, input: P, max_output_tokens: 64 });
            const s = c.responses.stream({ model: "nexus", instructions: I, max_output_tokens: 64,
                                           input: [{ role: "user", content: [{ type: "input_text", text: P }] }] });
            let deltas = "";
            for await (const e of s) if (e.type === "response.output_text.delta") deltas += e.delta;
            const f = await s.finalResponse();
            console.log(JSON.stringify({ plain: r.output_text, plainIn: r.usage.input_tokens, plainOut: r.usage.output_tokens,
                                         streamed: f.output_text, deltas, streamedIn: f.usage.input_tokens, status: f.status }));
            """.formatted(INSTRUCTIONS, INPUT);

    private static final String PY_MESSAGES = """
            import json, anthropic
            c = anthropic.Anthropic()
            I = "%s"; P = "%s"
            m = c.messages.create(model="nexus", max_tokens=64, system=I, messages=[{"role": "user", "content": P}])
            with c.messages.stream(model="nexus", max_tokens=64, system=[{"type": "text", "text": I}],
                                   messages=[{"role": "user", "content": [{"type": "text", "text": P}]}]) as s:
                deltas = "".join(s.text_stream)
                f = s.get_final_message()
            print(json.dumps({"plain": m.content[0].text, "plainIn": m.usage.input_tokens, "plainOut": m.usage.output_tokens,
                              "streamed": f.content[0].text, "deltas": deltas, "streamedIn": f.usage.input_tokens,
                              "status": f.stop_reason}))
            """.formatted(INSTRUCTIONS, INPUT);

    private static final String NODE_MESSAGES = """
            import Anthropic from "@anthropic-ai/sdk";
            const c = new Anthropic();
            const I = "%s", P = "%s";
            const m = await c.messages.create({ model: "nexus", max_tokens: 64, system: I, messages: [{ role: "user", content: P }] });
            const s = c.messages.stream({ model: "nexus", max_tokens: 64, system: [{ type: "text", text: I }],
                                          messages: [{ role: "user", content: [{ type: "text", text: P }] }] });
            let deltas = "";
            s.on("text", (t) => { deltas += t; });
            const f = await s.finalMessage();
            console.log(JSON.stringify({ plain: m.content[0].text, plainIn: m.usage.input_tokens, plainOut: m.usage.output_tokens,
                                         streamed: f.content[0].text, deltas, streamedIn: f.usage.input_tokens, status: f.stop_reason }));
            """.formatted(INSTRUCTIONS, INPUT);

    private static final String PY_EMBEDDINGS = """
            import json, openai
            c = openai.OpenAI()
            d = c.embeddings.create(model="%1$s", input=["abcd", "abcdefgh"], dimensions=3)
            f = c.embeddings.create(model="%1$s", input="abcdefghijkl", encoding_format="float")
            print(json.dumps({"model": d.model, "vectors": [e.embedding for e in d.data], "single": f.data[0].embedding,
                              "tokens": d.usage.prompt_tokens}))
            """.formatted(EMBEDDINGS_MODEL);

    private static final String NODE_EMBEDDINGS = """
            import OpenAI from "openai";
            const c = new OpenAI();
            const d = await c.embeddings.create({ model: "%1$s", input: ["abcd", "abcdefgh"], dimensions: 3 });
            const f = await c.embeddings.create({ model: "%1$s", input: "abcdefghijkl", encoding_format: "float" });
            console.log(JSON.stringify({ model: d.model, vectors: d.data.map((e) => e.embedding), single: f.data[0].embedding,
                                         tokens: d.usage.prompt_tokens }));
            """.formatted(EMBEDDINGS_MODEL);

    private static final String PY_MODELS = """
            import json, openai
            print(json.dumps(sorted(m.id for m in openai.OpenAI().models.list())))
            """;

    private static final String NODE_MODELS = """
            import OpenAI from "openai";
            const ids = [];
            for await (const m of new OpenAI().models.list()) ids.push(m.id);
            console.log(JSON.stringify(ids.sort()));
            """;

    @Test
    void pythonOpenAiSdkUsesTheResponsesApi() throws Exception {
        check(Sdks.python(PY_RESPONSES, router().env()), "completed");
    }

    @Test
    void nodeOpenAiSdkUsesTheResponsesApi() throws Exception {
        check(Sdks.node(NODE_RESPONSES, router().env()), "completed");
    }

    @Test
    void pythonAnthropicSdkUsesTheMessagesApi() throws Exception {
        check(Sdks.python(PY_MESSAGES, router().env()), "end_turn");
    }

    @Test
    void nodeAnthropicSdkUsesTheMessagesApi() throws Exception {
        check(Sdks.node(NODE_MESSAGES, router().env()), "end_turn");
    }

    @Test
    void bothOpenAiSdksListTheModels() throws Exception {
        JsonArray expected = chatModels();
        for (Sdks.Result result : new Sdks.Result[] {Sdks.python(PY_MODELS, router().env()),
                Sdks.node(NODE_MODELS, router().env())}) {
            assertTrue(result.ok(), result.describe());
            String[] lines = result.stdout().strip().split("\n");
            JsonArray ids = new JsonArray(lines[lines.length - 1]);
            assertEquals(expected, ids, "the SDK lists every model a client may name");
        }
    }

    @Test
    void bothOpenAiSdksGetEmbeddingsFromTheTarget() {
        for (Sdks.Result result : new Sdks.Result[] {Sdks.python(PY_EMBEDDINGS, router().env()),
                Sdks.node(NODE_EMBEDDINGS, router().env())}) {
            assertTrue(result.ok(), result.describe());
            JsonObject seen = ChatSdkTest.lastJsonLine(result.stdout());
            assertEquals(EMBEDDINGS_MODEL, seen.getString("model"), "the listed model, not the upstream's: " + seen);
            JsonArray vectors = seen.getJsonArray("vectors");
            // The mock's k-th value is the input's length / (k+1); the SDKs decode base64 by default.
            assertVector(new double[] {4, 2, 4 / 3.0}, vectors.getJsonArray(0), seen);
            assertVector(new double[] {8, 4, 8 / 3.0}, vectors.getJsonArray(1), seen);
            assertVector(new double[] {12, 6, 4, 3}, seen.getJsonArray("single"), seen);
            assertEquals(3, seen.getInteger("tokens"), seen.encode());
        }
        JsonObject forwarded = mock.bodies().stream().filter(b -> "upstream-embed".equals(b.getString("model")))
                .reduce((a, b) -> b).orElseThrow();
        assertEquals("float", forwarded.getString("encoding_format"), "the client's encoding_format went upstream");
    }

    private static void assertVector(double[] expected, JsonArray actual, JsonObject seen) {
        assertEquals(expected.length, actual.size(), seen.encode());
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], ((Number) actual.getValue(i)).doubleValue(), 1e-5, seen.encode());
        }
    }

    @Test
    void embeddingsWithABadInputAreAProblem() throws Exception {
        HttpResponse<String> response = post("/embeddings", new JsonObject().put("model", EMBEDDINGS_MODEL)
                .put("input", new JsonArray()));
        assertEquals(400, response.statusCode(), response.body());
        assertEquals("application/problem+json", response.headers().firstValue("Content-Type").orElse(""));
        assertEquals("https://nexuscore.io/problems/invalid-request", new JsonObject(response.body()).getString("type"));
    }

    @Test
    void refusedFeaturesAreNamedNotDropped() throws Exception {
        HttpResponse<String> responses = post("/responses", new JsonObject().put("model", "nexus").put("input", "hi")
                .put("previous_response_id", "resp_123"));
        assertEquals(400, responses.statusCode(), responses.body());
        JsonObject problem = new JsonObject(responses.body());
        assertEquals("https://nexuscore.io/problems/unsupported-feature", problem.getString("type"));
        assertTrue(problem.getString("detail").contains("previous_response_id"), problem.encode());
        HttpResponse<String> messages = post("/messages", new JsonObject().put("model", "nexus").put("max_tokens", 10)
                .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", new JsonArray()
                        .add(new JsonObject().put("type", "image").put("source", new JsonObject()))))));
        assertEquals(400, messages.statusCode(), messages.body());
        assertTrue(new JsonObject(messages.body()).getString("detail").contains("messages[0].content[0] is a image block"),
                messages.body());
    }

    HttpResponse<String> post(String path, JsonObject body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(router().openAiBaseUrl() + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The model ids the router's models list must hold, sorted. */
    abstract JsonArray chatModels();

    private void check(Sdks.Result result, String status) throws Exception {
        assertTrue(result.ok(), result.describe());
        JsonObject seen = ChatSdkTest.lastJsonLine(result.stdout());
        JsonObject chat = chatReference();
        String expected = chat.getJsonArray("choices").getJsonObject(0).getJsonObject("message").getString("content");
        assertFalse(expected.isEmpty(), chat.encode());
        assertEquals(expected, seen.getString("plain"), "the plain answer is the tier's chat answer: " + seen);
        assertEquals(expected, seen.getString("streamed"), "the stream helper's final text: " + seen);
        assertEquals(expected, seen.getString("deltas"), "the text deltas add up to the text: " + seen);
        int promptTokens = chat.getJsonObject("usage").getInteger("prompt_tokens");
        assertEquals(promptTokens, seen.getInteger("plainIn"), "input tokens as the tier counted the chat: " + seen);
        assertEquals(promptTokens, seen.getInteger("streamedIn"), "the stream's usage: " + seen);
        assertEquals(chat.getJsonObject("usage").getInteger("completion_tokens"), seen.getInteger("plainOut"), seen.encode());
        assertEquals(status, seen.getString("status"), seen.encode());
        tierChecks(seen);
    }

    /** The router's chat answer to the same instructions and input. */
    JsonObject chatReference() throws Exception {
        // "user" marks it for tierChecks: an upstream tier forwards a chat as it came.
        JsonObject body = new JsonObject().put("model", "nexus").put("max_tokens", 64).put("user", "reference")
                .put("messages", new JsonArray()
                .add(new JsonObject().put("role", "system").put("content", INSTRUCTIONS))
                .add(new JsonObject().put("role", "user").put("content", INPUT)));
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create(router().openAiBaseUrl() + "/chat/completions"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return new JsonObject(response.body());
    }
}
