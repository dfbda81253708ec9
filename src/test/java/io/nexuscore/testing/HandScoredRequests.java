package io.nexuscore.testing;

import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;

/**
 * Requests whose score and tier were worked out by hand from the documented formula
 * (docs/how-it-works.md; the javadoc of Scorer and PromptEstimate), not computed by the router's
 * scanner and scorer: the expected values of the tests that check what the router assigns, so a
 * broken scorer fails them. {@code HandScoredRequestsTest} holds the Java scorer to every row; the
 * kernel is held to the Java scorer by the parity tests. Each row's comment is its arithmetic:
 *
 * <pre>
 * seen     537 words + 657 second blanks + 909 punctuation runs + 2005 digit runs + 129 letters,
 *          in 1/1024 tokens, over the prompt string's bytes (plain ASCII in every row here: no
 *          escape, no character weight); the string's first character starts a run
 * rest     body whole (at most 256 bytes): the bytes after the closing quote beyond 48, none here;
 *          body longer: the scan stops at body byte 256 inside the string after raw = 256 - start
 *          bytes of it, and rest = length - 256 - allowance, the allowance 16 after a "prompt" key
 *          and 80 - start after a chat's "content"; total = seen + rest * seen / raw (integer division)
 * tokens   total / 1024 rounded, halves up (gain 1)
 * bonus    sum 10, ref 15, gen 20, ana 25 (ScoreWeights.DEFAULT), once each, for a keyword in the
 *          request line or in the prompt's first 64 bytes
 * score    min(255, tokens + bonus); tier under the default thresholds: up to 60 nano, up to 130
 *          small, above large
 * </pre>
 *
 * The token counts the guests report are not in this table: tests take them from jtokkit's
 * cl100k_base (an implementation independent of the guests' C port and of the estimate).
 */
public final class HandScoredRequests {

    /**
     * One request with its hand-worked score and tier.
     *
     * @param prompt the prompt text (read from the corpus on first use for the corpus rows)
     * @param bonus  the keyword bonus in the score, which the guests add to their count too
     */
    public record Request(String name, String method, String path, Supplier<String> prompt,
                          PromptShape shape, int bonus, int score, Tier tier) {

        public String body() {
            return shape.body(prompt.get());
        }

        public String promptText() {
            return prompt.get();
        }

        /** The request line as the scorer reads it: method, path, HTTP/1.1. */
        public byte[] requestLine() {
            return (method + " " + path + " HTTP/1.1").getBytes(StandardCharsets.ISO_8859_1);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** How the prompt sits in the body: the JSON a client library writes (Vert.x's encoder here). */
    public enum PromptShape {
        /** {@code {"model":"whatever","messages":[{"role":"user","content":PROMPT}]}}: the string starts at byte 58. */
        CHAT {
            @Override
            String body(String prompt) {
                return new JsonObject().put("model", "whatever").put("messages", new JsonArray()
                        .add(new JsonObject().put("role", "user").put("content", prompt))).encode();
            }
        },
        /** {@code {"prompt":PROMPT}} (a task or a completion): the string starts at byte 11. */
        TASK {
            @Override
            String body(String prompt) {
                return new JsonObject().put("prompt", prompt).encode();
            }
        };

        abstract String body(String prompt);
    }

    private HandScoredRequests() {
    }

    /** {@code size} characters of "word word ...": each "word" is 4 letters and starts a word. */
    public static String words(int size) {
        return "word ".repeat(size / 5 + 1).substring(0, size);
    }

    private static Request chat(String name, int size, int score, Tier tier) {
        return new Request(name, "POST", "/v1/chat/completions", () -> words(size), PromptShape.CHAT, 0, score, tier);
    }

    // --- "word word ..." chats on /v1/chat/completions (the data-plane tests) ------------------------

    /**
     * Body 82 bytes. Content "word word word word ": 4 words, 16 letters, single blanks.
     * seen 4*537 + 16*129 = 2148 + 2064 = 4212; 4212 / 1024 = 4.11 -> 4; no keyword: 4, nano.
     */
    public static final Request CHAT_20 = chat("chat of 20 bytes of words", 20, 4, Tier.NANO);

    /**
     * Body 93 bytes. Content "word " x 6 + "w": 7 words, 6*4 + 1 = 25 letters.
     * seen 7*537 + 25*129 = 3759 + 3225 = 6984; 6984 / 1024 = 6.82 -> 7; no keyword: 7, nano.
     */
    public static final Request CHAT_31 = chat("chat of 31 bytes of words", 31, 7, Tier.NANO);

    /**
     * Body 58 + 400 + 4 = 462 bytes, the string from byte 58: the scan sees raw = 256 - 58 = 198
     * bytes of it, "word " x 39 + "wor": 40 words, 39*4 + 3 = 159 letters.
     * seen 40*537 + 159*129 = 21480 + 20511 = 41991; allowance 80 - 58 = 22, rest 462 - 256 - 22 = 184;
     * total 41991 + 184*41991/198 = 41991 + 39021 = 81012; 81012 / 1024 = 79.11 -> 79; small.
     */
    public static final Request CHAT_400 = chat("chat of 400 bytes of words", 400, 79, Tier.SMALL);

    /**
     * Body 862 bytes; the same 198 bytes seen as {@link #CHAT_400}: seen 41991; rest 862 - 256 - 22 = 584;
     * total 41991 + 584*41991/198 = 41991 + 123852 = 165843; 165843 / 1024 = 161.96 -> 162; large.
     */
    public static final Request CHAT_800 = chat("chat of 800 bytes of words", 800, 162, Tier.LARGE);

    /** The row of {@code words(size)} as a chat's content; only the sizes worked out above. */
    public static Request chatOfWords(int size) {
        return switch (size) {
            case 20 -> CHAT_20;
            case 31 -> CHAT_31;
            case 400 -> CHAT_400;
            case 800 -> CHAT_800;
            default -> throw new IllegalArgumentException("no hand-worked row for a chat of " + size + " bytes");
        };
    }

    // --- a task's prompt of 200 bytes of words, with and without a keyword in the path -------------

    /**
     * Body 11 + 200 + 2 = 213 bytes, all seen. Prompt "word " x 40: 40 words, 160 letters.
     * seen 40*537 + 160*129 = 21480 + 20640 = 42120; 42120 / 1024 = 41.13 -> 41;
     * "ana" in /v1/tasks/analyze: 41 + 25 = 66, small.
     */
    public static final Request ANALYZE_200 = new Request("analyze task, 200 bytes of words", "POST",
            "/v1/tasks/analyze", () -> words(200), PromptShape.TASK, 25, 66, Tier.SMALL);

    /** The same body as {@link #ANALYZE_200} on /v1/tasks/echo, no keyword: 41, nano. */
    public static final Request ECHO_200 = new Request("echo task, 200 bytes of words", "POST",
            "/v1/tasks/echo", () -> words(200), PromptShape.TASK, 0, 41, Tier.NANO);

    // --- real questions from the shared corpus (end to end) ------------------------------------------
    // Picked so that both the router's score and the guest's (cl100k count + bonus) are clear of the
    // thresholds the end-to-end suites use (60/130, 55/125, nano_max 90 and 100): nano 25 (guest 26),
    // small 76 (guest 64 + 10 = 74), large 183 (guest 156 + 25 = 181). Plain ASCII, no quote or
    // backslash, so the JSON string is the text itself.

    /**
     * GSM8K question 1 (0-based), on /v1/tasks/echo. "A robe takes 2 bolts of blue fiber and half that much
     * white fiber.  How many bolts in total does it take?": body 11 + 105 + 2 = 118 bytes, all seen.
     * 21 words; letters 51 + 29 = 80; punctuation runs 2 (". ?"); digit runs 1 ("2"); second
     * blanks 1 (".  How"). seen 21*537 + 80*129 + 2*909 + 1*2005 + 1*657 = 11277 + 10320 + 1818
     * + 2005 + 657 = 26077; 26077 / 1024 = 25.47 -> 25; no keyword in the line or the prompt's first
     * 64 bytes: 25, nano.
     */
    public static final Request NANO_QUESTION = new Request("GSM8K question 1 on echo", "POST", "/v1/tasks/echo",
            question(1, "A robe takes 2 bolts"), PromptShape.TASK, 0, 25, Tier.NANO);

    /**
     * GSM8K question 26, on /v1/tasks/summarize. "Mishka bought 3 pairs of shorts, 3 pairs of pants,
     * and 3 pairs of shoes. One pair of shorts costs $16.50. One pair of pants costs $22.50 and one
     * pair of shoes costs $42. How many dollars did Mishka spend on all the clothing items?": body
     * 11 + 230 + 2 = 243 bytes, all seen. Words 12 + 5 + 11 + 11 = 39; letters 52 + 20 + 41 + 49 = 162;
     * punctuation runs 11 (", , . $ . . $ . $ . ?"); digit runs 8 (3 3 3 16 50 22 50 42); single blanks.
     * seen 39*537 + 162*129 + 11*909 + 8*2005 = 20943 + 20898 + 9999 + 16040 = 67880;
     * 67880 / 1024 = 66.29 -> 66; "sum" in the line: 66 + 10 = 76, small.
     */
    public static final Request SMALL_QUESTION = new Request("GSM8K question 26 on summarize", "POST",
            "/v1/tasks/summarize", question(26, "Mishka bought 3 pairs"), PromptShape.TASK, 10, 76, Tier.SMALL);

    /**
     * GSM8K question 1199, on /v1/tasks/analyze: "Fred was preparing for a party ..." (713 bytes), body
     * 726 bytes. The scan sees raw = 256 - 11 = 245 bytes, up to "... robbed the cooler, d": words
     * 12 + 18 + 15 = 45 ("d" one); letters 43 + 71 + 77 = 191; punctuation runs 5 (". , . , ,");
     * digit runs 1 ("24"); second blanks 2 (two ".  "). seen 45*537 + 191*129 + 5*909 + 2005 +
     * 2*657 = 24165 + 24639 + 4545 + 2005 + 1314 = 56668; allowance 16 ("prompt"), rest 726 - 256
     * - 16 = 454; total 56668 + 454*56668/245 = 56668 + 105009 = 161677; 161677 / 1024 = 157.89 -> 158;
     * "ana" in the line ("preparing" holds no keyword): 158 + 25 = 183, large.
     */
    public static final Request LARGE_QUESTION = new Request("GSM8K question 1199 on analyze", "POST",
            "/v1/tasks/analyze", question(1199, "Fred was preparing for a party"), PromptShape.TASK, 25, 183, Tier.LARGE);

    /** Every row, for HandScoredRequestsTest. */
    public static List<Request> all() {
        return List.of(CHAT_20, CHAT_31, CHAT_400, CHAT_800, ANALYZE_200, ECHO_200,
                NANO_QUESTION, SMALL_QUESTION, LARGE_QUESTION);
    }

    /**
     * GSM8K question {@code index} (0-based, file order), read on first use (a missing corpus skips
     * or, in CI, fails the test that asks, as Corpus does); a question that no longer starts with
     * {@code start} means the corpus changed under the hand-worked rows.
     */
    private static Supplier<String> question(int index, String start) {
        return new Supplier<>() {
            private String text;

            @Override
            public synchronized String get() {
                if (text == null) {
                    String q = Corpus.gsm8k().get(index);
                    if (!q.startsWith(start)) {
                        throw new IllegalStateException("GSM8K question " + index + " no longer starts with '" + start
                                + "': the hand-worked scores are for another text: " + q);
                    }
                    text = q;
                }
                return text;
            }
        };
    }
}
