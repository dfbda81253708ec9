package io.nexuscore.dataplane.apis;

import io.nexuscore.http.JsonBodies;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Anthropic Messages API ({@code POST /v1/messages}) over the router's chat tiers.
 *
 * <p>Carried: {@code system} (a string or text blocks, as the system message), {@code messages}
 * (user/assistant, content a string or {@code text} blocks), {@code max_tokens} (required, as
 * max_tokens), {@code temperature}, {@code top_p}, {@code stop_sequences} (as stop), {@code stream}
 * (Anthropic's events, {@code message_start} to {@code message_stop}), {@code model} (traces; the
 * score picks the tier). Accepted and not acted on: {@code metadata}, {@code top_k} (chat has none).
 * Refused with 400 {@code unsupported-feature}: {@code tools} and {@code tool_choice}, {@code thinking},
 * and content blocks other than text (images, documents, tool_use, tool_result).
 */
public final class MessagesApi {

    static final String API = "Messages API";
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final List<String> SAMPLING = List.of("temperature", "top_p");

    private MessagesApi() {
    }

    public static TranslatedRequest parse(JsonObject json) {
        if (Fields.present(json, "tools") || json.getValue("tool_choice") != null) {
            throw Fields.unsupported(API, "tools are not carried (tool use through the router is not supported)");
        }
        if (json.getValue("thinking") instanceof JsonObject thinking && !"disabled".equals(thinking.getValue("type"))) {
            throw Fields.unsupported(API, "extended thinking is not carried");
        }
        Object maxValue = json.getValue("max_tokens");
        if (maxValue == null) {
            throw Fields.invalid("max_tokens is required");
        }
        int maxTokens = Fields.optionalCount(json, "max_tokens");
        JsonArray chat = new JsonArray();
        StringBuilder prompt = new StringBuilder();
        String system = null;
        if (json.getValue("system") != null) {
            system = text(json.getValue("system"), "system");
            chat.add(new JsonObject().put("role", "system").put("content", system));
            prompt.append(system);
        }
        if (!(json.getValue("messages") instanceof JsonArray messages) || messages.isEmpty()) {
            throw Fields.invalid("messages must be a non-empty array of {role, content} objects");
        }
        for (int i = 0; i < messages.size(); i++) {
            String where = "messages[" + i + "]";
            if (!(messages.getValue(i) instanceof JsonObject message)) {
                throw Fields.invalid(where + " must be an object");
            }
            if (!(message.getValue("role") instanceof String role) || !List.of("user", "assistant").contains(role)) {
                throw Fields.invalid(where + ".role must be user or assistant");
            }
            String text = text(message.getValue("content"), where + ".content");
            chat.add(new JsonObject().put("role", role).put("content", text));
            if (prompt.length() > 0) {
                prompt.append('\n');
            }
            prompt.append(text);
        }
        String model = json.getValue("model") instanceof String m ? m : null;
        JsonObject body = new JsonObject().put("model", model == null ? "nexus" : model).put("messages", chat)
                .put("max_tokens", maxTokens);
        Fields.copyNumbers(json, body, SAMPLING);
        Object stops = json.getValue("stop_sequences");
        if (stops != null) {
            if (!(stops instanceof JsonArray list) || !list.stream().allMatch(s -> s instanceof String)) {
                throw Fields.invalid("stop_sequences must be an array of strings");
            }
            if (!list.isEmpty()) {
                body.put("stop", list);
            }
        }
        return new TranslatedRequest(TranslatedRequest.Api.MESSAGES, prompt.toString(), system, body, maxTokens, JsonBodies.optionalBoolean(json, "stream"),
                model);
    }

    private static String text(Object content, String where) {
        if (content instanceof String s) {
            return s;
        }
        if (!(content instanceof JsonArray blocks)) {
            throw Fields.invalid(where + " must be a string or an array of content blocks");
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < blocks.size(); i++) {
            if (!(blocks.getValue(i) instanceof JsonObject block)) {
                throw Fields.invalid(where + "[" + i + "] must be an object");
            }
            if (!"text".equals(block.getValue("type"))) {
                throw Fields.unsupported(API, where + "[" + i + "] is a " + block.getValue("type")
                        + " block; only text blocks are carried");
            }
            if (!(block.getValue("text") instanceof String t)) {
                throw Fields.invalid(where + "[" + i + "].text must be a string");
            }
            text.append(t);
        }
        return text.toString();
    }

    /** The chat finish_reason as Anthropic's stop_reason. */
    static String stopReason(ChatAnswer answer) {
        return switch (answer.finishReason()) {
            case "length" -> "max_tokens";
            case "stop" -> "end_turn";
            case "content_filter" -> "refusal";
            default -> "end_turn";
        };
    }

    /** The answer as a Message object. */
    static String newId() {
        return "msg_nx" + SEQUENCE.incrementAndGet();
    }

    public static JsonObject message(ChatAnswer answer) {
        return message("msg_nx" + SEQUENCE.incrementAndGet(), answer, true);
    }

    static JsonObject message(String id, ChatAnswer answer, boolean done) {
        return new JsonObject()
                .put("id", id)
                .put("type", "message")
                .put("role", "assistant")
                .put("model", answer.model())
                .put("content", done ? new JsonArray().add(textBlock(answer.text())) : new JsonArray())
                .put("stop_reason", done ? stopReason(answer) : null)
                .putNull("stop_sequence")
                .put("usage", new JsonObject().put("input_tokens", answer.promptTokens())
                        .put("output_tokens", done ? answer.completionTokens() : 0));
    }

    private static JsonObject textBlock(String text) {
        return new JsonObject().put("type", "text").put("text", text);
    }

    /**
     * The answer as Anthropic's event stream, whole (the tier answered at once): message_start (the
     * input tokens), one text block with the text as one delta, message_delta (stop reason, output
     * tokens), message_stop.
     */
    public static String events(ChatAnswer answer) {
        String id = "msg_nx" + SEQUENCE.incrementAndGet();
        StringBuilder out = new StringBuilder();
        add(out, "message_start", new JsonObject().put("message", message(id, answer, false)));
        add(out, "content_block_start", new JsonObject().put("index", 0).put("content_block", textBlock("")));
        add(out, "ping", new JsonObject());
        if (!answer.text().isEmpty()) {
            add(out, "content_block_delta", new JsonObject().put("index", 0)
                    .put("delta", new JsonObject().put("type", "text_delta").put("text", answer.text())));
        }
        add(out, "content_block_stop", new JsonObject().put("index", 0));
        add(out, "message_delta", new JsonObject()
                .put("delta", new JsonObject().put("stop_reason", stopReason(answer)).putNull("stop_sequence"))
                .put("usage", new JsonObject().put("output_tokens", answer.completionTokens())));
        add(out, "message_stop", new JsonObject());
        return out.toString();
    }

    private static void add(StringBuilder out, String type, JsonObject data) {
        JsonObject event = new JsonObject().put("type", type).mergeIn(data);
        out.append("event: ").append(type).append("\ndata: ").append(event.encode()).append("\n\n");
    }
}
