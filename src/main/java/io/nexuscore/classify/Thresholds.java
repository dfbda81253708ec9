package io.nexuscore.classify;

/**
 * The two score thresholds: score &le; nanoMax is nano, score &le; smallMax is small, above is large.
 * Mirrors {@code struct score_thresholds} in nexus_shared.h.
 */
public record Thresholds(int nanoMax, int smallMax) {

    public static final Thresholds DEFAULT = new Thresholds(60, 130);

    public Thresholds {
        requireScore("nano_max", nanoMax);
        requireScore("small_max", smallMax);
        if (nanoMax >= smallMax) {
            throw new IllegalArgumentException(
                    "nano_max (" + nanoMax + ") must be less than small_max (" + smallMax + ")");
        }
    }

    public Tier tierFor(int score) {
        if (score <= nanoMax) {
            return Tier.NANO;
        }
        return score <= smallMax ? Tier.SMALL : Tier.LARGE;
    }

    private static void requireScore(String field, int value) {
        if (value < 0 || value > Scorer.MAX_SCORE) {
            throw new IllegalArgumentException(field + " must be an integer in 0..255, got " + value);
        }
    }
}
