package io.nexuscore.tiers;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.nexuscore.http.LoopJson;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;

/**
 * Where the top-level fields an upstream tier rewrites stand in a client's chat body: the byte
 * ranges of the values of {@code model}, {@code stream} and {@code stream_options} (null when the
 * body has none), and {@code inside}, just after the body's opening brace, where a missing one goes
 * in. The data plane's streaming parse finds them on its way (it reads the body anyway), so
 * forwarding a chat splices without a second pass over a body that may be kilobytes of messages and
 * tools; {@link #locate} is the same search on its own, for a body that parse declined.
 */
public record ChatFields(int inside, Span model, Span stream, Span streamOptions) {

    /** Bytes [from, to) of a value. */
    public record Span(int from, int to) {
    }

    private static final JsonFactory JSON = LoopJson.FACTORY;

    /**
     * The fields of {@code body}, or null when its top level is not one an upstream tier splices
     * safely: not one JSON object, an empty one, or one naming model, stream or stream_options twice
     * (which one an upstream reads is its own business).
     */
    public static ChatFields locate(Buffer body) {
        Span model = null;
        Span stream = null;
        Span options = null;
        int fields = 0;
        try (JsonParser p = JSON.createParser(body.getBytes())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            int inside = byteOffset(p, p.currentTokenLocation()) + 1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                fields++;
                String name = p.currentName();
                Span value = valueSpan(p, p.nextToken());
                switch (name) {
                    case "model" -> {
                        if (model != null) {
                            return null;
                        }
                        model = value;
                    }
                    case "stream" -> {
                        if (stream != null) {
                            return null;
                        }
                        stream = value;
                    }
                    case "stream_options" -> {
                        if (options != null) {
                            return null;
                        }
                        options = value;
                    }
                    default -> {
                    }
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || fields == 0 || p.nextToken() != null) {
                return null;
            }
            return new ChatFields(inside, model, stream, options);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The span of the value {@code p} stands on (its first token {@code value}), leaving the parser on
     * the value's last token: objects and arrays are skipped, scalars read to their end.
     */
    public static Span valueSpan(JsonParser p, JsonToken value) throws IOException {
        int from = byteOffset(p, p.currentTokenLocation());
        if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
            p.skipChildren();
        } else {
            p.finishToken();
        }
        return new Span(from, byteOffset(p, p.currentLocation()));
    }

    /**
     * The byte offset of {@code at} in the bytes {@code p} reads. Jackson knows byte offsets only when
     * it reads UTF-8: a body in UTF-16 or UTF-32, which it detects and reads as characters, has none
     * (-1), and a splice at -1 would cut the body apart. JSON between systems is UTF-8 (RFC 8259,
     * section 8.1), so such a body is refused as malformed here; no byte range is guessed.
     */
    public static int byteOffset(JsonParser p, JsonLocation at) throws JsonParseException {
        long offset = at.getByteOffset();
        if (offset < 0 || offset > Integer.MAX_VALUE) {
            throw new JsonParseException(p, "JSON must be UTF-8 (RFC 8259, section 8.1): this body is in another encoding");
        }
        return (int) offset;
    }
}
