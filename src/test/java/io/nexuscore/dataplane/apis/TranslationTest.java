package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Responses and Messages shapes to a chat and back: the prompt the tier scores, what is refused, the answers. */
class TranslationTest {

    private static JsonObject json(String text) {
        return new JsonObject(text);
    }

    @Test
    void aResponsesRequestIsTheChatItsInstructionsAndInputMake() {
        TranslatedRequest r = ResponsesApi.parse(json("""
                {"model":"gpt-x","instructions":"Be brief","max_output_tokens":20,"temperature":0.2,
                 "input":[{"role":"developer","content":"Use French"},
                          {"type":"message","role":"user","content":[{"type":"input_text","text":"Bonjour "},
                                                                     {"type":"input_text","text":"le monde"}]}]}"""));
        assertEquals("Be brief\nUse French\nBonjour le monde", r.prompt(), "as chat flattens its messages");
        assertEquals(json("""
                {"model":"gpt-x","messages":[{"role":"system","content":"Be brief"},{"role":"system","content":"Use French"},
                 {"role":"user","content":"Bonjour le monde"}],"max_tokens":20,"temperature":0.2}"""), r.chat());
        assertEquals(20, r.maxTokens());
        assertEquals("Be brief", r.system());
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"input\":\"x\",\"previous_response_id\":\"resp_1\"}",
            "{\"input\":\"x\",\"conversation\":\"conv_1\"}",
            "{\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"}]}",
            "{\"input\":\"x\",\"reasoning\":{\"effort\":\"high\"}}",
            "{\"input\":\"x\",\"background\":true}",
            "{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\"}}}",
            "{\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"4\"}]}",
            "{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":\"http://x\"}]}]}"})
    void responsesFeaturesTheRouterCannotHonourAreRefusedByName(String body) {
        ProblemException e = assertThrows(ProblemException.class, () -> ResponsesApi.parse(json(body)));
        assertEquals(ProblemType.UNSUPPORTED_FEATURE, e.problem().kind(), e.problem().detail());
    }

    @ParameterizedTest
    @ValueSource(strings = {"{}", "{\"input\":[]}", "{\"input\":3}", "{\"input\":\"x\",\"max_output_tokens\":0}",
            "{\"input\":[{\"role\":\"tool\",\"content\":\"x\"}]}", "{\"input\":\"x\",\"stream\":\"yes\"}"})
    void malformedResponsesRequestsAreInvalid(String body) {
        ProblemException e = assertThrows(ProblemException.class, () -> ResponsesApi.parse(json(body)));
        assertEquals(ProblemType.INVALID_REQUEST, e.problem().kind(), e.problem().detail());
    }

    @Test
    void aMessagesRequestIsTheChatItsSystemAndMessagesMake() {
        TranslatedRequest r = MessagesApi.parse(json("""
                {"model":"claude","max_tokens":50,"system":[{"type":"text","text":"Be brief"}],"stop_sequences":["END"],
                 "messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":[{"type":"text","text":"Hello"}]},
                             {"role":"user","content":"Bye"}],"stream":true}"""));
        assertEquals("Be brief\nHi\nHello\nBye", r.prompt());
        assertEquals(json("""
                {"model":"claude","messages":[{"role":"system","content":"Be brief"},{"role":"user","content":"Hi"},
                 {"role":"assistant","content":"Hello"},{"role":"user","content":"Bye"}],"max_tokens":50,"stop":["END"]}"""),
                r.chat());
        assertTrue(r.stream());
    }

    @Test
    void messagesRefuseToolsAndNonTextBlocksAndNeedMaxTokens() {
        assertEquals(ProblemType.UNSUPPORTED_FEATURE, assertThrows(ProblemException.class, () -> MessagesApi.parse(json(
                "{\"max_tokens\":5,\"tools\":[{\"name\":\"t\"}],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}")))
                .problem().kind());
        assertEquals(ProblemType.UNSUPPORTED_FEATURE, assertThrows(ProblemException.class, () -> MessagesApi.parse(json(
                "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\"}]}]}")))
                .problem().kind());
        ProblemException missing = assertThrows(ProblemException.class, () -> MessagesApi.parse(json(
                "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}")));
        assertEquals(ProblemType.INVALID_REQUEST, missing.problem().kind());
        assertTrue(missing.problem().detail().contains("max_tokens"), missing.problem().detail());
    }

    @Test
    void anUpstreamAnswerCutAtTheLimitIsIncompleteAndMaxTokens() {
        Buffer upstream = json("""
                {"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,
                 "message":{"role":"assistant","content":"partial answ"},"finish_reason":"length"}],
                 "usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}""").toBuffer();
        TierReply reply = new TierReply("", Tier.SMALL, 13, 9, 4, "tier-model", new TierReply.Answer(upstream, "length"));
        TranslatedRequest responses = ResponsesApi.parse(json("{\"input\":\"x\",\"max_output_tokens\":4}"));
        JsonObject response = new JsonObject(responses.render(reply).body());
        assertEquals("incomplete", response.getString("status"));
        assertEquals("max_output_tokens", response.getJsonObject("incomplete_details").getString("reason"));
        assertEquals("partial answ", response.getJsonArray("output").getJsonObject(0).getJsonArray("content")
                .getJsonObject(0).getString("text"));
        assertEquals(new JsonObject().put("input_tokens", 9).put("input_tokens_details", new JsonObject().put("cached_tokens", 0))
                .put("output_tokens", 4).put("output_tokens_details", new JsonObject().put("reasoning_tokens", 0))
                .put("total_tokens", 13), response.getJsonObject("usage"));
        assertEquals("tier-model", response.getString("model"));

        TranslatedRequest messages = MessagesApi.parse(json(
                "{\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"));
        JsonObject message = new JsonObject(messages.render(reply).body());
        assertEquals("max_tokens", message.getString("stop_reason"));
        assertEquals(new JsonObject().put("input_tokens", 9).put("output_tokens", 4), message.getJsonObject("usage"));
    }

    @Test
    void streamedResponsesAreNumberedTypedEventsEndingInCompleted() {
        TierReply reply = new TierReply("four words of text", Tier.NANO, 5, 4, "nexus-nano");
        TranslatedRequest request = ResponsesApi.parse(json("{\"input\":\"x\",\"stream\":true}"));
        TranslatedRequest.Rendered rendered = request.render(reply);
        assertEquals("text/event-stream", rendered.contentType());
        String[] events = rendered.body().strip().split("\\n\\n");
        JsonArray types = new JsonArray();
        for (int i = 0; i < events.length; i++) {
            String[] lines = events[i].split("\\n");
            JsonObject data = new JsonObject(lines[1].substring("data: ".length()));
            assertEquals("event: " + data.getString("type"), lines[0]);
            assertEquals(i, data.getInteger("sequence_number"));
            types.add(data.getString("type"));
        }
        assertEquals(new JsonArray().add("response.created").add("response.in_progress").add("response.output_item.added")
                .add("response.content_part.added").add("response.output_text.delta").add("response.output_text.done")
                .add("response.content_part.done").add("response.output_item.done").add("response.completed"), types);
        assertNull(new JsonObject(events[0].split("\\n")[1].substring(6)).getJsonObject("response").getValue("usage"));
    }
}
