package io.nexuscore.dataplane.apis;

import io.nexuscore.http.JsonBodies;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The OpenAI Responses API ({@code POST /v1/responses}) over the router's chat tiers.
 *
 * <p>Carried: {@code input} (a string, or a list of messages whose content is a string or
 * {@code input_text} / {@code output_text} parts), {@code instructions} (as the system message),
 * {@code max_output_tokens} (as max_tokens), {@code temperature}, {@code top_p}, {@code stream} (the
 * typed events, from {@code response.created} to {@code response.completed}), {@code model} (traces;
 * the score picks the tier). Accepted and not acted on: {@code store} (nothing is stored: the answer
 * says {@code store: false}), {@code metadata}, {@code user}, {@code truncation}, {@code parallel_tool_calls}.
 * Refused with 400 {@code unsupported-feature}: {@code previous_response_id} and {@code conversation}
 * (no state is kept), {@code tools} / {@code tool_choice} other than none, {@code reasoning},
 * {@code background}, {@code text.format} other than text, input items that are not messages
 * (function calls and their outputs, reasoning items, item references), and non-text content (images, files).
 */
public final class ResponsesApi {

    static final String API = "Responses API";
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final List<String> SAMPLING = List.of("temperature", "top_p");

    private ResponsesApi() {
    }

    public static TranslatedRequest parse(JsonObject json) {
        refuseUnsupported(json);
        String instructions = Fields.optionalString(json, "instructions");
        JsonArray messages = new JsonArray();
        StringBuilder prompt = new StringBuilder();
        if (instructions != null) {
            messages.add(new JsonObject().put("role", "system").put("content", instructions));
            prompt.append(instructions);
        }
        Object input = json.getValue("input");
        if (input instanceof String text) {
            messages.add(new JsonObject().put("role", "user").put("content", text));
            join(prompt, text);
        } else if (input instanceof JsonArray items && !items.isEmpty()) {
            for (int i = 0; i < items.size(); i++) {
                JsonObject message = message(items.getValue(i), "input[" + i + "]");
                messages.add(message);
                join(prompt, message.getString("content"));
            }
        } else {
            throw Fields.invalid("input must be a string or a non-empty array of messages");
        }
        int maxTokens = Fields.optionalCount(json, "max_output_tokens");
        boolean stream = JsonBodies.optionalBoolean(json, "stream");
        String model = json.getValue("model") instanceof String m ? m : null;
        JsonObject chat = new JsonObject().put("model", model == null ? "nexus" : model).put("messages", messages);
        if (maxTokens > 0) {
            chat.put("max_tokens", maxTokens);
        }
        Fields.copyNumbers(json, chat, SAMPLING);
        return new TranslatedRequest(TranslatedRequest.Api.RESPONSES, prompt.toString(), instructions, chat, maxTokens, stream, model);
    }

    private static void join(StringBuilder prompt, String text) {
        if (prompt.length() > 0) {
            prompt.append('\n');
        }
        prompt.append(text);
    }

    private static void refuseUnsupported(JsonObject json) {
        for (String stateful : List.of("previous_response_id", "conversation")) {
            if (json.getValue(stateful) != null) {
                throw Fields.unsupported(API, stateful + " needs responses stored by the server; this router keeps "
                        + "none: send the whole conversation in input");
            }
        }
        if (Fields.present(json, "tools")) {
            throw Fields.unsupported(API, "tools are not carried (function calling through the router is not supported)");
        }
        Object toolChoice = json.getValue("tool_choice");
        if (toolChoice != null && !"none".equals(toolChoice) && !"auto".equals(toolChoice)) {
            throw Fields.unsupported(API, "tool_choice is not carried");
        }
        if (json.getValue("reasoning") != null) {
            throw Fields.unsupported(API, "reasoning options are not carried");
        }
        if (JsonBodies.optionalBoolean(json, "background")) {
            throw Fields.unsupported(API, "background responses need stored responses; this router keeps none");
        }
        if (json.getValue("text") instanceof JsonObject text && text.getValue("format") instanceof JsonObject format
                && !"text".equals(format.getValue("type"))) {
            throw Fields.unsupported(API, "text.format " + format.getValue("type") + " is not carried (only text)");
        }
    }

    /** One input item as a chat message: its role and its text. */
    private static JsonObject message(Object value, String where) {
        if (!(value instanceof JsonObject item)) {
            throw Fields.invalid(where + " must be an object");
        }
        Object type = item.getValue("type");
        if (type != null && !"message".equals(type)) {
            throw Fields.unsupported(API, where + " is a " + type + " item; only messages are carried");
        }
        if (!(item.getValue("role") instanceof String role)
                || !List.of("user", "assistant", "system", "developer").contains(role)) {
            throw Fields.invalid(where + ".role must be one of user, assistant, system, developer");
        }
        String text = text(item.getValue("content"), where + ".content");
        // Chat servers that predate the developer role take it as system.
        return new JsonObject().put("role", "developer".equals(role) ? "system" : role).put("content", text);
    }

    private static String text(Object content, String where) {
        if (content instanceof String s) {
            return s;
        }
        if (!(content instanceof JsonArray parts)) {
            throw Fields.invalid(where + " must be a string or an array of content parts");
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            if (!(parts.getValue(i) instanceof JsonObject part)) {
                throw Fields.invalid(where + "[" + i + "] must be an object");
            }
            Object type = part.getValue("type");
            if (!"input_text".equals(type) && !"output_text".equals(type)) {
                throw Fields.unsupported(API, where + "[" + i + "] is " + type + "; only text parts are carried");
            }
            if (!(part.getValue("text") instanceof String t)) {
                throw Fields.invalid(where + "[" + i + "].text must be a string");
            }
            text.append(t);
        }
        return text.toString();
    }

    /** The answer as a Response object ({@code object: "response"}). */
    static String newId() {
        return "resp_nx" + SEQUENCE.incrementAndGet();
    }

    public static JsonObject response(ChatAnswer answer, TranslatedRequest request) {
        String id = newId();
        return response(id, answer, request, true);
    }

    static JsonObject response(String id, ChatAnswer answer, TranslatedRequest request, boolean done) {
        JsonObject response = new JsonObject()
                .put("id", id)
                .put("object", "response")
                .put("created_at", System.currentTimeMillis() / 1000)
                .put("status", !done ? "in_progress" : answer.truncated() ? "incomplete" : "completed")
                .putNull("error")
                .put("incomplete_details", done && answer.truncated()
                        ? new JsonObject().put("reason", "max_output_tokens") : null)
                .put("instructions", request.system())
                .put("max_output_tokens", request.maxTokens() > 0 ? request.maxTokens() : null)
                .put("model", answer.model())
                .put("output", done ? new JsonArray().add(item(id, answer.text(), answer.truncated() ? "incomplete" : "completed"))
                        : new JsonArray())
                .put("parallel_tool_calls", false)
                .putNull("previous_response_id")
                .put("store", false)
                .put("text", new JsonObject().put("format", new JsonObject().put("type", "text")))
                .put("tool_choice", "none")
                .put("tools", new JsonArray())
                .put("truncation", "disabled");
        return response.put("usage", done ? usage(answer) : null);
    }

    private static JsonObject usage(ChatAnswer answer) {
        return new JsonObject()
                .put("input_tokens", answer.promptTokens())
                .put("input_tokens_details", new JsonObject().put("cached_tokens", 0))
                .put("output_tokens", answer.completionTokens())
                .put("output_tokens_details", new JsonObject().put("reasoning_tokens", 0))
                .put("total_tokens", answer.totalTokens());
    }

    static JsonObject item(String responseId, String text, String status) {
        return new JsonObject()
                .put("id", "msg_" + responseId.substring("resp_".length()))
                .put("type", "message")
                .put("status", status)
                .put("role", "assistant")
                .put("content", text == null ? new JsonArray() : new JsonArray().add(part(text)));
    }

    static JsonObject part(String text) {
        return new JsonObject().put("type", "output_text").put("text", text).put("annotations", new JsonArray())
                .put("logprobs", new JsonArray());
    }

    /**
     * The answer as the Responses API's typed event stream, whole (the tier answered at once): created,
     * in_progress, the message item and its text part added, the text as one delta, then done events
     * and {@code response.completed} (or {@code response.incomplete}) with the usage. No [DONE]: the
     * Responses stream ends with its last event.
     */
    public static String events(ChatAnswer answer, TranslatedRequest request) {
        String id = "resp_nx" + SEQUENCE.incrementAndGet();
        String itemId = "msg_" + id.substring("resp_".length());
        Events out = new Events();
        JsonObject started = response(id, answer, request, false);
        out.add("response.created", new JsonObject().put("response", started));
        out.add("response.in_progress", new JsonObject().put("response", started));
        JsonObject openItem = item(id, null, "in_progress");
        out.add("response.output_item.added", new JsonObject().put("output_index", 0).put("item", openItem));
        out.add("response.content_part.added", atItem(itemId).put("part", part("")));
        if (!answer.text().isEmpty()) {
            out.add("response.output_text.delta", atItem(itemId).put("delta", answer.text()).put("logprobs", new JsonArray()));
        }
        out.add("response.output_text.done", atItem(itemId).put("text", answer.text()).put("logprobs", new JsonArray()));
        out.add("response.content_part.done", atItem(itemId).put("part", part(answer.text())));
        JsonObject finished = response(id, answer, request, true);
        out.add("response.output_item.done", new JsonObject().put("output_index", 0)
                .put("item", finished.getJsonArray("output").getJsonObject(0)));
        out.add(answer.truncated() ? "response.incomplete" : "response.completed", new JsonObject().put("response", finished));
        return out.text();
    }

    /** Where a text event points: the one message item's one text part (by the response id's item id). */
    static JsonObject at(String responseId) {
        return atItem("msg_" + responseId.substring("resp_".length()));
    }

    private static JsonObject atItem(String itemId) {
        return new JsonObject().put("item_id", itemId).put("output_index", 0).put("content_index", 0);
    }

    /** Server-sent events with an {@code event:} line and a {@code type} and {@code sequence_number} in each. */
    private static final class Events {
        private final StringBuilder text = new StringBuilder();
        private int sequence;

        void add(String type, JsonObject data) {
            JsonObject event = new JsonObject().put("type", type).put("sequence_number", sequence++);
            event.mergeIn(data);
            text.append("event: ").append(type).append("\ndata: ").append(event.encode()).append("\n\n");
        }

        String text() {
            return text.toString();
        }
    }
}
