package io.nexuscore.bench;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The request and the answer every benchmark target exchanges. */
final class BenchBodies {

    private BenchBodies() {
    }

    /** A nano request: a short chat message (score well under nano_max). */
    static final Buffer NANO_REQUEST = new JsonObject().put("model", "bench").put("messages", new JsonArray()
            .add(new JsonObject().put("role", "user").put("content", "Say hello in five words."))).toBuffer();

    /** An OpenAI chat completion answer, the same shape and size the router sends back. */
    static final Buffer ANSWER = new JsonObject()
            .put("id", "chatcmpl-nx1234567")
            .put("object", "chat.completion")
            .put("created", 1_764_000_000L)
            .put("model", "nexus-nano")
            .put("choices", new JsonArray().add(new JsonObject()
                    .put("index", 0)
                    .put("message", new JsonObject().put("role", "assistant").put("content", "Hello there, how are you?"))
                    .put("finish_reason", "stop")))
            .put("usage", new JsonObject().put("prompt_tokens", 6).put("completion_tokens", 7).put("total_tokens", 13))
            .toBuffer();
}
