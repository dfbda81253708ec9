package io.nexuscore.dataplane;

import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Passes an upstream's server-sent events through unchanged, event by event, and ends the stream
 * with the router's summary: when the upstream reported usage, the last chunk before
 * {@code data: [DONE]} is a chat completion chunk with empty {@code choices}, the {@code usage} and a
 * {@code nexuscore} object (assigned tier, observed tier, score, route source), the shape of
 * OpenAI's own {@code stream_options.include_usage} chunk. The upstream's usage-only chunk is the
 * one replaced, so a client sees one such chunk, not two; a chunk that carries choices and usage
 * (some servers) is passed through and its usage still counted.
 *
 * <p>Only a client that asked for usage ({@code stream_options.include_usage}) gets the summary chunk;
 * for any other the upstream's usage-only chunk (the router asks the upstream for it to count the
 * answer) is dropped, so no chunk with empty {@code choices} reaches a client that did not ask.
 *
 * <p>The observed tier is the band the usage's total tokens fall in under the thresholds the request
 * was assigned under, as for non-streamed upstream answers. Without usage there is no summary chunk:
 * nothing is known that the response head did not already say.
 *
 * <p>Not thread-safe: one per stream, fed on the request's event loop.
 */
final class StreamSummary {

    private final Resolution resolution;
    private final boolean emit;
    /**
     * The most of one unfinished event held back: far above any chat chunk. An upstream whose event
     * grows past it without ending (broken or hostile) has the held bytes passed on as they are, so
     * the router never holds more than this per stream.
     */
    static final int MAX_HELD_BYTES = 1 << 20;

    private Buffer pending = Buffer.buffer();
    /** Where the next search for an event's end starts: the held bytes before it were searched already. */
    private int searchFrom;
    private JsonObject usage;
    /** The upstream's usage chunk (or its last chunk): id, object, created and model for the summary. */
    private JsonObject template;
    /** The first choice's finish_reason, from the first chunk that names one (traces only); null before. */
    private String finishReason;
    private boolean summarized;

    /**
     * @param emit the client asked for usage ({@code stream_options.include_usage}): end with the summary
     *             chunk; otherwise the upstream's usage-only chunk (which the router asks for, to count
     *             the answer) is dropped and the stream looks as the client asked for it
     */
    StreamSummary(Resolution resolution, boolean emit) {
        this.resolution = resolution;
        this.emit = emit;
    }

    /** The complete events in {@code chunk} (and what was held back before it), rewritten; a partial event waits. */
    Buffer feed(Buffer chunk) {
        pending.appendBuffer(chunk);
        Buffer out = Buffer.buffer(pending.length() + 64);
        int from = 0;
        int end;
        while ((end = eventEnd(pending, Math.max(from, searchFrom))) >= 0) {
            event(pending.slice(from, end), out);
            from = end;
        }
        pending = from == 0 ? pending : pending.getBuffer(from, pending.length());
        if (pending.length() > MAX_HELD_BYTES) {
            out.appendBuffer(pending);
            pending = Buffer.buffer();
        }
        // An end of event is at most four bytes ("\r\n\r\n"): one that began in the last three held
        // bytes is found when the rest arrives; anything before them holds none.
        searchFrom = Math.max(0, pending.length() - 3);
        return out;
    }

    /** The bytes held back now (an unfinished event). */
    int held() {
        return pending.length();
    }

    /**
     * The upstream ended: the summary, when the stream ended without {@code data: [DONE]} after
     * reporting its usage (the usage-only chunk was held back for it, so without it the client that
     * asked for usage would get none), then what the upstream left unterminated, passed as it is.
     */
    Buffer finish() {
        Buffer rest = pending;
        pending = Buffer.buffer();
        searchFrom = 0;
        Buffer out = Buffer.buffer(rest.length() + 256);
        summary(out);
        return out.appendBuffer(rest);
    }

    /** The tier's assessment from the usage, once the stream reported it. */
    Optional<TierReply> reply() {
        if (usage == null) {
            return Optional.empty();
        }
        int prompt = count(usage.getValue("prompt_tokens"));
        int completion = count(usage.getValue("completion_tokens"));
        if (prompt < 0 || completion < 0) {
            return Optional.empty(); // not counts: the upstream's fault, and no assessment
        }
        int score = (int) Math.min(Scorer.MAX_SCORE, (long) prompt + completion);
        String model = template == null ? null : template.getString("model");
        return Optional.of(new TierReply("", resolution.thresholds().tierFor(score), score, prompt, completion,
                model == null ? "" : model, new TierReply.Answer(null, finishReason)));
    }

    /**
     * A token count as the non-streamed path reads it: missing is 0, past int's range is
     * Integer.MAX_VALUE (never wrapped), fractions truncated; -1 for a negative or anything not a number.
     */
    private static int count(Object value) {
        if (value == null) {
            return 0;
        }
        if (!(value instanceof Number number) || !(number.doubleValue() >= 0)) {
            return -1;
        }
        double count = number.doubleValue();
        return count >= Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) count;
    }

    /** The router's part of a summary: also added to the one chunk a non-streaming tier's answer becomes. */
    static JsonObject nexuscore(Resolution resolution, Tier observed, int observedScore) {
        JsonObject json = new JsonObject()
                .put("assigned_tier", resolution.tier().label())
                .put("score", resolution.score())
                .put("route_source", resolution.source().label());
        if (observed != null) {
            json.put("observed_tier", observed.label());
        }
        if (observedScore != TierReply.UNKNOWN_SCORE) {
            json.put("observed_score", observedScore);
        }
        return json;
    }

    /** One event, terminator included: passed through, replaced, or preceded by the summary. */
    private void event(Buffer event, Buffer out) {
        String data = data(event);
        if (data == null) {
            out.appendBuffer(event);
            return;
        }
        if (data.equals("[DONE]")) {
            summary(out);
            out.appendBuffer(event);
            return;
        }
        boolean names = finishReason == null && namesFinishReason(data);
        if (names || data.contains("\"usage\"")) {
            try {
                JsonObject json = new JsonObject(data);
                if (names) {
                    finishReason = firstFinishReason(json);
                }
                JsonObject reported = json.getJsonObject("usage");
                // Counts that are no counts: passed through untouched, and no assessment from them.
                if (reported != null && count(reported.getValue("prompt_tokens")) >= 0
                        && count(reported.getValue("completion_tokens")) >= 0) {
                    usage = reported;
                    template = json;
                    JsonArray choices = json.getJsonArray("choices");
                    if (choices == null || choices.isEmpty()) {
                        return; // the usage-only chunk: the summary takes its place
                    }
                }
            } catch (DecodeException | ClassCastException e) {
                // not ours to judge: passed through as the upstream sent it
            }
        }
        out.appendBuffer(event);
    }

    /**
     * True when the event may carry a finish reason: every chunk has a {@code finish_reason} key, null
     * until the last, so only a string value (written compactly or with a blank after the colon, as
     * model servers write JSON) makes the chunk worth parsing.
     */
    private static boolean namesFinishReason(String data) {
        return data.contains("\"finish_reason\":\"") || data.contains("\"finish_reason\": \"");
    }

    /** The first choice's finish_reason when it is a string, else null. */
    private static String firstFinishReason(JsonObject chunk) {
        JsonArray choices = chunk.getValue("choices") instanceof JsonArray array ? array : null;
        Object first = choices == null || choices.isEmpty() ? null : choices.getValue(0);
        return first instanceof JsonObject choice && choice.getValue("finish_reason") instanceof String reason
                ? reason : null;
    }

    private void summary(Buffer out) {
        if (summarized || usage == null || !emit) {
            return;
        }
        summarized = true;
        TierReply reply = reply().orElseThrow();
        JsonObject chunk = new JsonObject()
                .put("id", template.getValue("id"))
                .put("object", template.getString("object", "chat.completion.chunk"))
                .put("created", template.getValue("created"))
                .put("model", template.getValue("model"))
                .put("choices", new JsonArray())
                .put("usage", usage)
                .put("nexuscore", nexuscore(resolution, reply.observedTier(), reply.observedScore()));
        out.appendString("data: ").appendString(chunk.encode()).appendString("\n\n");
    }

    /** The event's data (its data lines joined), or null when it has none (a comment, a retry). */
    private static String data(Buffer event) {
        String text = event.toString(StandardCharsets.UTF_8);
        StringBuilder data = null;
        for (String line : text.split("\r\n|\n|\r")) {
            if (line.startsWith("data:")) {
                String value = line.substring(line.startsWith("data: ") ? 6 : 5);
                data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
            }
        }
        return data == null ? null : data.toString();
    }

    /** The index just past the blank line that ends the event starting at {@code from}, or -1. */
    private static int eventEnd(Buffer buffer, int from) {
        int length = buffer.length();
        for (int i = from; i < length; i++) {
            byte b = buffer.getByte(i);
            if (b == '\n' || b == '\r') {
                int next = i + (b == '\r' && i + 1 < length && buffer.getByte(i + 1) == '\n' ? 2 : 1);
                if (next < length) {
                    byte c = buffer.getByte(next);
                    if (c == '\n') {
                        return next + 1;
                    }
                    if (c == '\r') {
                        return next + 1 < length && buffer.getByte(next + 1) == '\n' ? next + 2 : next + 1 < length ? next + 1 : -1;
                    }
                }
            }
        }
        return -1;
    }
}
