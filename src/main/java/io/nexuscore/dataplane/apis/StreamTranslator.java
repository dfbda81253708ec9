package io.nexuscore.dataplane.apis;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;

/**
 * An upstream tier's streamed chat answer (OpenAI chat completion chunks, {@code data: [DONE]}) as the
 * client's API streams it, event by event: each content delta becomes a Responses
 * {@code response.output_text.delta} or an Anthropic {@code content_block_delta} as it arrives, and
 * the closing events carry the finish reason and the usage from the upstream's usage chunk (the router
 * asks the upstream for it). Not thread-safe: one per stream, fed on the request's event loop.
 */
public final class StreamTranslator {

    /** The most of one unfinished event held back; an upstream past it is broken and its bytes are dropped. */
    static final int MAX_HELD_BYTES = 1 << 20;

    private final TranslatedRequest request;
    private final String id;
    /** Bytes of an event not yet complete: split on bytes, so a character cut between two chunks stays whole. */
    private Buffer pending = Buffer.buffer();
    private final StringBuilder text = new StringBuilder();
    private final String model;
    private String finishReason = "stop";
    private int promptTokens;
    private int completionTokens;
    private boolean started;
    private boolean finished;
    private int sequence;

    /** @param model the serving tier's model, what the client's events name (as a non-streamed answer does) */
    StreamTranslator(TranslatedRequest request, String id, String model) {
        this.request = request;
        this.id = id;
        this.model = model;
    }

    /** The client's events for the complete upstream events in {@code chunk}; a partial event waits. */
    public Buffer feed(Buffer chunk) {
        pending.appendBuffer(chunk);
        StringBuilder out = new StringBuilder();
        int from = 0;
        int[] end;
        while ((end = eventEnd(pending, from)) != null) {
            event(pending.getString(from, end[0], "UTF-8"), out);
            from = end[1];
        }
        pending = from == 0 ? pending : pending.getBuffer(from, pending.length());
        if (pending.length() > MAX_HELD_BYTES) {
            pending = Buffer.buffer();
        }
        return Buffer.buffer(out.toString());
    }

    /** {end of the event's text, start of the next} for the first blank line at or after {@code from}, or null. */
    private static int[] eventEnd(Buffer bytes, int from) {
        for (int i = from; i + 1 < bytes.length(); i++) {
            if (bytes.getByte(i) == '\n' && bytes.getByte(i + 1) == '\n') {
                return new int[] {i, i + 2};
            }
            if (i + 3 < bytes.length() && bytes.getByte(i) == '\r' && bytes.getByte(i + 1) == '\n'
                    && bytes.getByte(i + 2) == '\r' && bytes.getByte(i + 3) == '\n') {
                return new int[] {i, i + 4};
            }
        }
        return null;
    }

    private void event(String event, StringBuilder out) {
        for (String line : event.split("\r?\n")) {
            if (!line.startsWith("data:")) {
                continue;
            }
            String data = line.substring(5).trim();
            if (data.equals("[DONE]") || data.isEmpty()) {
                continue;
            }
            JsonObject chunk;
            try {
                chunk = new JsonObject(data);
            } catch (DecodeException e) {
                continue; // not a chat chunk: nothing the client's API can say about it
            }
            start(out);
            if (chunk.getValue("choices") instanceof JsonArray choices && !choices.isEmpty()
                    && choices.getValue(0) instanceof JsonObject choice) {
                if (choice.getValue("delta") instanceof JsonObject delta && delta.getValue("content") instanceof String piece
                        && !piece.isEmpty()) {
                    text.append(piece);
                    delta(piece, out);
                }
                if (choice.getValue("finish_reason") instanceof String reason) {
                    finishReason = reason;
                }
            }
            if (chunk.getValue("usage") instanceof JsonObject usage) {
                promptTokens = usage.getValue("prompt_tokens") instanceof Number n ? n.intValue() : promptTokens;
                completionTokens = usage.getValue("completion_tokens") instanceof Number n ? n.intValue() : completionTokens;
            }
        }
    }

    /** The opening events, once, before the first delta. */
    private void start(StringBuilder out) {
        if (started) {
            return;
        }
        started = true;
        if (request.api() == TranslatedRequest.Api.RESPONSES) {
            JsonObject open = ResponsesApi.response(id, answer(), request, false);
            responses("response.created", new JsonObject().put("response", open), out);
            responses("response.in_progress", new JsonObject().put("response", open), out);
            responses("response.output_item.added", new JsonObject().put("output_index", 0)
                    .put("item", ResponsesApi.item(id, null, "in_progress")), out);
            responses("response.content_part.added", ResponsesApi.at(id).put("part", ResponsesApi.part("")), out);
        } else {
            messages("message_start", new JsonObject().put("message", MessagesApi.message(id, answer(), false)), out);
            messages("content_block_start", new JsonObject().put("index", 0)
                    .put("content_block", new JsonObject().put("type", "text").put("text", "")), out);
            messages("ping", new JsonObject(), out);
        }
    }

    private void delta(String piece, StringBuilder out) {
        if (request.api() == TranslatedRequest.Api.RESPONSES) {
            responses("response.output_text.delta", ResponsesApi.at(id).put("delta", piece)
                    .put("logprobs", new JsonArray()), out);
        } else {
            messages("content_block_delta", new JsonObject().put("index", 0)
                    .put("delta", new JsonObject().put("type", "text_delta").put("text", piece)), out);
        }
    }

    /** The closing events (the whole text, the finish reason, the usage); what is still held is read first. */
    public Buffer finish() {
        StringBuilder out = new StringBuilder();
        if (pending.length() > 0) {
            out.append(feed(Buffer.buffer("\n\n")).toString(StandardCharsets.UTF_8));
        }
        if (finished) {
            return Buffer.buffer(out.toString());
        }
        finished = true;
        start(out);
        ChatAnswer answer = answer();
        if (request.api() == TranslatedRequest.Api.RESPONSES) {
            responses("response.output_text.done", ResponsesApi.at(id).put("text", answer.text())
                    .put("logprobs", new JsonArray()), out);
            responses("response.content_part.done", ResponsesApi.at(id).put("part", ResponsesApi.part(answer.text())), out);
            JsonObject done = ResponsesApi.response(id, answer, request, true);
            responses("response.output_item.done", new JsonObject().put("output_index", 0)
                    .put("item", done.getJsonArray("output").getJsonObject(0)), out);
            responses(answer.truncated() ? "response.incomplete" : "response.completed",
                    new JsonObject().put("response", done), out);
        } else {
            messages("content_block_stop", new JsonObject().put("index", 0), out);
            // The input tokens are known only now (the upstream's usage comes last): message_delta carries them.
            messages("message_delta", new JsonObject()
                    .put("delta", new JsonObject().put("stop_reason", MessagesApi.stopReason(answer)).putNull("stop_sequence"))
                    .put("usage", new JsonObject().put("input_tokens", answer.promptTokens())
                            .put("output_tokens", answer.completionTokens())), out);
            messages("message_stop", new JsonObject(), out);
        }
        return Buffer.buffer(out.toString());
    }

    private ChatAnswer answer() {
        return new ChatAnswer(text.toString(), finishReason, promptTokens, completionTokens, model);
    }

    private void responses(String type, JsonObject data, StringBuilder out) {
        JsonObject event = new JsonObject().put("type", type).put("sequence_number", sequence++).mergeIn(data);
        out.append("event: ").append(type).append("\ndata: ").append(event.encode()).append("\n\n");
    }

    private static void messages(String type, JsonObject data, StringBuilder out) {
        JsonObject event = new JsonObject().put("type", type).mergeIn(data);
        out.append("event: ").append(type).append("\ndata: ").append(event.encode()).append("\n\n");
    }
}
