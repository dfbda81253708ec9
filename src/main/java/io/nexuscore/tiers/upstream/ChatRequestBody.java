package io.nexuscore.tiers.upstream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The OpenAI chat request an upstream tier sends, written straight to bytes: the tier's part (the
 * model) is encoded once, each request adds only its escaped prompt and numbers, instead of building
 * a JSON tree per request and running it through the generic encoder.
 *
 * <p>A chat request the client sent ({@link TierRequest#chatBody()}) is forwarded as it came, its
 * bytes spliced, not re-encoded: the top-level {@code model} becomes the tier's, {@code stream} what
 * the exchange reads ({@code true} with {@code stream_options: {"include_usage": true}}, which the
 * router needs to count the answer, else {@code false} and any {@code stream_options} null);
 * messages, roles, tools and sampling options reach the upstream untouched. Anything else
 * (completions, tasks, test hooks, or a body whose top level this does not take: a repeated model,
 * stream or stream_options, an empty object) goes as the flattened document: {@code {"model": M, "messages": [{"role": "user", "content": PROMPT}]}} plus
 * {@code max_tokens} when the client set it and {@code stream: true} and {@code stream_options.include_usage} when streaming.
 */
final class ChatRequestBody {

    private final byte[] head;
    /** The tier's model as a JSON string, what a forwarded body's model becomes. */
    private final byte[] modelValue;

    ChatRequestBody(String model) {
        this.head = ("{\"model\":\"" + new String(JsonStringEncoder.getInstance().quoteAsString(model))
                + "\",\"messages\":[{\"role\":\"user\",\"content\":\"").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.modelValue = ("\"" + new String(JsonStringEncoder.getInstance().quoteAsString(model)) + "\"")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static final JsonFactory JSON = new JsonFactory();
    private static final byte[] NULL = "null".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] TRUE = "true".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] FALSE = "false".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] STREAMING_OPTIONS = "{\"include_usage\":true}".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** Bytes [from, to) of the body replaced by {@code with}. */
    private record Edit(int from, int to, byte[] with) {
    }

    /**
     * The client's body with model, stream and stream_options set as the exchange needs them, or
     * null when its top level is not one this splices safely (then the flattened document goes).
     */
    private Buffer forward(Buffer body, boolean stream) {
        byte[] bytes = body.getBytes();
        Edit model = null;
        Edit streamFlag = null;
        Edit options = null;
        int open;
        int fields = 0;
        try (JsonParser p = JSON.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            open = (int) p.currentTokenLocation().getByteOffset();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                fields++;
                String name = p.currentName();
                JsonToken value = p.nextToken();
                int from = (int) p.currentTokenLocation().getByteOffset();
                if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
                    p.skipChildren();
                } else {
                    p.finishToken();
                }
                int to = (int) p.currentLocation().getByteOffset();
                // A repeated key among these: which one an upstream reads is its own business.
                switch (name) {
                    case "model" -> {
                        if (model != null) {
                            return null;
                        }
                        model = new Edit(from, to, modelValue);
                    }
                    case "stream" -> {
                        if (streamFlag != null) {
                            return null;
                        }
                        streamFlag = new Edit(from, to, stream ? TRUE : FALSE);
                    }
                    case "stream_options" -> {
                        if (options != null) {
                            return null;
                        }
                        // Servers refuse stream_options without streaming (vLLM, OpenAI): null is "not set".
                        options = new Edit(from, to, stream ? STREAMING_OPTIONS : NULL);
                    }
                    default -> {
                    }
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || fields == 0 || p.nextToken() != null) {
                return null;
            }
        } catch (IOException | RuntimeException e) {
            return null; // the data plane parsed it already; anything odd goes flattened
        }
        // What the body lacks goes right after its '{'; what it has is replaced where it stands.
        StringBuilder inserted = new StringBuilder();
        if (model == null) {
            inserted.append("\"model\":").append(new String(modelValue, java.nio.charset.StandardCharsets.UTF_8)).append(',');
        }
        if (stream && streamFlag == null) {
            inserted.append("\"stream\":true,");
        }
        if (stream && options == null) {
            inserted.append("\"stream_options\":{\"include_usage\":true},");
        }
        List<Edit> edits = new ArrayList<>(3);
        for (Edit edit : new Edit[] {model, streamFlag, options}) {
            if (edit != null) {
                edits.add(edit);
            }
        }
        edits.sort(Comparator.comparingInt(Edit::from));
        Buffer out = Buffer.buffer(bytes.length + inserted.length() + modelValue.length + 48);
        out.appendBytes(bytes, 0, open + 1).appendString(inserted.toString());
        int at = open + 1;
        for (Edit edit : edits) {
            out.appendBytes(bytes, at, edit.from() - at).appendBytes(edit.with());
            at = edit.to();
        }
        return out.appendBytes(bytes, at, bytes.length - at);
    }

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
