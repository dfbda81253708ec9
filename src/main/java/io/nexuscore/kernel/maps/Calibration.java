package io.nexuscore.kernel.maps;

import io.nexuscore.classify.TokenGain;

/**
 * One token_model.gain change made by the kernel's calibration stage (struct calibration_event in
 * nexus_shared.h).
 *
 * @param timestampNs     CLOCK_MONOTONIC of the change
 * @param oldGainQ10      the gain before, Q10 ({@link TokenGain#ONE_Q10} = 1.0)
 * @param newGainQ10      the gain after, Q10
 * @param samples         samples carrying a true count in that period
 * @param trueTokensSum   their true (cl100k) prompt token counts, summed
 * @param estimateQ4Sum   their unit-gain estimates, summed, in 1/16 tokens
 */
public record Calibration(long timestampNs, int oldGainQ10, int newGainQ10, int samples, long trueTokensSum,
                          long estimateQ4Sum) {

    /** A Q10 gain as a decimal (1024 = 1.0). */
    public static double gain(int q10) {
        return q10 / (double) TokenGain.ONE_Q10;
    }

    /** The period's estimates at unit gain, in tokens. */
    public double estimateTokens() {
        return estimateQ4Sum / 16.0;
    }
}
