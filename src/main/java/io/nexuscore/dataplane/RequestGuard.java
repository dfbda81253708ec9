package io.nexuscore.dataplane;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RequestLimits;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.Problems;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a request may make an upstream spend, decided before anything is forwarded. Every tier
 * forwards with the router's API key, so the body's top level is the client's lever on the bill:
 * {@code n}/{@code best_of} and {@code max_tokens}/{@code max_completion_tokens} are capped per
 * tier ({@link RequestLimits}), fields that are not the endpoint's OpenAI ones are refused, dropped
 * or passed as configured, and a key that spells {@code model}, {@code stream} or
 * {@code stream_options} in another case ({@code "MODEL"}) sends the request down the rebuilt-body
 * path: servers that match keys case-insensitively (Go's encoding/json: Ollama, LocalAI) take the
 * last of two, so a spliced body would let the client pick the model.
 *
 * <p>The top level is read once per request (nested values are skipped, not built): by
 * {@link Fields} inside the request's streaming parse, or by {@link #inspect} for a body that parse
 * declines. {@link #admit} applies the tier's caps, also for a fallback tier. Called from one place,
 * {@code TierDispatch.serveBy}.
 */
final class RequestGuard {

    private static final JsonFactory JSON = new JsonFactory();

    /** The OpenAI chat completions request (2025), less {@code service_tier} (picks a pricier tier). */
    static final Set<String> CHAT_FIELDS = Set.of("messages", "model", "audio", "frequency_penalty", "function_call",
            "functions", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n",
            "parallel_tool_calls", "prediction", "presence_penalty", "reasoning_effort", "response_format", "seed",
            "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs",
            "top_p", "user", "web_search_options", "verbosity", "prompt_cache_key", "safety_identifier");
    /** The OpenAI (legacy) completions request. */
    static final Set<String> COMPLETION_FIELDS = Set.of("model", "prompt", "best_of", "echo", "frequency_penalty",
            "logit_bias", "logprobs", "max_tokens", "n", "presence_penalty", "seed", "stop", "stream", "stream_options",
            "suffix", "temperature", "top_p", "user");
    /** NexusCore's task shape ({@code POST /v1/tasks/...}). */
    static final Set<String> TASK_FIELDS = Set.of("prompt", "model", "max_tokens", "stream", "stream_options");
    /** Keys the splice path rewrites; another spelling of one must not reach the upstream beside it. */
    private static final Set<String> SPLICED = Set.of("model", "stream", "stream_options");

    private final RequestLimits limits;
    private final Set<String> extra;

    RequestGuard(RequestLimits limits) {
        this.limits = limits;
        Set<String> e = new HashSet<>(limits.extraFields());
        e.addAll(InferenceRequest.TEST_HOOKS); // InferenceRequest already refused them unless testHooks is on
        this.extra = Set.copyOf(e);
    }

    /**
     * The top level of one request body: the largest token and choice counts it asks for, the fields
     * the policy does not know, and whether a spliced key came in another case.
     */
    record Demand(long maxTokens, long choices, List<String> unknown, boolean caseVariant) {
        static final Demand NONE = new Demand(0, 0, List.of(), false);
    }

    /**
     * The top level's demand, field by field, as one pass over the body meets them: {@link #inspect}'s
     * own, or the request's streaming parse ({@link StreamingRequestParser}), which so reads the body
     * once for both. One per request, on its thread.
     */
    final class Fields {
        private final Set<String> known;
        private long maxTokens;
        private long choices;
        private List<String> unknown = List.of();
        private boolean caseVariant;
        private boolean complete;

        private Fields(Endpoint endpoint) {
            this.known = switch (endpoint.kind()) {
                case CHAT -> CHAT_FIELDS;
                case COMPLETION -> COMPLETION_FIELDS;
                case TASK -> TASK_FIELDS;
                default -> null; // an endpoint this guard does not know the fields of: caps only
            };
        }

        /**
         * One top-level field, the parser on its value (left there: a count is read, not consumed).
         *
         * @throws ProblemException a count field that is not a non-negative integer
         */
        void field(String name, JsonParser p, JsonToken value) throws IOException {
            switch (name) {
                // max_output_tokens: the Responses API's name for it
                case "max_tokens", "max_completion_tokens", "max_output_tokens" ->
                        maxTokens = Math.max(maxTokens, count(p, value, name));
                case "n", "best_of" -> choices = Math.max(choices, count(p, value, name));
                default -> {
                    if (!SPLICED.contains(name) && SPLICED.contains(name.toLowerCase(Locale.ROOT))) {
                        caseVariant = true;
                    } else if (known != null && !known.contains(name) && !extra.contains(name)) {
                        if (unknown.isEmpty()) {
                            unknown = new ArrayList<>(2);
                        }
                        unknown.add(name);
                    }
                }
            }
        }

        /** Every top-level field was read, the object closed: {@link #demand} may be taken. */
        void complete() {
            complete = true;
        }

        /** The demand once the pass completed, else null (the pass stopped early: {@link #inspect} reads it). */
        Demand demand() {
            return !complete ? null : maxTokens == 0 && choices == 0 && unknown.isEmpty() && !caseVariant
                    ? Demand.NONE : new Demand(maxTokens, choices, List.copyOf(unknown), caseVariant);
        }
    }

    /** A fresh reader of one body's top level, for a pass that visits it. */
    Fields fields(Endpoint endpoint) {
        return new Fields(endpoint);
    }

    /**
     * Reads the top level of {@code body} in a pass of its own: for a body the request's streaming
     * parse declined (the tree parse took it), whose fields that pass did not read to the end.
     */
    Demand inspect(Endpoint endpoint, Buffer body) {
        Fields fields = new Fields(endpoint);
        try (JsonParser p = JSON.createParser(body.getBytes())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return Demand.NONE;
            }
            for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
                String name = p.currentName();
                fields.field(name, p, p.nextToken());
                p.skipChildren();
            }
        } catch (IOException e) {
            throw new ProblemException(Problems.malformedJson(e.getMessage()));
        }
        fields.complete();
        return fields.demand();
    }

    /** A count field: a non-negative integer (null is "not set"). */
    private static long count(JsonParser p, JsonToken value, String name) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return 0;
        }
        if (value == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER
                && p.getLongValue() >= 0) {
            return p.getLongValue();
        }
        throw new ProblemException(ProblemType.INVALID_REQUEST, name + " must be a non-negative integer, got "
                + io.nexuscore.http.JsonBodies.echoed(p.getText()), name);
    }

    /**
     * The work as {@code tier} may run it: refused (a {@link ProblemException}) past the tier's caps
     * or, with {@code refuse}, for an unknown field; with {@code drop}, a forwarded chat body loses
     * those fields; a case variant of a spliced key makes it go as the rebuilt (flattened) document.
     */
    TierRequest admit(TierRequest work, Demand demand, Tier tier) {
        RequestLimits.TierLimits cap = limits.of(tier);
        if (demand.maxTokens() > cap.maxTokens()) {
            throw limit("max_tokens/max_completion_tokens " + demand.maxTokens() + " is above the " + tier.label()
                    + " tier's " + cap.maxTokens() + " (dataPlane.requestLimits." + tier.label() + ".maxTokens)", "max_tokens");
        }
        if (demand.choices() > cap.n()) {
            throw limit("n/best_of " + demand.choices() + " is above the " + tier.label() + " tier's " + cap.n()
                    + " (dataPlane.requestLimits." + tier.label() + ".n)", "n");
        }
        if (!demand.unknown().isEmpty()) {
            switch (limits.unknownFields()) {
                case REFUSE -> throw new ProblemException(ProblemType.UNKNOWN_FIELD,
                        String.join(", ", demand.unknown().stream().map(io.nexuscore.http.JsonBodies::echoed).toList())
                                + (demand.unknown().size() == 1 ? " is not a field" : " are not fields")
                                + " this router forwards (dataPlane.requestLimits.unknownFields is \"refuse\"; "
                                + "extraFields lists more)", demand.unknown().get(0));
                case DROP -> {
                    if (work.chatBody() != null && !demand.caseVariant()) {
                        JsonObject json = new JsonObject(work.chatBody());
                        demand.unknown().forEach(json::remove);
                        work = work.withChatBody(json.toBuffer(), null);
                    }
                }
                case PASS -> { }
            }
        }
        if (demand.caseVariant() && work.chatBody() != null) {
            work = work.withChatBody(null, null);
        }
        return work;
    }

    private static ProblemException limit(String detail, String field) {
        return new ProblemException(ProblemType.REQUEST_LIMIT, detail, field);
    }
}
