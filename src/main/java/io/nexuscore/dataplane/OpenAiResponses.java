package io.nexuscore.dataplane;

import io.nexuscore.tiers.TierReply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicLong;

/** Renders tier replies in the OpenAI response schema (the task endpoint uses the completion shape). */
final class OpenAiResponses {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private OpenAiResponses() {
    }

    static JsonObject render(Endpoint endpoint, TierReply reply) {
        long created = System.currentTimeMillis() / 1000;
        JsonObject usage = new JsonObject()
                .put("prompt_tokens", reply.promptTokens())
                .put("completion_tokens", reply.completionTokens())
                .put("total_tokens", reply.promptTokens() + reply.completionTokens());
        if (endpoint.kind() == Endpoint.Kind.CHAT) {
            return new JsonObject()
                    .put("id", "chatcmpl-nx" + SEQUENCE.incrementAndGet())
                    .put("object", "chat.completion")
                    .put("created", created)
                    .put("model", reply.model())
                    .put("choices", new JsonArray().add(new JsonObject()
                            .put("index", 0)
                            .put("message", new JsonObject().put("role", "assistant").put("content", reply.text()))
                            .put("finish_reason", "stop")))
                    .put("usage", usage);
        }
        JsonObject completion = new JsonObject()
                .put("id", "cmpl-nx" + SEQUENCE.incrementAndGet())
                .put("object", "text_completion")
                .put("created", created)
                .put("model", reply.model())
                .put("choices", new JsonArray().add(new JsonObject()
                        .put("index", 0)
                        .put("text", reply.text())
                        .putNull("logprobs")
                        .put("finish_reason", "stop")))
                .put("usage", usage);
        if (endpoint.kind() == Endpoint.Kind.TASK) {
            completion.put("task", endpoint.task());
        }
        return completion;
    }

    /**
     * A whole reply as an OpenAI event stream (one chunk, then [DONE]), for {@code stream: true}
     * on tiers that cannot stream: clients written for streaming still work.
     */
    static String renderAsEventStream(Endpoint endpoint, TierReply reply) {
        JsonObject whole = render(endpoint, reply);
        JsonObject chunk = whole.copy();
        JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
        if (endpoint.kind() == Endpoint.Kind.CHAT) {
            chunk.put("object", "chat.completion.chunk");
            choice.remove("message");
            choice.put("delta", new JsonObject().put("role", "assistant").put("content", reply.text()));
        }
        return "data: " + chunk.encode() + "\n\ndata: [DONE]\n\n";
    }

    static JsonObject models(Iterable<JsonObject> entries) {
        JsonArray data = new JsonArray();
        entries.forEach(data::add);
        return new JsonObject().put("object", "list").put("data", data);
    }
}
