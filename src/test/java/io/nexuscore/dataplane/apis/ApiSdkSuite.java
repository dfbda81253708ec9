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

    abstract SdkRouters router();

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
        JsonObject body = new JsonObject().put("model", "nexus").put("max_tokens", 64).put("messages", new JsonArray()
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
