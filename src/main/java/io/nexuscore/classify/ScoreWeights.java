package io.nexuscore.classify;

/**
 * Score bonus for each task keyword found in the request line. Load-time settings of the kernel
 * program ({@code const volatile} in nexus_classify.bpf.c), so a change takes effect on reload.
 */
public record ScoreWeights(int sum, int ref, int gen, int ana) {

    public static final ScoreWeights DEFAULT = new ScoreWeights(10, 15, 20, 25);

    public ScoreWeights {
        requireWeight("sum", sum);
        requireWeight("ref", ref);
        requireWeight("gen", gen);
        requireWeight("ana", ana);
    }

    private static void requireWeight(String keyword, int weight) {
        if (weight < 0 || weight > Scorer.MAX_SCORE) {
            throw new IllegalArgumentException(
                    "weights." + keyword + " must be an integer in 0..255, got " + weight);
        }
    }
}
