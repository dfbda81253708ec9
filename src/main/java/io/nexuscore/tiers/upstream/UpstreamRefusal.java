package io.nexuscore.tiers.upstream;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * What the router makes of an upstream's answer that is not a 2xx: how much of its body it reads,
 * what the operator sees of it, and what the client is told.
 *
 * <p>The upstream is not trusted: its error body is read up to {@link #MAX_BODY_BYTES} (an OpenAI
 * error object is a few hundred bytes; a larger body is cut there and the connection reset, so a
 * gigabyte of "error" never reaches the heap), and every excerpt is made printable before it reaches
 * a log line or an event (no forged log lines from an upstream's newlines).
 *
 * <p>A refusal that is about the client's request ({@link #PASSED_ON}: a parameter the model
 * rejects, a prompt over its context, a rate limit) keeps its status, and the client gets the
 * upstream's {@code error.message} (printable, at most {@link #MAX_MESSAGE_CHARS} characters) so it
 * can fix the request; the rest of the body, the upstream's URL and headers stay with the operator.
 * Any other status (401/403: the router's upstream credentials; 404: the tier's model name; 5xx) is
 * the router's or the upstream's fault, and stays a 502.
 */
final class UpstreamRefusal {

    static final int MAX_BODY_BYTES = 8 << 10;
    static final int MAX_MESSAGE_CHARS = 300;
    /** The operator's excerpt in logs and events. */
    static final int MAX_EXCERPT_CHARS = 200;
    /** The client's own fault, as OpenAI-compatible servers use them. */
    static final Set<Integer> PASSED_ON = Set.of(400, 413, 422, 429);
    /** The longest Retry-After passed on, in seconds; a longer or non-numeric one becomes this. */
    static final int MAX_RETRY_AFTER_SECONDS = 3600;

    private UpstreamRefusal() {
    }

    static boolean passedOn(int status) {
        return PASSED_ON.contains(status);
    }

    /** The operator's view of the body: printable, at most {@link #MAX_EXCERPT_CHARS} characters. */
    static String excerpt(Buffer body) {
        return printable(body.toString(StandardCharsets.UTF_8), MAX_EXCERPT_CHARS);
    }

    /**
     * The client's view: the {@code error.message} (or a string {@code error}) of an OpenAI-shaped
     * body, printable and bounded; null when the body has none.
     */
    static String clientMessage(Buffer body) {
        JsonObject json;
        try {
            json = new JsonObject(body);
        } catch (DecodeException | ClassCastException e) {
            return null; // not JSON, or JSON that is not an object
        }
        Object error = json.getValue("error");
        Object message = error instanceof JsonObject object ? object.getValue("message") : error;
        if (!(message instanceof String text) || text.isBlank()) {
            return null;
        }
        return printable(text, MAX_MESSAGE_CHARS);
    }

    /** An upstream's Retry-After as whole seconds within [0, 3600]; an HTTP date or garbage: null. */
    static String retryAfter(String header) {
        if (header == null) {
            return null;
        }
        String trimmed = header.trim();
        if (trimmed.isEmpty() || trimmed.length() > 9 || !trimmed.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return null;
        }
        return Integer.toString(Math.min(Integer.parseInt(trimmed), MAX_RETRY_AFTER_SECONDS));
    }

    /** Control characters (line breaks included) become a space; past {@code max} characters, "...". */
    static String printable(String text, int max) {
        StringBuilder out = new StringBuilder(Math.min(text.length(), max + 3));
        for (int i = 0; i < text.length() && out.length() < max; i++) {
            char c = text.charAt(i);
            out.append(Character.isISOControl(c) || c == '\u2028' || c == '\u2029' ? ' ' : c);
        }
        if (out.length() > 0 && Character.isHighSurrogate(out.charAt(out.length() - 1))) {
            out.setLength(out.length() - 1); // cut between the halves of a pair
        }
        return text.length() > max ? out.append("...").toString() : out.toString();
    }
}
