package io.nexuscore.tiers;

import io.vertx.core.buffer.Buffer;
import java.util.Objects;

/**
 * One unit of work for a tier: what the data plane extracted from an HTTP request. The Wasm pools
 * encode it for the guest (see src/main/wit/nexus-tier.wit); upstream tiers turn it into an
 * OpenAI request.
 *
 * @param task      task name (from /v1/tasks/{task}, or "chat" / "completion")
 * @param prompt    the prompt text (chat messages flattened by the data plane)
 * @param maxTokens the client's max_tokens, 0 when absent
 * @param simulation work the guest should pretend to do, for latency and failure experiments
 * @param policy    what the worker judges its own tier against (the thresholds in force for this
 *                  request); the data plane sets it once the request is assigned
 * @param chatBody  the client's chat request as it came, for an upstream tier to forward with only
 *                  the model (and the streaming options it needs) changed; null for other
 *                  endpoints and for requests with test hooks
 * @param chatFields where {@code chatBody}'s model, stream and stream_options stand, when the data
 *                  plane's parse found them; null when an upstream tier must look for itself
 * @param nativeApi  for a request of another API (UpstreamConfig.RESPONSES / MESSAGES) that an
 *                   upstream speaking it gets as the client wrote it: that API's name, with the client's
 *                   body in {@code nativeBody}; null otherwise (then chatBody is its chat translation)
 * @param nativeBody the client's own body for {@code nativeApi}
 */
public record TierRequest(String task, String prompt, int maxTokens, Simulation simulation, AssessmentPolicy policy,
                          Buffer chatBody, ChatFields chatFields, String nativeApi, Buffer nativeBody) {

    public TierRequest(String task, String prompt, int maxTokens, Simulation simulation, AssessmentPolicy policy,
                       Buffer chatBody, ChatFields chatFields) {
        this(task, prompt, maxTokens, simulation, policy, chatBody, chatFields, null, null);
    }

    public TierRequest {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(prompt, "prompt");
        Objects.requireNonNull(simulation, "simulation");
        Objects.requireNonNull(policy, "policy");
        if (maxTokens < 0) {
            throw new IllegalArgumentException("max_tokens must be >= 0, got " + maxTokens);
        }
    }

    /** A request judged against the default policy until {@link #judgedBy} says otherwise. */
    public TierRequest(String task, String prompt, int maxTokens, Simulation simulation) {
        this(task, prompt, maxTokens, simulation, AssessmentPolicy.DEFAULT, null, null);
    }

    public TierRequest(String task, String prompt, int maxTokens, Simulation simulation, AssessmentPolicy policy) {
        this(task, prompt, maxTokens, simulation, policy, null, null);
    }

    public static TierRequest of(String task, String prompt) {
        return new TierRequest(task, prompt, 0, Simulation.NONE);
    }

    public TierRequest judgedBy(AssessmentPolicy inForce) {
        return new TierRequest(task, prompt, maxTokens, simulation, inForce, chatBody, chatFields, nativeApi, nativeBody);
    }

    /** The same request carrying the client's chat body (see {@code chatBody}), its fields not located. */
    public TierRequest withChatBody(Buffer body) {
        return withChatBody(body, null);
    }

    /** The same request carrying the client's chat body and where its fields stand (null: not located). */
    public TierRequest withChatBody(Buffer body, ChatFields fields) {
        return new TierRequest(task, prompt, maxTokens, simulation, policy, body, body == null ? null : fields, nativeApi,
                nativeBody);
    }

    /** The same request, also carrying the client's body of another API for an upstream that speaks it. */
    public TierRequest withNative(String api, Buffer body) {
        return new TierRequest(task, prompt, maxTokens, simulation, policy, chatBody, chatFields, api, body);
    }

    /**
     * @param workMs        busy time the guest spends before answering ({@code simulate_ms})
     * @param allocateBytes bytes the guest allocates and touches ({@code simulate_alloc_bytes});
     *                      past the tier's ceiling this traps
     * @param spin          loop forever ({@code simulate_spin}); only the tier's deadline ends it
     */
    public record Simulation(int workMs, long allocateBytes, boolean spin) {
        public static final Simulation NONE = new Simulation(0, 0, false);

        public Simulation {
            if (workMs < 0) {
                throw new IllegalArgumentException("simulate_ms must be >= 0, got " + workMs);
            }
            if (allocateBytes < 0) {
                throw new IllegalArgumentException("simulate_alloc_bytes must be >= 0, got " + allocateBytes);
            }
        }
    }
}
