package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.tiers.TierRequest;
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
}
