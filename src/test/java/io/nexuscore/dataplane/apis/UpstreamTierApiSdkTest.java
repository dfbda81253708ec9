package io.nexuscore.dataplane.apis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * {@link ApiSdkSuite} against a router whose tiers forward to an OpenAI-compatible upstream (a real
 * local server): the Responses and Messages requests reach it as chat completions, and its chat
 * answers go back in the client's API.
 */
class UpstreamTierApiSdkTest extends ApiSdkSuite {

    @Override
    SdkRouters startRouter(LocalOpenAiServer mock) {
        return SdkRouters.upstream(mock, new JsonObject(), embeddingsConfig(mock));
    }

    @Override
    JsonArray chatModels() {
        return new JsonArray(List.of(EMBEDDINGS_MODEL, "nexus-large", "nexus-nano", "nexus-small",
                "upstream-large", "upstream-nano", "upstream-small"));
    }

    /** The upstream saw chats: the instructions / system text as the system message, the output limit as max_tokens. */
    @Override
    void tierChecks(JsonObject seen) {
        List<JsonObject> bodies = mock.bodies().stream().filter(b -> b.containsKey("messages") && !b.containsKey("user")).toList();
        assertTrue(bodies.size() >= 2, "the SDK's translated requests reached the upstream: " + bodies);
        assertTrue(seen.getString("plain").startsWith("served by "), seen.encode());
        JsonObject last = bodies.get(bodies.size() - 1);
        JsonArray messages = last.getJsonArray("messages");
        assertEquals(new JsonObject().put("role", "system").put("content", INSTRUCTIONS), messages.getJsonObject(0),
                last.encode());
        assertEquals(new JsonObject().put("role", "user").put("content", INPUT), messages.getJsonObject(1), last.encode());
        assertEquals(64, last.getInteger("max_tokens"), last.encode());
        assertTrue(last.getString("model").startsWith("upstream-"), "the tier's upstream model: " + last.encode());
    }
}
