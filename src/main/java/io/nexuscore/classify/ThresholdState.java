package io.nexuscore.classify;

import java.util.Optional;

/**
 * The score_thresholds value as stored, which any tool may have written: possibly out of order.
 * Mirrors {@code struct score_thresholds} in nexus_shared.h (bytes 0 and 1 nano_max and small_max,
 * the seed's layout; then the writer id and version of the compare-and-set protocol).
 *
 * @param writer  {@link #WRITER_API}, {@link #WRITER_KERNEL}, or {@link #WRITER_OTHER} for any other tool
 * @param version bumped by every compare-and-set writer (unsigned 32-bit)
 */
public record ThresholdState(int nanoMax, int smallMax, int writer, long version) {

    /** THRESHOLDS_WRITER_* in nexus_shared.h. */
    public static final int WRITER_OTHER = 0;
    public static final int WRITER_API = 1;
    public static final int WRITER_KERNEL = 2;

    public ThresholdState {
        if (nanoMax < 0 || nanoMax > Scorer.MAX_SCORE || smallMax < 0 || smallMax > Scorer.MAX_SCORE) {
            throw new IllegalArgumentException("score_thresholds bytes out of 0..255: " + nanoMax + ", " + smallMax);
        }
    }

    public static ThresholdState of(Thresholds t, int writer, long version) {
        return new ThresholdState(t.nanoMax(), t.smallMax(), writer, version & 0xffff_ffffL);
    }

    public boolean valid() {
        return problem().isEmpty();
    }

    /** What is wrong with the stored value, naming the field; empty when valid. */
    public Optional<Problem> problem() {
        if (nanoMax >= smallMax) {
            return Optional.of(new Problem("nano_max", "nano_max (" + nanoMax + ") must be less than small_max ("
                    + smallMax + ")"));
        }
        return Optional.empty();
    }

    /** A rule the stored value breaks. */
    public record Problem(String field, String message) {
    }

    /**
     * The thresholds classification uses: the stored ones when valid, else the safe order the kernel
     * clamps to (THRESHOLDS_CLAMP): small_max at least 1, nano_max below small_max, so a score above
     * small_max never lands in nano.
     */
    public Thresholds effective() {
        int small = Math.max(smallMax, 1);
        return new Thresholds(Math.min(nanoMax, small - 1), small);
    }

    /** The stored pair when valid; for writers that merge a patch into it. */
    public Optional<Thresholds> thresholds() {
        return valid() ? Optional.of(new Thresholds(nanoMax, smallMax)) : Optional.empty();
    }

    /** The value a compare-and-set writer replaces this one with. */
    public ThresholdState next(Thresholds t, int writer) {
        return of(t, writer, version + 1);
    }

    /** Same thresholds, whoever wrote them. */
    public boolean sameThresholds(ThresholdState other) {
        return other != null && nanoMax == other.nanoMax && smallMax == other.smallMax;
    }
}
