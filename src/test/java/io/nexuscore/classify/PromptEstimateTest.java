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

    /** Tokens at unit gain of the given features (W S2 P DS L) and character weights, rounded: the spec's sum. */
    private static long tokens(long words, long secondBlanks, long punctRuns, long digitRuns, long letters, long charsQ10) {
        return (q10(words, secondBlanks, punctRuns, digitRuns, letters, charsQ10) * 1024 + (1 << 19)) >> 20;
    }

    private static long q10(long words, long secondBlanks, long punctRuns, long digitRuns, long letters, long charsQ10) {
        return 537 * words + 657 * secondBlanks + 909 * punctRuns + 2005 * digitRuns + 129 * letters + charsQ10;
    }

    /** The weight of the block of 64 code points that holds {@code codePoint}. */
    private static long weight(int codePoint) {
        return TokenBlocks.weightQ10(TokenBlocks.blockOf(codePoint));
    }

    @Test
    void chatCountsTheFirstMessagesContentNotTheEnvelope() {
        PromptEstimate e = scan("{\"model\":\"gpt-4o\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hi there, 2 cats!\"}]}");
        // Hi|there|cats: 3 words of 11 letters; ',' and '!': 2 punctuation runs; '2': a digit run.
        assertEquals(tokens(3, 0, 2, 1, 11, 0), e.tokens(TokenGain.ONE_Q10));
        assertFalse(e.blind());
        assertEquals(0, e.keywordBits());
    }

    @Test
    void escapesAreOneCharacterAndKeywordsAreScannedInThePromptsFirstBytes() {
        PromptEstimate e = scan("{\"prompt\": \"Summarize:\\n\\u00e9t\\u00e9 \\\"ok\\\"\"}");
        // Summarize | e-acute t e-acute (one word, two 2-byte letters) | ok; ':' and the two escaped
        // quotes; letters 9 + (2 + 1 + 2) + 2 = 16; the escaped line break is counted in no run.
        assertEquals(tokens(3, 0, 3, 0, 16, 2 * weight(0xe9)), e.tokens(TokenGain.ONE_Q10));
        assertEquals(Scorer.KW_BIT_SUM, e.keywordBits());
        PromptEstimate late = scan("{\"prompt\":\"" + "x".repeat(PromptEstimate.KEYWORD_SCAN_BYTES) + "summarize\"}");
        assertEquals(0, late.keywordBits(), "a keyword past the first 64 bytes does not count");
    }

    @Test
    void runsOfBlanksDigitsAndMultiByteCharactersHaveTheirOwnTerms() {
        // "a    b": one second blank for the run of four; "12345 678": two digit runs; two CJK
        // characters: a word of 6 letters and their block's weight twice; two Cyrillic ones: 4
        // letters; raw UTF-8 or JSON escapes alike.
        assertEquals(tokens(2, 1, 0, 0, 2, 0), scan("{\"prompt\":\"a    b\"}").tokens(TokenGain.ONE_Q10));
        assertEquals(tokens(0, 0, 0, 2, 0, 0), scan("{\"prompt\":\"12345 678\"}").tokens(TokenGain.ONE_Q10));
        String cjk = new String(new char[] {0x4e2d, 0x6587});
        assertEquals(tokens(1, 0, 0, 0, 6, 2 * weight(0x4e2d)), scan("{\"prompt\":\"" + cjk + "\"}").tokens(TokenGain.ONE_Q10));
        assertEquals(scan("{\"prompt\":\"" + cjk + "\"}"), scan("{\"prompt\":\"\\" + "u4e2d\\" + "u6587\"}"));
        String cyrillic = new String(new char[] {0x0449, 0x0438});
        assertEquals(tokens(1, 0, 0, 0, 4, weight(0x0449) + weight(0x0438)),
                scan("{\"prompt\":\"" + cyrillic + "\"}").tokens(TokenGain.ONE_Q10));
        assertEquals(scan("{\"prompt\":\"" + cyrillic + "\"}"), scan("{\"prompt\":\"\\" + "u0449\\" + "u0438\"}"));
    }

    /**
     * Each non-ASCII character weighs what its script costs: the block of 64 code points is found
     * from the lead byte (2 bytes), the lead and second byte (3 bytes) or the first three hex
     * digits of an escape, and a character outside the BMP weighs the same raw or as an escaped pair.
     */
    @Test
    void eachNonAsciiCharacterWeighsItsScriptsBlock() {
        record Case(String text, int codePoint) { }
        for (Case c : List.of(new Case("\\u03B1", 0x3b1), new Case("\\u05d0", 0x5d0), new Case("\\u0915", 0x915),
                new Case("\\u0b15", 0xb15), new Case("\\u0e01", 0xe01), new Case("\\u10D0", 0x10d0),
                new Case("\\u1ea1", 0x1ea1), new Case("\\uac00", 0xac00))) {
            String raw = new String(Character.toChars(c.codePoint()));
            int utf8 = raw.getBytes(StandardCharsets.UTF_8).length;
            assertEquals(tokens(1, 0, 0, 0, utf8, weight(c.codePoint())), scan("{\"prompt\":\"" + raw + "\"}")
                    .tokens(TokenGain.ONE_Q10), c.text());
            assertEquals(scan("{\"prompt\":\"" + raw + "\"}"), scan("{\"prompt\":\"" + c.text() + "\"}"), c.text());
        }
        // Scripts cl100k_base knows less well weigh more than the ones it knows well.
        assertTrue(weight(0x0b15) > weight(0x0915) && weight(0x0915) > weight(0x4e2d) && weight(0x03b1) > weight(0x0438));
        String emoji = new String(Character.toChars(0x1f600));
        PromptEstimate rawEmoji = scan("{\"prompt\":\"" + emoji + "\"}");
        PromptEstimate escapedPair = scan("{\"prompt\":\"\\" + "ud83d\\" + "ude00\"}");
        assertEquals(q10(1, 0, 0, 0, 4, weight(0x1f600)), rawEmoji.tokensQ10());
        assertEquals(q10(1, 0, 0, 0, 6, weight(0x1f600)), escapedPair.tokensQ10(), "the pair weighs one character");
    }

    /** Bytes that are not UTF-8 (a 3-byte lead before ASCII, a lone continuation byte) weigh nothing beyond their letters. */
    @Test
    void malformedUtf8AddsNoCharacterWeight() {
        byte[] body = {'{', '"', 'p', 'r', 'o', 'm', 'p', 't', '"', ':', '"', (byte) 0xe0, 'a', (byte) 0xa4, '"', '}'};
        assertEquals(q10(1, 0, 0, 0, 3, 0), PromptEstimate.scan(body, 0, body.length, body.length).tokensQ10());
    }

    /**
     * Every message in the window is scanned (a system prompt and the question alike), the
     * envelope between them counts for nothing, and only what the window cuts off is counted at
     * the rate seen.
     */
    @Test
    void everyMessageInTheWindowIsScannedAndTheEnvelopeCountsForNothing() {
        String body = "{\"messages\":[{\"role\":\"system\",\"content\":\"abcd efgh.\"},{\"role\":\"user\",\"content\":\""
                + "y".repeat(120) + "\"}]}";
        assertTrue(body.length() < PromptEstimate.BODY_WINDOW);
        // abcd|efgh|y...y: 3 words of 128 letters; '.': a punctuation run.
        assertEquals(tokens(3, 0, 1, 0, 128, 0), scan(body).tokens(TokenGain.ONE_Q10));
        byte[] b = body.getBytes(StandardCharsets.US_ASCII);
        int visible = body.indexOf("yyy") + 40; // the segment ends inside the question: blind, the rest extrapolated
        long seen = q10(3, 0, 1, 0, 48, 0);
        // Cut inside a string: the rest less the envelope's part that follows (PROMPT_ENVELOPE less what came before).
        long extra = b.length - visible - (PromptEstimate.PROMPT_ENVELOPE - body.indexOf("abcd"));
        PromptEstimate cut = PromptEstimate.scan(b, 0, visible, b.length);
        assertTrue(extra > 0);
        assertEquals(((seen + extra * seen / 50) * 1024 + (1 << 19)) >> 20, cut.tokens(TokenGain.ONE_Q10));
        assertTrue(cut.blind());
    }

    /**
     * A key whose value is not a string (a list of content parts, the "text" of "type":"text") is
     * passed over and the parts' texts are scanned; keys past PROMPT_STRINGS are not looked at.
     */
    @Test
    void contentPartsTextsAreScannedAndOnlyTheFirstKeysAreLookedAt() {
        PromptEstimate parts = scan("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},"
                + "{\"role\":\"user\",\"content\":\"abc\"}]}");
        assertFalse(parts.blind());
        assertEquals(tokens(2, 0, 0, 0, 5, 0), parts.tokens(TokenGain.ONE_Q10)); // hi, abc
        StringBuilder chat = new StringBuilder("{\"messages\":[");
        for (int i = 0; i < PromptEstimate.PROMPT_STRINGS; i++) {
            chat.append("{\"content\":\"ab\"},"); // short, so all eight lie in the window
        }
        String last = "{\"role\":\"user\",\"content\":\"" + "z".repeat(100) + "\"}]}";
        String body = chat + last;
        long seen = q10(PromptEstimate.PROMPT_STRINGS, 0, 0, 0, 2L * PromptEstimate.PROMPT_STRINGS, 0);
        long extra = last.length() + 2 - PromptEstimate.TRAILER_ALLOWANCE; // "},"  before it, and it
        assertEquals(((seen + extra * seen / (2L * PromptEstimate.PROMPT_STRINGS)) * 1024 + (1 << 19)) >> 20,
                scan(body).tokens(TokenGain.ONE_Q10));
    }

    /**
     * A body longer than the window: its first BODY_WINDOW bytes scanned, the rest counted at the
     * rate seen from the declared length, less the envelope still to come (FLAT_TRAILER: the first
     * string is a "prompt" key's, a flat body). Not blind: the window was all there.
     */
    @Test
    void aPromptCutByTheWindowIsExtrapolatedFromTheDeclaredLength() {
        byte[] b = ("{\"prompt\":\"" + "word ".repeat(100)).getBytes(StandardCharsets.US_ASCII);
        PromptEstimate e = PromptEstimate.scan(b, 0, 311, 1000); // 311 bytes at hand of a 1000-byte body
        int prompt = PromptEstimate.BODY_WINDOW - 11; // 245 bytes: 49 words of 4 letters
        long seen = q10(49, 0, 0, 0, 196, 0);
        long extra = 1000 - PromptEstimate.BODY_WINDOW - PromptEstimate.FLAT_TRAILER;
        assertEquals(((seen + extra * seen / prompt) * 1024 + (1 << 19)) >> 20, e.tokens(TokenGain.ONE_Q10));
        assertFalse(e.blind());
        assertEquals(e, PromptEstimate.scan(b, 0, b.length, 1000), "bytes past the window change nothing");
        assertTrue(PromptEstimate.scan(b, 0, 200, 1000).blind(), "fewer than BODY_WINDOW bytes at hand: blind");
    }

    /** A Responses API "input" string is top-level too: past the window only FLAT_TRAILER is envelope. */
    @Test
    void aCutInputStringIsFlat() {
        byte[] b = ("{\"input\":\"" + "word ".repeat(100)).getBytes(StandardCharsets.US_ASCII);
        // 246 bytes of the string in the window: 49 words and the "w" of a 50th, 197 letters
        long seen = q10(50, 0, 0, 0, 197, 0);
        long extra = 1000 - PromptEstimate.BODY_WINDOW - PromptEstimate.FLAT_TRAILER;
        assertEquals(((seen + extra * seen / 246) * 1024 + (1 << 19)) >> 20,
                PromptEstimate.scan(b, 0, b.length, 1000).tokens(TokenGain.ONE_Q10));
    }

    @Test
    void withoutAPromptStringTheLengthDecidesAndTheEstimateIsBlind() {
        for (String body : List.of("{\"prompt\":[\"a list of \",\"strings\"]}", "{\"messages\":[{\"role\":\"user\",\"content\":null}]}",
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
     * mean relative error under 15 % and no prompt off by more than 40 % (measured 2026-12-03: passages
     * 6.9 % / 13 %, multiple choice 9.9 / 21, C code 7.0 / 28, structured data 10.0 / 23, Python 4.4 / 16).
     */
    @Test
    void estimateTracksARealTokenizerOnUnseenPrompts() throws IOException {
        Encoding cl100k = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        for (String file : List.of("unseen-passages.jsonl", "unseen-multiple-choice.jsonl", "unseen-code.jsonl",
                "unseen-structured.jsonl", "unseen-python.jsonl")) {
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

    /**
     * Prompts in 34 languages and 25 scripts (bench/data/unseen-scripts.jsonl: translations from the
     * Debian packages the block weights were not fitted on): per language the mean relative error
     * stays under 30 % and over the file under 10 % (measured: 6 %; Ukrainian, which shares Russian's
     * letters, the worst at ~20 % low). One weight for every multi-byte character, the estimate
     * before the blocks, was 40-78 % low on Greek, Armenian, Arabic or Oriya.
     */
    @Test
    void estimateTracksARealTokenizerInOtherScripts() throws IOException {
        Encoding cl100k = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        java.util.Map<String, List<Double>> errors = new java.util.TreeMap<>();
        for (String line : Files.readAllLines(Path.of("bench/data/unseen-scripts.jsonl"))) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject json = new JsonObject(line);
            String prompt = json.getString("prompt");
            long truth = cl100k.countTokens(prompt);
            long estimate = PromptEstimate.ofPrompt(prompt).tokens(TokenGain.ONE_Q10);
            errors.computeIfAbsent(json.getString("language"), k -> new ArrayList<>())
                    .add(Math.abs(estimate - truth) / (double) truth);
        }
        assertTrue(errors.size() >= 30, "languages: " + errors.keySet());
        errors.forEach((language, list) -> {
            double mean = list.stream().mapToDouble(d -> d).average().orElseThrow();
            assertTrue(mean < 0.30, language + ": mean relative error " + mean);
        });
        double overall = errors.values().stream().flatMap(List::stream).mapToDouble(d -> d).average().orElseThrow();
        assertTrue(overall < 0.10, "mean relative error over every language " + overall);
    }

    /** A body {@code {"prompt": ...}} as a client's JSON library writes it. */
    /** The scan with every byte of the body in its window: what {@link PromptEstimate#ofPrompt} matches. */
    private static PromptEstimate wholeBody(byte[] body) {
        return PromptEstimate.scan(body, 0, body.length, body.length, body.length);
    }

    private static byte[] clientBody(String prompt) {
        return ("{\"prompt\":" + io.vertx.core.json.Json.encode(prompt) + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The prompt alone, as text: the same estimate as the scan of a body that is just that prompt. */
    @Test
    void ofPromptIsTheScanOfTheBodyAClientWouldWrite() {
        for (String prompt : java.util.List.of("", "Say hello in five words.", "He said \"sum it up\"\nthen\tleft\\.",
                "Résumé: café, naïve — 東京 😀 end", "bell\u0007 and nul\u0000 inside", "analyze 12,345.67 + 8 = ?  x  y",
                "word ".repeat(600))) {
            byte[] body = clientBody(prompt);
            PromptEstimate expected = wholeBody(body);
            PromptEstimate own = PromptEstimate.ofPrompt(prompt);
            assertEquals(expected.tokensQ10(), own.tokensQ10(), prompt);
            assertEquals(expected.keywordBits(), own.keywordBits(), prompt);
            assertEquals(false, own.blind(), prompt);
        }
    }

    /** A prompt past PROMPT_SCAN_MAX: the rest counted at the rate seen, within a per cent of the whole scan. */
    @Test
    void aLongPromptIsScannedInPartAndCountedInFull() {
        // Plain text, and text whose characters a client escapes (control characters: six bytes each).
        for (String prompt : List.of("Explain the difference between 3 and 4 apples, please. ".repeat(2000), // ~110 KB
                "bell\u0007 tab\t quote\" ".repeat(8000))) {
            byte[] body = clientBody(prompt);
            PromptEstimate whole = wholeBody(body);
            PromptEstimate own = PromptEstimate.ofPrompt(prompt);
            assertEquals(whole.tokensQ10(), own.tokensQ10(), whole.tokensQ10() / 100.0, prompt.substring(0, 20));
        }
        String prompt = "Explain the difference between 3 and 4 apples, please. ".repeat(2000);
        assertEquals(PromptEstimate.utf8Length(prompt), prompt.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        String emoji = "😀é東".repeat(10);
        assertEquals(PromptEstimate.utf8Length(emoji), emoji.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
    }

    /** Random text of the kinds prompts hold: ASCII words, escapes clients write, Latin-1, CJK, emoji, lone surrogates. */
    private static String randomPrompt(java.util.Random random, int chars) {
        String[] pieces = {"word", " ", "  ", "42", ",", "\"", "\\", "\n", "\t", "\r", "\u0007", "\u0000", "é", "ß",
            "東京", "😀", "\ud800", "\udfff", "sum", "Ref", "GEN", "analyse", "\u00e9", "/", "\u2028"};
        StringBuilder prompt = new StringBuilder();
        while (prompt.length() < chars) {
            prompt.append(pieces[random.nextInt(pieces.length)]);
        }
        return prompt.toString();
    }

    /** ofPrompt, which reads the prompt's UTF-8 and takes escapes as it goes, against the scan of the body a client writes. */
    @Test
    void ofPromptEqualsTheClientBodysScanOnRandomPrompts() {
        java.util.Random random = new java.util.Random(20261204);
        for (int round = 0; round < 2000; round++) {
            String prompt = randomPrompt(random, random.nextInt(400));
            byte[] body = clientBody(prompt);
            PromptEstimate expected = wholeBody(body);
            PromptEstimate own = PromptEstimate.ofPrompt(prompt);
            assertEquals(expected.tokensQ10(), own.tokensQ10(), prompt);
            assertEquals(expected.keywordBits(), own.keywordBits(), prompt);
        }
    }

    /** A plain prompt longer than the scan: exactly its first PROMPT_SCAN_MAX bytes scanned, the rest counted at the rate seen. */
    @Test
    void aLongPlainPromptIsCutWhereTheScanEnds() {
        String prompt = "Explain the difference between 3 and 4 apples, please. ".repeat(400); // 22,400 bytes
        byte[] body = clientBody(prompt); // {"prompt":"...
        long promptString = "\"prompt\":\"".length() + prompt.length() + 1L;
        PromptEstimate expected = PromptEstimate.scan(body, 1, PromptEstimate.PROMPT_SCAN_MAX, promptString, PromptEstimate.PROMPT_SCAN_MAX);
        assertEquals(expected.tokensQ10(), PromptEstimate.ofPrompt(prompt).tokensQ10());
    }

    /**
     * The scan's loop over plain ASCII (locals, a table per byte) against the scan's definition,
     * {@code Features.add} byte by byte, on random bytes: escapes, UTF-8 and plain text mixed, and
     * cut at random places (a string ending inside an escape or a character).
     */
    @Test
    void theFastLoopCountsWhatAddCountsByteByByte() {
        java.util.Random random = new java.util.Random(42);
        for (int round = 0; round < 2000; round++) {
            byte[] string = randomPrompt(random, random.nextInt(300)).getBytes(StandardCharsets.UTF_8);
            int end = random.nextInt(string.length + 1);
            int keywordBytes = random.nextInt(80);
            PromptEstimate.Features fast = new PromptEstimate.Features();
            fast.startString(keywordBytes);
            fast.feed(string, 0, end, true);
            PromptEstimate.Features reference = new PromptEstimate.Features();
            reference.startString(keywordBytes);
            for (int i = 0; i < end; i++) {
                byte[] escape = io.vertx.core.json.Json.encode(new String(string, i, 1, StandardCharsets.ISO_8859_1))
                        .getBytes(StandardCharsets.ISO_8859_1);
                int c = string[i] & 0xff;
                if (c < 0x80) { // as a client escapes it, without the quotes
                    for (int k = 1; k < escape.length - 1; k++) {
                        reference.add(escape[k] & 0xff);
                    }
                } else {
                    reference.add(c);
                }
            }
            assertEquals(reference.tokensQ10(), fast.tokensQ10(), "round " + round);
            assertEquals(reference.keywords, fast.keywords, "round " + round);
        }
    }
}
