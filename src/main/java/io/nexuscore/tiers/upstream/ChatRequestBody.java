package io.nexuscore.tiers.upstream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;

/**
 * The OpenAI chat request an upstream tier sends, written straight to bytes: the tier's part (the
 * model) is encoded once, each request adds only its escaped prompt and numbers, instead of building
 * a JSON tree per request and running it through the generic encoder.
 *
 * <p>A chat request the client sent ({@link TierRequest#chatBody()}) is forwarded as it came, its
 * bytes spliced, not re-encoded: the top-level {@code model} becomes the tier's, {@code stream} what
 * the exchange reads ({@code true} with {@code stream_options: {"include_usage": true}}, which the
 * router needs to count the answer, else {@code false} and any {@code stream_options} null); messages, roles, tools and sampling
 * options reach the upstream untouched. Anything else (completions, tasks, test hooks, or a body
 * whose top level this does not take: a repeated key, an empty object) goes as the flattened
 * document: {@code {"model": M, "messages": [{"role": "user", "content": PROMPT}]}} plus
 * {@code max_tokens} when the client set it and {@code stream: true} and {@code stream_options.include_usage} when streaming.
 */
final class ChatRequestBody {

    private final byte[] head;

    ChatRequestBody(String model) {
        this.head = ("{\"model\":\"" + new String(JsonStringEncoder.getInstance().quoteAsString(model))
                + "\",\"messages\":[{\"role\":\"user\",\"content\":\"").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.modelValue = ("\"" + new String(JsonStringEncoder.getInstance().quoteAsString(model)) + "\"")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static final JsonFactory JSON = new JsonFactory();
    private static final byte[] NULL = "null".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] STREAMING_OPTIONS = "{\"include_usage\":true}".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** A value's bytes in the body: [from, to). */
    private record Span(int from, int to) {
    }

    /**
     * The client's body with model, stream and stream_options set as the exchange needs them, or
     * null when its top level is not one this splices safely (then the flattened document goes).
     */
    private Buffer forward(Buffer body, boolean stream) {
        byte[] bytes = body.getBytes();
        Span model = null;
        Span streamFlag = null;
        Span options = null;
        int open;
        java.util.Set<String> seen = new java.util.HashSet<>();
        try (JsonParser p = JSON.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            open = (int) p.currentTokenLocation().getByteOffset();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                if (!seen.add(name)) {
                    return null; // a repeated key: which one an upstream reads is its own business
                }
                JsonToken value = p.nextToken();
                int from = (int) p.currentTokenLocation().getByteOffset();
                if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
                    p.skipChildren();
                } else {
                    p.finishToken();
                }
                Span span = new Span(from, (int) p.currentLocation().getByteOffset());
                switch (name) {
                    case "model" -> model = span;
                    case "stream" -> streamFlag = span;
                    case "stream_options" -> options = span;
                    default -> {
                    }
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || seen.isEmpty() || p.nextToken() != null) {
                return null;
            }
        } catch (IOException | RuntimeException e) {
            return null; // the data plane parsed it already; anything odd goes flattened
        }
        // Splices in body order: each replaced span, then whatever the body lacked, right after '{'.
        java.util.TreeMap<Integer, Object[]> edits = new java.util.TreeMap<>();
        StringBuilder inserted = new StringBuilder();
        if (model != null) {
            edits.put(model.from(), new Object[] {model, modelValue});
        } else {
            inserted.append("\"model\":").append(new String(modelValue, java.nio.charset.StandardCharsets.UTF_8)).append(',');
        }
        byte[] flag = (stream ? "true" : "false").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        if (streamFlag != null) {
            edits.put(streamFlag.from(), new Object[] {streamFlag, flag});
        } else if (stream) {
            inserted.append("\"stream\":true,");
        }
        if (stream) {
            if (options != null) {
                edits.put(options.from(), new Object[] {options, STREAMING_OPTIONS});
            } else {
                inserted.append("\"stream_options\":{\"include_usage\":true},");
            }
        } else if (options != null) {
            // Servers refuse stream_options without streaming (vLLM, OpenAI): null is "not set".
            edits.put(options.from(), new Object[] {options, NULL});
        }
        Buffer out = Buffer.buffer(bytes.length + inserted.length() + modelValue.length + 48);
        out.appendBytes(bytes, 0, open + 1).appendString(inserted.toString());
        int at = open + 1;
        for (Object[] edit : edits.values()) {
            Span span = (Span) edit[0];
            out.appendBytes(bytes, at, span.from() - at).appendBytes((byte[]) edit[1]);
            at = span.to();
        }
        return out.appendBytes(bytes, at, bytes.length - at);
    }

    private final byte[] modelValue;

    Buffer encode(TierRequest request, boolean stream) {
        if (request.chatBody() != null) {
            Buffer forwarded = forward(request.chatBody(), stream);
            if (forwarded != null) {
                return forwarded;
            }
        }
        byte[] prompt = JsonStringEncoder.getInstance().quoteAsUTF8(request.prompt());
        Buffer body = Buffer.buffer(head.length + prompt.length + 48).appendBytes(head).appendBytes(prompt)
                .appendString("\"}]");
        if (request.maxTokens() > 0) {
            body.appendString(",\"max_tokens\":").appendString(Integer.toString(request.maxTokens()));
        }
        if (stream) {
            // The usage (the tier's assessment) comes only when asked for; the data plane turns its
            // chunk into the stream's summary.
            body.appendString(",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
        }
        return body.appendString("}");
    }
}
