package io.nexuscore.dataplane;

import io.nexuscore.dataplane.apis.MessagesApi;
import io.nexuscore.dataplane.apis.ResponsesApi;
import io.nexuscore.dataplane.apis.TranslatedRequest;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.Problems;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * An inference request parsed from the OpenAI shapes (chat messages, completion prompt) or the task
 * shape ({@code {"prompt": ...}}), plus the test hooks {@code simulate_ms},
 * {@code simulate_alloc_bytes} and {@code simulate_spin}, accepted only when the operator turned
 * {@code dataPlane.testHooks} on (a client could otherwise hold a worker on purpose).
 * {@code model} does not pick the tier (the score does); it is kept for traces only.
 *
 * @param work   what the tier runs
 * @param stream the client asked for server-sent events
 * @param streamUsage the client asked for the usage chunk ({@code stream_options.include_usage}):
 *                    only then does a streamed answer end with the router's summary chunk
 * @param model  the model the client named (traces only), null when absent or not a string
 * @param translated for another API's request (Responses, Messages): the request as a chat, which the
 *                   answer is rendered back from; null for the OpenAI chat, completion and task shapes
 */
public record InferenceRequest(TierRequest work, boolean stream, boolean streamUsage, String model,
                               TranslatedRequest translated) {

    public InferenceRequest(TierRequest work, boolean stream, boolean streamUsage, String model) {
        this(work, stream, streamUsage, model, null);
    }

    /** The request fields that drive the guests' simulations; only with {@code dataPlane.testHooks}. */
    static final List<String> TEST_HOOKS = List.of("simulate_ms", "simulate_alloc_bytes", "simulate_spin");

    /** True when the request uses a test hook: its latency is made up and must not feed the adaptive loop. */
    boolean simulated() {
        return !work.simulation().equals(TierRequest.Simulation.NONE);
    }

    /**
     * The request, or a {@link ProblemException} naming what is wrong with it. The common request
     * takes {@link StreamingRequestParser}'s single pass; whatever it declines (errors included, so
     * an invalid body is read twice) is decided by {@link #parseTree}, the reference.
     */
    static InferenceRequest parse(Endpoint endpoint, Buffer body, boolean testHooks) {
        return parse(endpoint, body, testHooks, null);
    }

    /**
     * As {@link #parse(Endpoint, Buffer, boolean)}; when the streaming pass takes the request, it also
     * reads the guard's {@code fields} on the way (see {@link RequestGuard.Fields#demand}).
     */
    static InferenceRequest parse(Endpoint endpoint, Buffer body, boolean testHooks, RequestGuard.Fields fields) {
        if (endpoint.kind().translated()) {
            return translated(endpoint, body);
        }
        StreamingRequestParser.Parsed fast = StreamingRequestParser.parse(endpoint, body, testHooks, fields);
        InferenceRequest parsed = fast != null ? fast.request() : parseTree(endpoint, body, testHooks);
        // A chat request goes to an upstream tier as the client wrote it (system prompt, roles, tools,
        // sampling options), only its model changed; test hooks are the router's, not the upstream's.
        return endpoint.kind() == Endpoint.Kind.CHAT && !parsed.simulated()
                ? new InferenceRequest(parsed.work().withChatBody(body, fast != null ? fast.chatFields() : null),
                        parsed.stream(), parsed.streamUsage(), parsed.model())
                : parsed;
    }

    /**
     * Another API's request as the chat the tier runs: the guest gets its prompt under the task name
     * "chat" (it scores task names for keywords, so a translated chat counts as the chat would); an
     * upstream tier gets the translated chat body. Test hooks are not read from these shapes.
     */
    private static InferenceRequest translated(Endpoint endpoint, Buffer body) {
        JsonObject json = object(body);
        TranslatedRequest request = endpoint.kind() == Endpoint.Kind.RESPONSES ? ResponsesApi.parse(json)
                : MessagesApi.parse(json);
        // The chat translation for tiers that speak chat only; the client's own body for an upstream
        // that speaks the client's API (upstream.apis).
        TierRequest work = new TierRequest("chat", request.prompt(), request.maxTokens(), TierRequest.Simulation.NONE)
                .withChatBody(request.chat().toBuffer())
                .withNative(request.api() == TranslatedRequest.Api.RESPONSES ? UpstreamConfig.RESPONSES
                        : UpstreamConfig.MESSAGES, body);
        return new InferenceRequest(work, request.stream(), false, request.model(), request);
    }

    private static JsonObject object(Buffer body) {
        JsonObject json;
        try {
            json = body.length() == 0 ? null : new JsonObject(body);
        } catch (DecodeException | ClassCastException e) {
            throw new ProblemException(Problems.malformedJson(e.getMessage()));
        }
        if (json == null) {
            throw new ProblemException(Problems.malformedJson("the request body is empty; expected a JSON object"));
        }
        return json;
    }

    /** The reference parse over the JSON tree: every shape, every error message. */
    static InferenceRequest parseTree(Endpoint endpoint, Buffer body, boolean testHooks) {
        JsonObject json = object(body);
        if (!testHooks) {
            List<String> used = TEST_HOOKS.stream().filter(json::containsKey).toList();
            if (!used.isEmpty()) {
                throw invalid(String.join(", ", used) + (used.size() == 1 ? " is a test hook" : " are test hooks")
                        + ", off on this router (dataPlane.testHooks)");
            }
        }
        String prompt = switch (endpoint.kind()) {
            case CHAT -> flattenMessages(json);
            case COMPLETION -> completionPrompt(json);
            case TASK -> requireString(json, "prompt");
            case MODELS, EMBEDDINGS, RESPONSES, MESSAGES ->
                    throw new IllegalArgumentException(endpoint.kind() + " is not parsed as an inference request here");
        };
        try {
            return new InferenceRequest(
                    new TierRequest(endpoint.task(), prompt, (int) optionalInteger(json, "max_tokens", Integer.MAX_VALUE),
                            new TierRequest.Simulation(
                                    (int) optionalInteger(json, "simulate_ms", Integer.MAX_VALUE),
                                    optionalInteger(json, "simulate_alloc_bytes", Long.MAX_VALUE),
                                    JsonBodies.optionalBoolean(json, "simulate_spin"))),
                    JsonBodies.optionalBoolean(json, "stream"), includeUsage(json),
                    json.getValue("model") instanceof String model ? model : null);
        } catch (IllegalArgumentException e) {
            throw new ProblemException(Problems.invalidRequest(e.getMessage()));
        }
    }

    /**
     * Chat messages flattened to one prompt: their contents joined by "\n", in order. Roles are left
     * out: the prompt is what the tier's assessment counts, the content the client wrote.
     */
    private static String flattenMessages(JsonObject json) {
        Object value = json.getValue("messages");
        if (!(value instanceof JsonArray messages) || messages.isEmpty()) {
            throw invalid("messages must be a non-empty array of {role, content} objects");
        }
        StringBuilder prompt = new StringBuilder();
        for (int i = 0; i < messages.size(); i++) {
            if (!(messages.getValue(i) instanceof JsonObject message)) {
                throw invalid("messages[" + i + "] must be an object");
            }
            if (!(message.getValue("role") instanceof String)) {
                throw invalid("messages[" + i + "].role must be a string");
            }
            if (i > 0) {
                prompt.append('\n');
            }
            prompt.append(content(message.getValue("content"), i));
        }
        return prompt.toString();
    }

    /** A message's content: a string, or an array of content parts whose text parts are joined. */
    private static String content(Object content, int index) {
        if (content instanceof String s) {
            return s;
        }
        if (content instanceof JsonArray parts) {
            StringBuilder text = new StringBuilder();
            for (Object part : parts) {
                if (part instanceof JsonObject p && p.getValue("text") instanceof String t) {
                    text.append(t);
                }
            }
            return text.toString();
        }
        if (content == null) {
            return "";
        }
        throw invalid("messages[" + index + "].content must be a string or an array of content parts");
    }

    private static String completionPrompt(JsonObject json) {
        Object value = json.getValue("prompt");
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof JsonArray parts && parts.stream().allMatch(p -> p instanceof String)) {
            StringBuilder prompt = new StringBuilder();
            parts.forEach(p -> prompt.append((String) p));
            return prompt.toString();
        }
        throw invalid("prompt must be a string or an array of strings");
    }

    private static String requireString(JsonObject json, String field) {
        if (json.getValue(field) instanceof String s) {
            return s;
        }
        throw invalid(field + " must be a string");
    }

    private static long optionalInteger(JsonObject json, String field, long max) {
        Object value = json.getValue(field);
        if (value == null) {
            return 0;
        }
        if (!(value instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())
                || n.doubleValue() < 0 || n.doubleValue() > max) {
            throw invalid(field + " must be an integer in 0.." + max + ", got " + JsonBodies.echoed(String.valueOf(value)));
        }
        return n.longValue();
    }

    /** stream_options.include_usage, false when absent. */
    private static boolean includeUsage(JsonObject json) {
        Object options = json.getValue("stream_options");
        if (options == null) {
            return false;
        }
        if (!(options instanceof JsonObject o)) {
            throw invalid("stream_options must be an object, got " + JsonBodies.echoed(String.valueOf(options)));
        }
        return JsonBodies.optionalBoolean(o, "include_usage");
    }


    private static ProblemException invalid(String detail) {
        return new ProblemException(Problems.invalidRequest(detail));
    }
}
