package io.nexuscore.misroute;

import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import java.util.StringJoiner;

/**
 * How wrong one assignment was, judged against the tier's own assessment (its true score, from a
 * cl100k token count in the Wasm guests):
 * <ul>
 *   <li>strict: the assigned tier differs from the observed tier;</li>
 *   <li>banded: the true score lies more than {@code band} (a fraction, e.g. 0.2) outside the
 *       assigned tier's score range under the thresholds in force: above {@code hi * (1 + band)} or
 *       below {@code lo * (1 - band)}, where nano is [0, nano_max], small [nano_max + 1, small_max],
 *       large [small_max + 1, 255]. A near miss at a boundary is strict but not banded;</li>
 *   <li>gross: nano assigned and large observed, or the reverse.</li>
 * </ul>
 */
public record Misroute(boolean strict, boolean banded, boolean gross) {

    public static final Misroute NONE = new Misroute(false, false, false);

    /**
     * @param trueScore the observed score, or a negative value when the tier reports none (then
     *                  banded cannot be judged and is false)
     */
    public static Misroute judge(Tier assigned, Tier observed, int trueScore, Thresholds thresholds, double band) {
        boolean strict = assigned != observed;
        boolean gross = Math.abs(assigned.wire() - observed.wire()) == 2;
        boolean banded = trueScore >= 0 && outsideBand(assigned, trueScore, thresholds, band);
        return new Misroute(strict, banded, gross);
    }

    /** "none", or the kinds that apply, comma-separated: "strict", "strict,banded", "strict,banded,gross". */
    public String label() {
        StringJoiner kinds = new StringJoiner(",");
        if (strict) {
            kinds.add("strict");
        }
        if (banded) {
            kinds.add("banded");
        }
        if (gross) {
            kinds.add("gross");
        }
        return kinds.length() == 0 ? "none" : kinds.toString();
    }

    /** Score range of {@code tier}: {lo, hi}, both inclusive. */
    public static int[] range(Tier tier, Thresholds thresholds) {
        return switch (tier) {
            case NANO -> new int[] {0, thresholds.nanoMax()};
            case SMALL -> new int[] {thresholds.nanoMax() + 1, thresholds.smallMax()};
            case LARGE -> new int[] {thresholds.smallMax() + 1, Scorer.MAX_SCORE};
        };
    }

    private static boolean outsideBand(Tier assigned, int trueScore, Thresholds thresholds, double band) {
        int[] range = range(assigned, thresholds);
        // The top of large is the score's cap, not a bound a prompt can overshoot.
        boolean above = assigned != Tier.LARGE && trueScore > range[1] * (1 + band);
        boolean below = trueScore < range[0] * (1 - band);
        return above || below;
    }
}
