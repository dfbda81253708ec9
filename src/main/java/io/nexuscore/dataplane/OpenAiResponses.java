package io.nexuscore.dataplane;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/** Renders tier replies in the OpenAI response schema (the task endpoint uses the completion shape). */
final class OpenAiResponses {

    private static final AtomicLong SEQUENCE = new AtomicLong();

    /* renderBytes' fixed fragments, encoded once. */
    private static final byte[] CHAT_ID = ascii("{\"id\":\"chatcmpl-nx");
    private static final byte[] COMPLETION_ID = ascii("{\"id\":\"cmpl-nx");
    private static final byte[] CHAT_OBJECT = ascii("\",\"object\":\"chat.completion\",\"created\":");
    private static final byte[] COMPLETION_OBJECT = ascii("\",\"object\":\"text_completion\",\"created\":");
    private static final byte[] MODEL = ascii(",\"model\":\"");
    private static final byte[] CHAT_CHOICE = ascii("\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
    private static final byte[] COMPLETION_CHOICE = ascii("\",\"choices\":[{\"index\":0,\"text\":\"");
    private static final byte[] CHAT_CHOICE_END = ascii("\"},\"finish_reason\":\"stop\"}]");
    private static final byte[] COMPLETION_CHOICE_END = ascii("\",\"logprobs\":null,\"finish_reason\":\"stop\"}]");
    private static final byte[] PROMPT_TOKENS = ascii(",\"usage\":{\"prompt_tokens\":");
    private static final byte[] COMPLETION_TOKENS = ascii(",\"completion_tokens\":");
    private static final byte[] TOTAL_TOKENS = ascii(",\"total_tokens\":");
    private static final byte[] TASK = ascii(",\"task\":\"");

    /** The {@code created} second as ASCII, rendered once a second instead of once an answer. */
    private record CreatedSecond(long second, byte[] ascii) {
    }

    private static volatile CreatedSecond lastCreated = new CreatedSecond(-1, new byte[0]);

    private static byte[] createdAscii(long second) {
        CreatedSecond c = lastCreated;
        if (c.second() != second) {
            c = new CreatedSecond(second, ascii(Long.toString(second)));
            lastCreated = c; // racing loops may each render it: same bytes
        }
        return c.ascii();
    }

    private static byte[] ascii(String fragment) {
        return fragment.getBytes(StandardCharsets.US_ASCII);
    }

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
        out.appendBytes(chat ? CHAT_ID : COMPLETION_ID).appendString(Long.toString(SEQUENCE.incrementAndGet()))
                .appendBytes(chat ? CHAT_OBJECT : COMPLETION_OBJECT)
                .appendBytes(createdAscii(created))
                .appendBytes(MODEL).appendBytes(model)
                .appendBytes(chat ? CHAT_CHOICE : COMPLETION_CHOICE)
                .appendBytes(text)
                .appendBytes(chat ? CHAT_CHOICE_END : COMPLETION_CHOICE_END)
                .appendBytes(PROMPT_TOKENS).appendString(Integer.toString(reply.promptTokens()))
                .appendBytes(COMPLETION_TOKENS).appendString(Integer.toString(reply.completionTokens()))
                .appendBytes(TOTAL_TOKENS).appendString(Integer.toString(reply.totalTokens()))
                .appendByte((byte) '}');
        if (endpoint.kind() == Endpoint.Kind.TASK) {
            out.appendBytes(TASK).appendBytes(JsonStringEncoder.getInstance().quoteAsUTF8(endpoint.task()))
                    .appendByte((byte) '"');
        }
        return out.appendByte((byte) '}');
    }

    static JsonObject render(Endpoint endpoint, TierReply reply) {
        long created = System.currentTimeMillis() / 1000;
        JsonObject usage = new JsonObject()
                .put("prompt_tokens", reply.promptTokens())
                .put("completion_tokens", reply.completionTokens())
                .put("total_tokens", reply.totalTokens());
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
     * A whole reply as an OpenAI event stream, for {@code stream: true} on tiers that cannot stream:
     * clients written for streaming still work. One content chunk (role, the whole text, the finish
     * reason); with {@code includeUsage} it carries {@code usage: null} and is followed, as OpenAI
     * does it, by a chunk of its own with empty {@code choices}, the {@code usage} and the router's
     * summary; without it the summary rides on the content chunk and no usage is sent. Then [DONE].
     *
     * @param nexuscore the router's summary; null for none
     */
    static String renderAsEventStream(Endpoint endpoint, TierReply reply, JsonObject nexuscore, boolean includeUsage) {
        JsonObject chunk = render(endpoint, reply);
        JsonObject usage = (JsonObject) chunk.remove("usage");
        JsonObject choice = chunk.getJsonArray("choices").getJsonObject(0);
        if (endpoint.kind() == Endpoint.Kind.CHAT) {
            chunk.put("object", "chat.completion.chunk");
            choice.remove("message");
            choice.put("delta", new JsonObject().put("role", "assistant").put("content", reply.text()));
        }
        if (!includeUsage) {
            if (nexuscore != null) {
                chunk.put("nexuscore", nexuscore);
            }
            return "data: " + chunk.encode() + "\n\ndata: [DONE]\n\n";
        }
        chunk.putNull("usage");
        JsonObject last = chunk.copy().put("choices", new JsonArray()).put("usage", usage);
        if (nexuscore != null) {
            last.put("nexuscore", nexuscore);
        }
        return "data: " + chunk.encode() + "\n\ndata: " + last.encode() + "\n\ndata: [DONE]\n\n";
    }

    static JsonObject models(Iterable<JsonObject> entries) {
        JsonArray data = new JsonArray();
        entries.forEach(data::add);
        return new JsonObject().put("object", "list").put("data", data);
    }
}
