package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Upstream chat chunks, cut anywhere (inside a character too), as Responses and Messages events. */
class StreamTranslatorTest {

    private static final String UPSTREAM = """
            data: {"id":"c","object":"chat.completion.chunk","model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":"Grüß "},"finish_reason":null}]}\r
            \r
            data: {"id":"c","object":"chat.completion.chunk","model":"up","choices":[{"index":0,"delta":{"content":"Gott"},"finish_reason":"length"}]}

            data: {"id":"c","object":"chat.completion.chunk","model":"up","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}

            data: [DONE]

            """;

    /** Every event the translator wrote, fed the upstream's bytes in pieces of {@code size}. */
    private static List<JsonObject> translate(TranslatedRequest request, int size) {
        StreamTranslator translator = request.streamTranslator("tier-model");
        byte[] bytes = UPSTREAM.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < bytes.length; i += size) {
            out.append(translator.feed(Buffer.buffer().appendBytes(bytes, i, Math.min(size, bytes.length - i))));
        }
        out.append(translator.finish());
        List<JsonObject> events = new ArrayList<>();
        for (String event : out.toString().split("\n\n")) {
            String[] lines = event.split("\n");
            JsonObject data = new JsonObject(lines[1].substring("data: ".length()));
            assertEquals("event: " + data.getString("type"), lines[0]);
            events.add(data);
        }
        return events;
    }

    @Test
    void responsesEventsCarryEachDeltaThenTheIncompleteResponseWithUsage() {
        TranslatedRequest request = ResponsesApi.parse(new JsonObject().put("input", "x").put("stream", true));
        for (int size : new int[] {1, 2, 7, 4096}) {
            List<JsonObject> events = translate(request, size);
            List<String> deltas = events.stream().filter(e -> e.getString("type").equals("response.output_text.delta"))
                    .map(e -> e.getString("delta")).toList();
            assertEquals(List.of("Grüß ", "Gott"), deltas, "size " + size);
            JsonObject last = events.get(events.size() - 1);
            assertEquals("response.incomplete", last.getString("type"), "finish_reason length: " + last);
            JsonObject response = last.getJsonObject("response");
            assertEquals("tier-model", response.getString("model"));
            assertEquals(12, response.getJsonObject("usage").getInteger("input_tokens"));
            assertEquals(3, response.getJsonObject("usage").getInteger("output_tokens"));
            assertEquals("Grüß Gott", response.getJsonArray("output").getJsonObject(0).getJsonArray("content")
                    .getJsonObject(0).getString("text"));
            for (int i = 0; i < events.size(); i++) {
                assertEquals(i, events.get(i).getInteger("sequence_number"));
            }
        }
    }

    @Test
    void messagesEventsCarryEachDeltaThenTheStopReasonAndUsage() {
        TranslatedRequest request = MessagesApi.parse(new JsonObject().put("max_tokens", 3).put("stream", true)
                .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "x"))));
        List<JsonObject> events = translate(request, 3);
        assertEquals(List.of("message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta",
                "content_block_stop", "message_delta", "message_stop"), events.stream().map(e -> e.getString("type")).toList());
        assertEquals("tier-model", events.get(0).getJsonObject("message").getString("model"));
        assertEquals("Gott", events.get(4).getJsonObject("delta").getString("text"));
        JsonObject delta = events.get(6);
        assertEquals("max_tokens", delta.getJsonObject("delta").getString("stop_reason"));
        assertEquals(new JsonObject().put("input_tokens", 12).put("output_tokens", 3), delta.getJsonObject("usage"));
    }
}
