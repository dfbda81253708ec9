package io.nexuscore.tiers;

import io.nexuscore.classify.Tier;
import io.vertx.core.buffer.Buffer;

/**
 * What a tier answered.
 *
 * @param text             the generated text
 * @param observedTier     the tier the worker believes the request belongs to (its own assessment)
 * @param observedScore    the score behind {@code observedTier} (prompt tokens plus keyword bonus,
 *                         0..255), or {@link #UNKNOWN_SCORE} when the worker reports none
 * @param promptTokens     prompt tokens as the worker counted them (cl100k_base in the Wasm guests)
 * @param completionTokens tokens in {@code text}
 * @param model            the model name the tier reports
 * @param answer           the tier's own answer document, when it has one (an upstream's chat answer,
 *                         its model already the tier's): the data plane sends it as it is instead of
 *                         rendering one from {@code text}; else null
 */
public record TierReply(String text, Tier observedTier, int observedScore, int promptTokens, int completionTokens,
                        String model, Answer answer) {

    public static final int UNKNOWN_SCORE = -1;

    /** prompt + completion tokens, at most Integer.MAX_VALUE: counts an upstream reports can sum past int. */
    public int totalTokens() {
        return (int) Math.min(Integer.MAX_VALUE, (long) promptTokens + completionTokens);
    }

    /**
     * @param body         the answer as the client gets it; null for a streamed answer, whose events
     *                     went to the client as they came
     * @param finishReason its first choice's finish_reason, null when it gives none
     * @param nativeShape  the body is already in the client's API (an upstream that speaks the
     *                     Responses or Messages API answered it): sent as it is, never translated
     */
    public record Answer(Buffer body, String finishReason, boolean nativeShape) {

        public Answer(Buffer body, String finishReason) {
            this(body, finishReason, false);
        }
    }

    /** A reply the data plane renders. */
    public TierReply(String text, Tier observedTier, int observedScore, int promptTokens, int completionTokens,
                     String model) {
        this(text, observedTier, observedScore, promptTokens, completionTokens, model, null);
    }

    /** A reply without a score of its own (misroutes are then counted strictly only). */
    public TierReply(String text, Tier observedTier, int promptTokens, int completionTokens, String model) {
        this(text, observedTier, UNKNOWN_SCORE, promptTokens, completionTokens, model);
    }
}
