package io.nexuscore.tiers;

import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Thresholds;
import java.util.Objects;

/**
 * What a tier worker judges a request against when it reports its own tier (X-NX-Tier): the
 * thresholds in force when the request was assigned, and the scorer's keyword policy. The Wasm
 * guests receive it on every call (src/main/wit/nexus-tier.wit), so their verdict follows
 * threshold changes instead of constants of their own.
 *
 * @param thresholds       the thresholds the request was assigned under
 * @param weights          the score bonus per task keyword
 * @param keywordScanBytes prompt bytes scanned for the keywords, besides the task name
 */
public record AssessmentPolicy(Thresholds thresholds, ScoreWeights weights, int keywordScanBytes) {

    /**
     * Prompt bytes the kernel scans for the task keywords (CONTENT_KEYWORDS in nexus_shared.h, issue
     * 10 part 3): the guest applies the same policy so that its score is the one the kernel estimates.
     */
    public static final int KEYWORD_SCAN_BYTES = 64;

    public static final AssessmentPolicy DEFAULT =
            new AssessmentPolicy(Thresholds.DEFAULT, ScoreWeights.DEFAULT, KEYWORD_SCAN_BYTES);

    public AssessmentPolicy {
        Objects.requireNonNull(thresholds, "thresholds");
        Objects.requireNonNull(weights, "weights");
        if (keywordScanBytes < 0) {
            throw new IllegalArgumentException("keywordScanBytes must be >= 0, got " + keywordScanBytes);
        }
    }

    public AssessmentPolicy withThresholds(Thresholds inForce) {
        return new AssessmentPolicy(inForce, weights, keywordScanBytes);
    }
}
