package io.nexuscore.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.nexuscore.testing.HandScoredRequests;
import io.nexuscore.testing.HandScoredRequests.Request;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java scorer against the scores worked out by hand from the documented formula
 * ({@link HandScoredRequests}): the tests that check the router's X-NX-Score and tier take their
 * expected values from that table, so this is where a scorer that drifted from its documentation
 * shows first. And the premises of the end-to-end rows, against jtokkit's cl100k_base.
 */
class HandScoredRequestsTest {

    private static final Scorer SCORER = new Scorer(ScoreWeights.DEFAULT);
    private static final Encoding CL100K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
    /** The estimate's worst relative error on a prompt it was not fitted to (PromptEstimateTest, docs/routing-truth.md). */
    private static final double DOCUMENTED_WORST_ERROR = 0.40;

    static Stream<Request> rows() {
        return HandScoredRequests.all().stream();
    }

    static Stream<Request> questions() {
        return Stream.of(HandScoredRequests.NANO_QUESTION, HandScoredRequests.SMALL_QUESTION, HandScoredRequests.LARGE_QUESTION);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void theScorerGivesTheHandWorkedScoreAndTier(Request row) {
        byte[] body = row.body().getBytes(StandardCharsets.UTF_8);
        PromptEstimate estimate = PromptEstimate.scan(body, 0, body.length, body.length);
        assertEquals(row.score(), SCORER.score(row.requestLine(), estimate), row + ": " + row.body());
        assertEquals(row.score() - row.bonus(), estimate.tokens(TokenGain.ONE_Q10), row + ": the token part");
        assertEquals(row.tier(), Thresholds.DEFAULT.tierFor(row.score()), row + ": tier under 60/130");
    }

    /**
     * The end-to-end questions: the guests' score (cl100k_base count + the same bonus) gives the
     * same tier and is, like the router's, at least 10 from every threshold the suites use
     * (60/130, 55/125, nano_max 90 and 100); the estimate is within the documented error of the
     * count and not equal to it, as on real text.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("questions")
    void theQuestionsAreClearOfTheThresholdsByBothCounts(Request row) {
        int tokens = CL100K.countTokensOrdinary(row.promptText());
        int estimated = row.score() - row.bonus();
        assertTrue(Math.abs(estimated - tokens) <= DOCUMENTED_WORST_ERROR * tokens, row + ": estimate " + estimated + ", cl100k " + tokens);
        assertNotEquals(tokens, estimated, row + ": real text, not a count equal by construction");
        int guest = tokens + row.bonus();
        assertEquals(row.tier(), Thresholds.DEFAULT.tierFor(guest), row + ": the guest's tier, score " + guest);
        for (int score : List.of(row.score(), guest)) {
            for (int threshold : List.of(55, 60, 90, 100, 125, 130)) {
                assertTrue(Math.abs(score - threshold) >= 10,
                        row + ": score " + score + " within 10 of threshold " + threshold);
            }
        }
    }
}
