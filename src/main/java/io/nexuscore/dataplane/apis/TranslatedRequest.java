package io.nexuscore.dataplane.apis;

import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * A request of another API (OpenAI Responses, Anthropic Messages) as the chat the tier runs.
 *
 * @param api       the API the client speaks, which the answer is rendered in
 * @param prompt    the text the tier scores and the guests count: instructions / system first, then
 *                  every message's text, joined by "\n" as chat contents are
 * @param system    the instructions (Responses) or system text (Messages), null when none
 * @param chat      the equivalent chat completions request, forwarded to an upstream tier
 * @param maxTokens the output limit the client set, 0 when none
 * @param stream    the client asked for the API's server-sent events
 * @param model     the model the client named (traces only), null when absent
 */
public record TranslatedRequest(Api api, String prompt, String system, JsonObject chat, int maxTokens, boolean stream, String model) {

    public enum Api { RESPONSES, MESSAGES }

    /** An answer in the client's API: JSON, or its server-sent events when the client asked to stream. */
    public record Rendered(String contentType, String body) {
    }

    public TranslatedRequest {
        Objects.requireNonNull(api, "api");
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(chat, "chat");
        if (maxTokens < 0) {
            throw new IllegalArgumentException("maxTokens must be >= 0, got " + maxTokens);
        }
    }

    /** The tier's reply in the client's API. */
    public Rendered render(TierReply reply) {
        ChatAnswer answer = ChatAnswer.of(reply);
        if (stream) {
            return new Rendered("text/event-stream",
                    api == Api.RESPONSES ? ResponsesApi.events(answer, this) : MessagesApi.events(answer));
        }
        return new Rendered("application/json",
                (api == Api.RESPONSES ? ResponsesApi.response(answer, this) : MessagesApi.message(answer)).encode());
    }

    /**
     * For an upstream tier's streamed chat answer: its chunks turned into this API's events as they come.
     *
     * @param model the serving tier's model
     */
    public StreamTranslator streamTranslator(String model) {
        return new StreamTranslator(this, api == Api.RESPONSES ? ResponsesApi.newId() : MessagesApi.newId(), model);
    }
}
