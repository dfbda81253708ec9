package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.Sdks;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The official OpenAI SDKs (Python {@code openai}, npm {@code openai}) as clients of a router whose
 * tiers run Wasm guests: chat completions, plain and streamed. Each script prints one JSON line with
 * what the SDK handed back; the assertions are on that.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChatSdkTest {

    private SdkRouters router;

    @BeforeAll
    void start() {
        Sdks.requireInstalled();
        router = SdkRouters.wasm();
    }

    @AfterAll
    void stop() {
        if (router != null) {
            router.close();
        }
    }

    private static final String PYTHON = """
            import json, openai
            c = openai.OpenAI()
            r = c.chat.completions.create(model="nexus", messages=[{"role": "user", "content": "Count the words in this sentence please"}])
            text = ""
            usage = None
            chunks = 0
            for ch in c.chat.completions.create(model="nexus", stream=True, stream_options={"include_usage": True},
                                                messages=[{"role": "user", "content": "Count the words in this sentence please"}]):
                chunks += 1
                if ch.choices:
                    text += ch.choices[0].delta.content or ""
                if ch.usage:
                    usage = ch.usage.prompt_tokens
            print(json.dumps({"plain": r.choices[0].message.content, "plainUsage": r.usage.prompt_tokens,
                              "model": r.model, "streamed": text, "streamedUsage": usage, "chunks": chunks}))
            """;

    private static final String NODE = """
            import OpenAI from "openai";
            const c = new OpenAI();
            const messages = [{ role: "user", content: "Count the words in this sentence please" }];
            const r = await c.chat.completions.create({ model: "nexus", messages });
            let text = "", usage = null, chunks = 0;
            const stream = await c.chat.completions.create({ model: "nexus", messages, stream: true,
                                                             stream_options: { include_usage: true } });
            for await (const ch of stream) {
              chunks++;
              if (ch.choices.length) text += ch.choices[0].delta.content ?? "";
              if (ch.usage) usage = ch.usage.prompt_tokens;
            }
            console.log(JSON.stringify({ plain: r.choices[0].message.content, plainUsage: r.usage.prompt_tokens,
                                         model: r.model, streamed: text, streamedUsage: usage, chunks }));
            """;

    @Test
    void pythonSdkChatsPlainAndStreamed() {
        check(Sdks.python(PYTHON, router.env()));
    }

    @Test
    void nodeSdkChatsPlainAndStreamed() {
        check(Sdks.node(NODE, router.env()));
    }

    /** OpenAI's shape: content chunks carry usage: null; the usage comes in a last chunk of its own, choices []. */
    @Test
    void aStreamWithIncludeUsageEndsWithAUsageChunkOfItsOwn() throws Exception {
        JsonObject chat = new JsonObject().put("model", "nexus").put("stream", true)
                .put("stream_options", new JsonObject().put("include_usage", true))
                .put("messages", new io.vertx.core.json.JsonArray().add(new JsonObject().put("role", "user")
                        .put("content", "Count the words in this sentence please")));
        HttpResponse<String> response = post("/chat/completions", chat);
        assertEquals(200, response.statusCode(), response.body());
        String[] events = response.body().strip().split("\n\n");
        assertEquals("data: [DONE]", events[events.length - 1], response.body());
        JsonObject last = new JsonObject(events[events.length - 2].substring("data: ".length()));
        assertEquals(0, last.getJsonArray("choices").size(), "the usage chunk has no choices: " + last);
        assertEquals(7, last.getJsonObject("usage").getInteger("prompt_tokens"), last.encode());
        assertEquals("user", last.getJsonObject("nexuscore").getString("route_source"), "the router's summary rides on it");
        for (int i = 0; i < events.length - 2; i++) {
            JsonObject content = new JsonObject(events[i].substring("data: ".length()));
            assertTrue(content.containsKey("usage") && content.getValue("usage") == null,
                    "a content chunk says usage: null: " + content);
            assertEquals(1, content.getJsonArray("choices").size(), content.encode());
        }
        // Without include_usage no chunk carries usage at all.
        HttpResponse<String> plain = post("/chat/completions", chat.copy().put("stream_options",
                new JsonObject().put("include_usage", false)));
        assertTrue(!plain.body().contains("\"usage\""), plain.body());
    }

    @Test
    void embeddingsWithoutATargetAreNotFound() throws Exception {
        HttpResponse<String> response = post("/embeddings", new JsonObject().put("model", "x").put("input", "hello"));
        assertEquals(404, response.statusCode(), response.body());
        JsonObject problem = new JsonObject(response.body());
        assertEquals("https://nexuscore.io/problems/not-found", problem.getString("type"));
        assertTrue(problem.getString("detail").contains("embeddings.upstream"), problem.encode());
    }

    private HttpResponse<String> post(String path, JsonObject body) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(router.openAiBaseUrl() + path))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void check(Sdks.Result result) {
        assertTrue(result.ok(), result.describe());
        JsonObject seen = lastJsonLine(result.stdout());
        String plain = seen.getString("plain");
        assertTrue(plain != null && !plain.isEmpty(), "the SDK read an answer: " + seen);
        assertEquals(plain, seen.getString("streamed"), "the streamed text is the plain answer's: " + seen);
        // The guests count cl100k tokens of the prompt: seven words, seven tokens.
        assertEquals(7, seen.getInteger("plainUsage"), seen.encode());
        assertEquals(7, seen.getInteger("streamedUsage"), "the usage chunk reached the SDK: " + seen);
    }

    static JsonObject lastJsonLine(String stdout) {
        String[] lines = stdout.strip().split("\n");
        return new JsonObject(lines[lines.length - 1]);
    }
}
