package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ChatRequestBodyTest {

    private static final String NASTY = "say \"hi\"\\n\n\t\u0001 über 日本 \uD83D\uDE00";

    private static JsonObject expected(String model, String prompt) {
        return new JsonObject().put("model", model)
                .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", prompt)));
    }

    @Test
    void escapesPromptAndModelAndAddsOnlyTheFieldsSet() {
        ChatRequestBody body = new ChatRequestBody("m\"odel");
        assertEquals(expected("m\"odel", NASTY),
                new JsonObject(body.encode(TierRequest.of("chat", NASTY), false)));
        assertEquals(expected("m\"odel", "").put("max_tokens", 7).put("stream", true)
                        .put("stream_options", new JsonObject().put("include_usage", true)),
                new JsonObject(body.encode(new TierRequest("chat", "", 7, TierRequest.Simulation.NONE), true)));
    }

    /** A real client's chat request: system prompt, turns, tools, sampling options, its own spacing. */
    private static final String CLIENT = "{ \"model\" : \"gpt-4o\",\n  \"messages\": [{\"role\": \"system\", \"content\": \"Be terse.\"},"
            + " {\"role\":\"user\",\"content\":\"" + "Weather in \\\"Paris\\\"? \\u00fcber" + "\"},"
            + " {\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
            + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},"
            + " {\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"18 C\"}],\n"
            + "  \"tools\": [{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}],"
            + " \"temperature\" : 1e-3 , \"n\":2, \"user\": \"u-1\" }";

    private static TierRequest chat(String body) {
        return TierRequest.of("chat", "flattened prompt").withChatBody(Buffer.buffer(body));
    }

    @Test
    void aClientsChatIsForwardedWithOnlyTheModelChanged() {
        Buffer sent = new ChatRequestBody("upstream-m").encode(chat(CLIENT), false);
        assertEquals(new JsonObject(CLIENT).put("model", "upstream-m"), new JsonObject(sent));
        // Spliced, not re-encoded: the client's bytes around the model are there as it wrote them.
        String text = sent.toString();
        assertTrue(text.startsWith("{ \"model\" : \"upstream-m\",\n  \"messages\": [{\"role\": \"system\""), text);
        assertTrue(text.endsWith("\"temperature\" : 1e-3 , \"n\":2, \"user\": \"u-1\" }"), text);
    }

    /**
     * A client body in UTF-16 has no byte offsets to splice at (Jackson reads it as characters): it is
     * not spliced but sent as the router's own UTF-8 chat of the prompt, with the tier's model.
     */
    @Test
    void aChatInUtf16IsReEncodedNotCutApart() {
        TierRequest request = TierRequest.of("chat", "flattened prompt")
                .withChatBody(Buffer.buffer(CLIENT.getBytes(java.nio.charset.StandardCharsets.UTF_16LE)));
        JsonObject sent = new JsonObject(new ChatRequestBody("upstream-m").encode(request, false));
        assertEquals("upstream-m", sent.getString("model"));
        assertEquals("flattened prompt", sent.getJsonArray("messages").getJsonObject(0).getString("content"));
    }

    @Test
    void aStreamedChatAsksForTheUsageWhateverTheClientSaid() {
        ChatRequestBody body = new ChatRequestBody("m");
        JsonObject client = new JsonObject(CLIENT).put("stream", true);
        JsonObject expected = client.copy().put("model", "m").put("stream_options", new JsonObject().put("include_usage", true));
        assertEquals(expected, new JsonObject(body.encode(chat(client.encode()), true)));
        client.put("stream_options", new JsonObject().put("include_usage", false));
        assertEquals(expected, new JsonObject(body.encode(chat(client.encode()), true)));
        // Not streamed by the exchange: a stream flag in the body is turned off, never left on.
        assertEquals(new JsonObject(CLIENT).put("model", "m").put("stream", false),
                new JsonObject(body.encode(chat(new JsonObject(CLIENT).put("stream", true).encode()), false)));
        // ... and stream_options, which servers refuse without streaming, is null.
        assertEquals(new JsonObject(CLIENT).put("model", "m").putNull("stream_options"), new JsonObject(body.encode(chat(
                new JsonObject(CLIENT).put("stream_options", new JsonObject().put("include_usage", true)).encode()), false)));
    }

    @Test
    void aMissingModelIsAddedAndAnOddTopLevelGoesFlattened() {
        ChatRequestBody body = new ChatRequestBody("m");
        JsonObject noModel = new JsonObject(CLIENT);
        noModel.remove("model");
        assertEquals(noModel.copy().put("model", "m").put("stream", true)
                        .put("stream_options", new JsonObject().put("include_usage", true)),
                new JsonObject(body.encode(chat(noModel.encode()), true)));
        String repeated = "{\"model\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"model\":\"b\"}";
        assertEquals(expected("m", "flattened prompt"), new JsonObject(body.encode(chat(repeated), false)));
        assertEquals(expected("m", "flattened prompt"), new JsonObject(body.encode(chat("{}"), false)));
    }
}
