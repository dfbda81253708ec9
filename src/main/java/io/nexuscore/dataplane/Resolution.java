package io.nexuscore.dataplane;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;

/**
 * The tier a request is assigned.
 *
 * @param tier       the assigned tier, tenant floor applied
 * @param score      the complexity score that chose it
 * @param source     whether the kernel verdict or the Java scorer decided
 * @param thresholds the thresholds in force when it was decided: the tier's own assessment and the
 *                   misroute accounting judge the request against these
 * @param estimateQ4 the prompt's token estimate at unit gain in 1/16 tokens (PromptEstimate), 0 when
 *                   none: with the guest's true count it is the adaptive timer's calibration sample
 */
public record Resolution(Tier tier, int score, RouteSource source, Thresholds thresholds, int estimateQ4) {
}
