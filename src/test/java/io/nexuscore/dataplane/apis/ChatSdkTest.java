package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.Sdks;
import io.vertx.core.json.JsonObject;
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
