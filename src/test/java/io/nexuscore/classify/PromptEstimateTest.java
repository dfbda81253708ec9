package io.nexuscore.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * PromptEstimate's rules on hand-worked bodies, and its accuracy against a real tokenizer (cl100k_base,
 * jtokkit) on real prompts of kinds the coefficients were not fitted on (bench/data: long passages,
 * multiple choice). ParityTest holds the kernel's scan equal to this one.
 */
class PromptEstimateTest {

    private static final Scorer UNIT = new Scorer(ScoreWeights.DEFAULT);

    private static PromptEstimate scan(String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return PromptEstimate.scan(b, 0, b.length, b.length);
    }

    /** ((97 units + 627 others) * 1024 + 2^19) >> 20. */
    private static long tokens(long units, long others) {
        return ((97 * units + 627 * others) * 1024 + (1 << 19)) >> 20;
    }

    @Test
    void chatCountsTheFirstMessagesContentNotTheEnvelope() {
        PromptEstimate e = scan("{\"model\":\"gpt-4o\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hi there, 2 cats!\"}]}");
        assertEquals(tokens(17, 6), e.tokens(TokenGain.ONE_Q10), "17 characters, 6 of them not letters");
        assertFalse(e.blind());
        assertEquals(0, e.keywordBits());
    }

    @Test
    void anEscapeIsOneNonLetterAndKeywordsAreScannedInThePromptsFirstBytes() {
        PromptEstimate e = scan("{\"prompt\": \"Summarize:\\n\\u00e9t\\u00e9 \\\"ok\\\"\"}");
        assertEquals(tokens(19, 7), e.tokens(TokenGain.ONE_Q10));
        assertEquals(Scorer.KW_BIT_SUM, e.keywordBits());
        PromptEstimate late = scan("{\"prompt\":\"" + "x".repeat(PromptEstimate.KEYWORD_SCAN_BYTES) + "summarize\"}");
        assertEquals(0, late.keywordBits(), "a keyword past the first 64 bytes does not count");
    }

    @Test
    void bytesAfterTheStringBeyondTheAllowanceCountAsMorePromptAtTheSeenMix() {
        String head = "{\"messages\":[{\"role\":\"system\",\"content\":\"abcd efgh.\"},{\"role\":\"user\",\"content\":\"";
        String body = head + "y".repeat(200) + "\"}]}";
        PromptEstimate e = scan(body);
        int consumed = body.indexOf("\"},{") + 1;
        long extra = body.length() - consumed - PromptEstimate.TRAILER_ALLOWANCE;
        assertEquals(tokens(10 + extra * 10 / 10, 2 + extra * 2 / 10), e.tokens(TokenGain.ONE_Q10));
    }

    @Test
    void aPromptCutByTheWindowIsExtrapolatedFromTheDeclaredLength() {
        byte[] b = ("{\"prompt\":\"" + "word ".repeat(100)).getBytes(StandardCharsets.US_ASCII);
        PromptEstimate e = PromptEstimate.scan(b, 0, 311, 1000); // 300 prompt bytes visible of a 1000-byte body
        long extra = 1000 - 311 - PromptEstimate.TRAILER_ALLOWANCE;
        assertEquals(tokens(300 + extra, 60 + extra * 60 / 300), e.tokens(TokenGain.ONE_Q10));
    }

    @Test
    void withoutAPromptStringTheLengthDecidesAndTheEstimateIsBlind() {
        for (String body : List.of("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}",
                "{\"prompt\":null}", "{\"promptx\":\"abc\"}", "plain text, no JSON at all")) {
            PromptEstimate e = scan(body);
            assertTrue(e.blind(), body);
            assertEquals(PromptEstimate.fromLength(body.length()), e, body);
        }
        assertFalse(PromptEstimate.fromLength(0).blind(), "an empty body is not blind: there is nothing to see");
    }

    @Test
    void theGainScalesTheTokensNotTheKeywordBonus() {
        PromptEstimate e = scan("{\"prompt\":\"" + "analyse this text please ".repeat(8) + "\"}");
        Scorer doubled = new Scorer(ScoreWeights.DEFAULT, () -> 2 * TokenGain.ONE_Q10);
        long unit = e.tokens(TokenGain.ONE_Q10);
        byte[] line = "POST /v1/completions HTTP/1.1".getBytes(StandardCharsets.US_ASCII);
        assertEquals(unit + ScoreWeights.DEFAULT.ana(), UNIT.score(line, e));
        assertEquals(e.tokens(2 * TokenGain.ONE_Q10) + ScoreWeights.DEFAULT.ana(), doubled.score(line, e));
        assertTrue(Math.abs(e.tokens(2 * TokenGain.ONE_Q10) - 2 * unit) <= 1);
        assertEquals(e.tokensQ10() >> 6, e.estimateQ4());
    }

    /**
     * On real prompts nobody fitted the coefficients to, the estimate stays near the real count: the
     * mean relative error under 15 % and no prompt off by more than 40 % (measured: ~9-10 % and 30 %).
     */
    @Test
    void estimateTracksARealTokenizerOnUnseenPrompts() throws IOException {
        Encoding cl100k = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        for (String file : List.of("unseen-passages.jsonl", "unseen-multiple-choice.jsonl")) {
            List<Double> errors = new ArrayList<>();
            for (String line : Files.readAllLines(Path.of("bench/data", file))) {
                if (line.isBlank()) {
                    continue;
                }
                String prompt = new JsonObject(line).getString("prompt");
                String body = new JsonObject().put("model", "m").put("messages",
                        List.of(new JsonObject().put("role", "user").put("content", prompt))).encode();
                long truth = cl100k.countTokens(prompt);
                errors.add(Math.abs(scan(body).tokens(TokenGain.ONE_Q10) - truth) / (double) truth);
            }
            double mean = errors.stream().mapToDouble(d -> d).average().orElseThrow();
            double worst = errors.stream().mapToDouble(d -> d).max().orElseThrow();
            assertTrue(errors.size() >= 10, file + ": prompts " + errors.size());
            assertTrue(mean < 0.15, file + ": mean relative error " + mean);
            assertTrue(worst < 0.40, file + ": worst relative error " + worst);
        }
    }
}
