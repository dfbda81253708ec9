package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

    /**
     * An upstream reports each count up to int's largest (larger ones saturate there): their sum, the
     * answer's total_tokens, saturates too, in both renderings. Before, it wrapped to a negative total.
     */
    @ParameterizedTest
    @CsvSource({
        "7, 2, 9",
        "2147483647, 1, 2147483647",
        "2000000000, 2000000000, 2147483647",
        "2147483647, 2147483647, 2147483647",
    })
    void totalTokensNeverWraps(int prompt, int completion, int total) {
        TierReply reply = new TierReply("t", Tier.LARGE, prompt, completion, "nexus-large");
        for (Endpoint endpoint : new Endpoint[] {new Endpoint(Endpoint.Kind.CHAT, "chat"),
                new Endpoint(Endpoint.Kind.COMPLETION, "completion"), new Endpoint(Endpoint.Kind.TASK, "summarize")}) {
            JsonObject bytes = new JsonObject(OpenAiResponses.renderBytes(endpoint, reply));
            assertEquals(total, bytes.getJsonObject("usage").getLong("total_tokens"), endpoint.kind().toString());
            assertEquals(total, OpenAiResponses.render(endpoint, reply).getJsonObject("usage").getLong("total_tokens"),
                    endpoint.kind().toString());
        }
    }
}
