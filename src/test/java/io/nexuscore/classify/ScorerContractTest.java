package io.nexuscore.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The scoring algorithm as specified in Scorer's javadoc, for bodies the scorer saw nothing of (the
 * estimate from the length: tokens = ((length - 64) * 241 * 1024 + 2^19) &gt;&gt; 20); PromptEstimateTest
 * covers visible prompts; the kernel parity test checks the C against both.
 */
class ScorerContractTest {

    private final Scorer scorer = new Scorer(ScoreWeights.DEFAULT);

    @ParameterizedTest(name = "{0} body={1} -> {2}")
    @CsvSource({
            "'POST /v1/chat/completions HTTP/1.1', 0, 0",
            "'POST /v1/chat/completions HTTP/1.1', 100, 8",
            "'POST /v1/chat/completions HTTP/1.1', 103, 9",
            "'POST /v1/chat/completions HTTP/1.1', 64, 0",
            "'POST /v1/tasks/summarize HTTP/1.1', 0, 10",
            "'POST /v1/tasks/refactor HTTP/1.1', 0, 15",
            "'POST /v1/tasks/generate HTTP/1.1', 0, 20",
            "'POST /v1/tasks/analyze HTTP/1.1', 0, 25",
            "'POST /v1/tasks/SUMMARIZE HTTP/1.1', 0, 10",
            "'POST /v1/tasks/summarize-and-analyze HTTP/1.1', 40, 35",
            "'POST /v1/tasks/sum-sum-sum HTTP/1.1', 0, 10",
            "'POST /v1/tasks/translate HTTP/1.1', 100000, 255",
            "'GET /v1/models HTTP/1.1', 0, 0",
    })
    void scoresPerSpec(String line, long body, int expected) {
        assertEquals(expected, scorer.score(bytes(line), body));
    }

    @Test
    void keywordsPastTheScannedPrefixDoNotCount() {
        String padding = "x".repeat(Scorer.REQUEST_LINE_MAX - "POST /".length() - 2);
        byte[] straddling = bytes("POST /" + padding + "sum HTTP/1.1");
        assertEquals(0, scorer.score(straddling, 0), "'sum' starts at byte 254 and ends past 256");
        byte[] inside = bytes("POST /" + padding.substring(1) + "sum HTTP/1.1");
        assertEquals(10, scorer.score(inside, 0), "'sum' ends exactly at byte 256");
    }

    @Test
    void hashMixesTheBoundedLineAWordAtATimeThenItsLength() {
        // The definition written out (nexus_shared.h, LINE_HASH_*): little-endian words, the last zero-padded.
        long seed = Scorer.LINE_HASH_SEED;
        assertEquals((int) Scorer.lineMix(seed, 0), Scorer.requestLineHash(new byte[0]));
        assertEquals((int) Scorer.lineMix(Scorer.lineMix(seed, 0x61), 1), Scorer.requestLineHash(bytes("a")));
        assertEquals((int) Scorer.lineMix(Scorer.lineMix(Scorer.lineMix(seed, 0x6867666564636261L), 0x69), 9),
                Scorer.requestLineHash(bytes("abcdefghi")));
        assertNotEquals(Scorer.requestLineHash(bytes("a")), Scorer.requestLineHash(bytes("a\0")), "the length is mixed in");
        assertNotEquals(Scorer.requestLineHash(bytes("POST /v1/chat/completions HTTP/1.1")),
                Scorer.requestLineHash(bytes("POST /v1/completions HTTP/1.1")));
        String longLine = "G".repeat(Scorer.REQUEST_LINE_MAX);
        assertEquals(Scorer.requestLineHash(bytes(longLine)), Scorer.requestLineHash(bytes(longLine + "tail")));
        // One step: multiply, then the high half folded into the low (a change in any byte reaches the low 32 bits).
        assertEquals(0x9e3779b97f4a7c15L ^ (0x9e3779b97f4a7c15L >>> 32), Scorer.lineMix(0, 1));
    }

    @Test
    void customWeightsApply() {
        Scorer custom = new Scorer(new ScoreWeights(1, 2, 3, 4));
        assertEquals(10, custom.score(bytes("POST /sum/ref/gen/ana HTTP/1.1"), 0));
    }

    @ParameterizedTest(name = "score {0} -> {1}")
    @CsvSource({"0, NANO", "60, NANO", "61, SMALL", "130, SMALL", "131, LARGE", "255, LARGE"})
    void defaultThresholdsSplitScores(int score, Tier tier) {
        assertEquals(tier, Thresholds.DEFAULT.tierFor(score));
    }

    @Test
    void thresholdsRejectBadValuesNamingTheField() {
        assertEquals("nano_max must be an integer in 0..255, got -1",
                assertThrows(IllegalArgumentException.class, () -> new Thresholds(-1, 10)).getMessage());
        assertEquals("small_max must be an integer in 0..255, got 256",
                assertThrows(IllegalArgumentException.class, () -> new Thresholds(10, 256)).getMessage());
        assertEquals("nano_max (90) must be less than small_max (90)",
                assertThrows(IllegalArgumentException.class, () -> new Thresholds(90, 90)).getMessage());
    }

    @Test
    void tenantFloorNeverLowersATier() {
        assertEquals(Tier.SMALL, Tier.NANO.atLeast(Tier.SMALL));
        assertEquals(Tier.LARGE, Tier.LARGE.atLeast(Tier.SMALL));
        assertEquals(Tier.NANO, Tier.NANO.atLeast(Tier.NANO));
    }

    @Test
    void verdictBelongsOnlyToTheSameLineAndBody() {
        int hash = Scorer.requestLineHash(bytes("POST /v1/tasks/generate HTTP/1.1"));
        KernelVerdict verdict = new KernelVerdict(40, Tier.NANO, 80, hash);
        assertEquals(true, verdict.belongsTo(hash, 80));
        assertEquals(false, verdict.belongsTo(hash, 81));
        assertEquals(false, verdict.belongsTo(hash + 1, 80));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
