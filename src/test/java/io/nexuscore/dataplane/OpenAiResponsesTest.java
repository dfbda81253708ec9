package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class OpenAiResponsesTest {

    /** Quotes, backslashes, control characters, non-ASCII and a surrogate pair: everything JSON escapes. */
    private static final String NASTY = "say \"hi\"\\n\n\t\u0001 über 日本 \uD83D\uDE00 </script>";

    /** The byte writer and the map-built document are the same JSON, for every endpoint shape. */
    @Test
    void bytesAreTheSameDocumentAsTheRenderedObject() {
        TierReply reply = new TierReply(NASTY, Tier.SMALL, 12, 34, "nexus-\"small\"");
        for (Endpoint endpoint : new Endpoint[] {new Endpoint(Endpoint.Kind.CHAT, "chat"),
                new Endpoint(Endpoint.Kind.COMPLETION, "completion"), new Endpoint(Endpoint.Kind.TASK, "sum\"marize")}) {
            JsonObject expected = OpenAiResponses.render(endpoint, reply);
            JsonObject actual = new JsonObject(OpenAiResponses.renderBytes(endpoint, reply));
            assertTrue(actual.getString("id").matches("(chatcmpl|cmpl)-nx\\d+"), actual.getString("id"));
            assertTrue(Math.abs(actual.getLong("created") - expected.getLong("created")) <= 1);
            for (JsonObject doc : new JsonObject[] {expected, actual}) {
                doc.remove("id");
                doc.remove("created");
            }
            assertEquals(expected, actual, endpoint.kind().toString());
        }
    }
}
