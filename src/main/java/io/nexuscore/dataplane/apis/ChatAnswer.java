package io.nexuscore.dataplane.apis;

import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What a tier answered, read as a chat answer: the text, why it ended, the token counts. A Wasm tier's
 * reply carries the text itself; an upstream tier's carries the upstream's chat completion document,
 * read here for its first choice.
 *
 * @param finishReason the chat finish_reason ("stop", "length", ...)
 */
public record ChatAnswer(String text, String finishReason, int promptTokens, int completionTokens, String model) {

    public int totalTokens() {
        return (int) Math.min(Integer.MAX_VALUE, (long) promptTokens + completionTokens);
    }

    /** True when the answer ended at the output limit rather than on its own. */
    public boolean truncated() {
        return "length".equals(finishReason);
    }

    public static ChatAnswer of(TierReply reply) {
        String text = reply.text();
        String finish = "stop";
        if (reply.answer() != null && reply.answer().body() != null) {
            if (reply.answer().finishReason() != null) {
                finish = reply.answer().finishReason();
            }
            try {
                JsonObject doc = reply.answer().body().toJsonObject();
                if (doc.getValue("choices") instanceof JsonArray choices && !choices.isEmpty()
                        && choices.getValue(0) instanceof JsonObject choice
                        && choice.getValue("message") instanceof JsonObject message) {
                    text = message.getValue("content") instanceof String s ? s : "";
                }
            } catch (DecodeException | ClassCastException e) {
                // The tier checked the document when it read it; what it made of it (reply.text) stands.
            }
        }
        return new ChatAnswer(text == null ? "" : text, finish, reply.promptTokens(), reply.completionTokens(),
                reply.model());
    }
}
