package io.nexuscore.tiers;

import io.nexuscore.classify.Tier;

/**
 * What a tier answered.
 *
 * @param text             the generated text
 * @param observedTier     the tier the worker believes the request belongs to (its own assessment)
 * @param promptTokens     prompt tokens as the worker counted them
 * @param completionTokens tokens in {@code text}
 * @param model            the model name the tier reports
 */
public record TierReply(String text, Tier observedTier, int promptTokens, int completionTokens, String model) {
}
