package io.nexuscore.tiers.upstream;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;

/**
 * The OpenAI chat request an upstream tier sends, written straight to bytes: the tier's part (the
 * model) is encoded once, each request adds only its escaped prompt and numbers, instead of building
 * a JSON tree per request and running it through the generic encoder.
 *
 * <p>The document: {@code {"model": M, "messages": [{"role": "user", "content": PROMPT}]}} plus
 * {@code max_tokens} when the client set it and {@code stream: true} and {@code stream_options.include_usage} when streaming.
 */
final class ChatRequestBody {

    private final byte[] head;

    ChatRequestBody(String model) {
        this.head = ("{\"model\":\"" + new String(JsonStringEncoder.getInstance().quoteAsString(model))
                + "\",\"messages\":[{\"role\":\"user\",\"content\":\"").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    Buffer encode(TierRequest request, boolean stream) {
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
