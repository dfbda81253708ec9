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
 * {@code max_tokens} when the client set it and {@code stream: true} when streaming.
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
            body.appendString(",\"stream\":true");
        }
        return body.appendString("}");
    }
}
