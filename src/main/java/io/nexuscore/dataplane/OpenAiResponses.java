package io.nexuscore.dataplane;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicLong;

/** Renders tier replies in the OpenAI response schema (the task endpoint uses the completion shape). */
final class OpenAiResponses {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private OpenAiResponses() {
    }

    /**
     * {@link #render} written straight to bytes: the same document (the test compares them), without
     * building maps and running them through the generic encoder on every answer.
     */
    static Buffer renderBytes(Endpoint endpoint, TierReply reply) {
        long created = System.currentTimeMillis() / 1000;
        boolean chat = endpoint.kind() == Endpoint.Kind.CHAT;
        byte[] text = JsonStringEncoder.getInstance().quoteAsUTF8(reply.text());
        byte[] model = JsonStringEncoder.getInstance().quoteAsUTF8(reply.model());
        Buffer out = Buffer.buffer(256 + text.length + model.length);
        out.appendString(chat ? "{\"id\":\"chatcmpl-nx" : "{\"id\":\"cmpl-nx").appendString(Long.toString(SEQUENCE.incrementAndGet()))
                .appendString(chat ? "\",\"object\":\"chat.completion\",\"created\":" : "\",\"object\":\"text_completion\",\"created\":")
                .appendString(Long.toString(created))
                .appendString(",\"model\":\"").appendBytes(model)
                .appendString(chat ? "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\""
                        : "\",\"choices\":[{\"index\":0,\"text\":\"")
                .appendBytes(text)
                .appendString(chat ? "\"},\"finish_reason\":\"stop\"}]" : "\",\"logprobs\":null,\"finish_reason\":\"stop\"}]")
                .appendString(",\"usage\":{\"prompt_tokens\":").appendString(Integer.toString(reply.promptTokens()))
                .appendString(",\"completion_tokens\":").appendString(Integer.toString(reply.completionTokens()))
                .appendString(",\"total_tokens\":").appendString(Integer.toString(reply.promptTokens() + reply.completionTokens()))
                .appendString("}");
        if (endpoint.kind() == Endpoint.Kind.TASK) {
            out.appendString(",\"task\":\"").appendBytes(JsonStringEncoder.getInstance().quoteAsUTF8(endpoint.task()))
                    .appendString("\"");
        }
        return out.appendString("}");
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
    /** @param nexuscore the router's summary, added to the one chunk (it carries the usage too); null for none */
    static String renderAsEventStream(Endpoint endpoint, TierReply reply, JsonObject nexuscore) {
        JsonObject whole = render(endpoint, reply);
        JsonObject chunk = whole.copy();
        JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
        if (endpoint.kind() == Endpoint.Kind.CHAT) {
            chunk.put("object", "chat.completion.chunk");
            choice.remove("message");
            choice.put("delta", new JsonObject().put("role", "assistant").put("content", reply.text()));
        }
        if (nexuscore != null) {
            chunk.put("nexuscore", nexuscore);
        }
        return "data: " + chunk.encode() + "\n\ndata: [DONE]\n\n";
    }

    static JsonObject models(Iterable<JsonObject> entries) {
        JsonArray data = new JsonArray();
        entries.forEach(data::add);
        return new JsonObject().put("object", "list").put("data", data);
    }
}
