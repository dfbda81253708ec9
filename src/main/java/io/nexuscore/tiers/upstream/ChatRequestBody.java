package io.nexuscore.tiers.upstream;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nexuscore.tiers.ChatFields;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
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
 * messages, roles, tools and sampling options reach the upstream untouched. Where those three fields
 * stand comes with the request ({@link TierRequest#chatFields()}, found by the data plane's parse),
 * so the body is not read a second time; only a body that parse declined is searched here. Anything else
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
        this.modelValue = jsonString(model);
    }

    /** {@code value} as a JSON string, quotes included, in UTF-8: what a spliced model value is. */
    static byte[] jsonString(String value) {
        return ("\"" + new String(JsonStringEncoder.getInstance().quoteAsString(value)) + "\"")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

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
     *
     * @param fields where those fields stand, as the data plane's parse found them; null to look here
     */
    private Buffer forward(Buffer body, ChatFields fields, boolean stream) {
        ChatFields at = fields != null ? fields : ChatFields.locate(body);
        if (at == null) {
            return null;
        }
        // What the body lacks goes right after its '{'; what it has is replaced where it stands.
        StringBuilder inserted = new StringBuilder();
        if (at.model() == null) {
            inserted.append("\"model\":").append(new String(modelValue, java.nio.charset.StandardCharsets.UTF_8)).append(',');
        }
        if (stream && at.stream() == null) {
            inserted.append("\"stream\":true,");
        }
        if (stream && at.streamOptions() == null) {
            inserted.append("\"stream_options\":{\"include_usage\":true},");
        }
        List<Edit> edits = new ArrayList<>(3);
        if (at.model() != null) {
            edits.add(new Edit(at.model().from(), at.model().to(), modelValue));
        }
        if (at.stream() != null) {
            edits.add(new Edit(at.stream().from(), at.stream().to(), stream ? TRUE : FALSE));
        }
        if (at.streamOptions() != null) {
            // Servers refuse stream_options without streaming (vLLM, OpenAI): null is "not set".
            edits.add(new Edit(at.streamOptions().from(), at.streamOptions().to(), stream ? STREAMING_OPTIONS : NULL));
        }
        edits.sort(Comparator.comparingInt(Edit::from));
        Buffer out = Buffer.buffer(body.length() + inserted.length() + modelValue.length + 48);
        out.appendBuffer(body, 0, at.inside()).appendString(inserted.toString());
        int from = at.inside();
        for (Edit edit : edits) {
            out.appendBuffer(body, from, edit.from() - from).appendBytes(edit.with());
            from = edit.to();
        }
        return out.appendBuffer(body, from, body.length() - from);
    }

    Buffer encode(TierRequest request, boolean stream) {
        if (request.chatBody() != null) {
            Buffer forwarded = forward(request.chatBody(), request.chatFields(), stream);
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
