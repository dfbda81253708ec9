package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestAbi;
import io.nexuscore.tiers.wasm.GuestAbi.GuestAnswer;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The guests' token count is cl100k_base as jtokkit counts it (the ranks are compiled into the
 * guest from the jtokkit jar; the split is ported from jtokkit's parser), on both engines; and the
 * guest judges its tier against the policy the host hands over on each call.
 */
class GuestTokenCountTest {

    static final Encoding CL100K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

    /** Prompts chosen to walk every branch of the cl100k split, plus real-looking text. */
    static final List<String> PROMPTS = List.of(
            "",
            "a",
            "Hello world",
            "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
                    + "for her friends every day with four. She sells the remainder at the farmers' market daily "
                    + "for $2 per fresh duck egg. How much in dollars does she make every day at the farmers' market?",
            "Compose an engaging travel blog post about a recent trip to Hawaii, highlighting cultural experiences "
                    + "and must-see attractions.",
            // contractions, in every case the parser distinguishes
            "I'm sure you'll see they're right, it's what we've said; I'D go. YOU'LL SEE. We'Re 'tis",
            // numbers: runs of digits split in threes, decimals, Unicode numerals
            "1234567 3.14159 1,000,000 ½ 3½ ١٢٣٤ Ⅻ 2024-12-01T17:39:28Z",
            // whitespace: runs, tabs, CR LF, trailing space, space before a digit, Unicode spaces
            "x   \n   y\r\n\r\n  z\t\tw    \n\n\n  7 \u00a0a\u3000b\u2009c   ",
            "   ",
            "\n",
            // punctuation runs, with trailing newlines
            "Wait... what?!?\n\n(see [1], {x: 2}) --> <<ok>> ;; ``code``\n",
            // code
            "def f(x):\n    return {\"a\": x ** 2, 'b': [i for i in range(10)]}\n\nprint(f(3))\n",
            // non-Latin scripts, accents, emoji, combining marks
            "Ça va? Größe, naïve café. Привет, как дела? 你好，世界！ こんにちは。 مرحبا بالعالم 😀👍🏽 e\u0301",
            // long words and a word longer than any token
            "Pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism "
                    + "x".repeat(1500),
            // multiple choice
            "Which gas do plants absorb?\nA) Oxygen\nB) Carbon dioxide\nC) Nitrogen\nD) Helium\nAnswer:",
            // special-token text is plain text
            "<|endoftext|> <|fim_prefix|>",
            // pieces longer than the guest's simple merge handles (128 bytes): the heap-ordered merge
            "a".repeat(5000),
            lettersFrom(7, 3000, "abcdefghijklmnopqrstuvwxyzéüß"),
            lettersFrom(8, 700, "的一是不了人我在有他这中大来上"),
            "!?".repeat(400) + " " + "\t".repeat(300) + "x");

    /** A deterministic pseudo-random run of letters (no separators: one piece for the pre-tokenizer). */
    static String lettersFrom(long seed, int length, String alphabet) {
        java.util.Random random = new java.util.Random(seed);
        StringBuilder b = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            b.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return b.toString();
    }

    static WasmEngine chicory;
    static WasmEngine wasmtime;

    @BeforeAll
    static void engines() {
        chicory = TestTiers.engine(TierConfig.Engine.CHICORY);
        wasmtime = TestTiers.engine(TierConfig.Engine.WASMTIME);
    }

    @AfterAll
    static void close() {
        chicory.close();
        wasmtime.close();
    }

    private static CoreInstance instance(TierConfig.Engine kind) {
        WasmEngine engine = kind == TierConfig.Engine.CHICORY ? chicory : wasmtime;
        // nano's ceiling: the tables and the counting scratch fit the smallest tier.
        return engine.compile("nano", TestTiers.guest(Tier.NANO)).instantiate(1, (int) (64 * MB / 65_536));
    }

    private static GuestAnswer ask(CoreInstance instance, TierRequest request) {
        return instance.withDeadline(30_000, () -> GuestAbi.call(instance, request));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TierConfig.Engine.class)
    void promptTokensEqualJtokkit(TierConfig.Engine kind) {
        List<String> wrong = new ArrayList<>();
        try (CoreInstance instance = instance(kind)) {
            for (String prompt : PROMPTS) {
                int expected = CL100K.countTokensOrdinary(prompt);
                int got = ask(instance, new TierRequest("chat", prompt, 0, TierRequest.Simulation.NONE)).promptTokens();
                if (got != expected) {
                    wrong.add("guest " + got + " jtokkit " + expected + ": " + prompt);
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    /** The same prompt moves between tiers when (and only when) the thresholds handed over move. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TierConfig.Engine.class)
    void theGuestJudgesAgainstTheThresholdsHandedOver(TierConfig.Engine kind) {
        String prompt = PROMPTS.get(3); // 64 tokens, no keyword in its first 64 bytes
        int tokens = CL100K.countTokens(prompt);
        try (CoreInstance instance = instance(kind)) {
            TierRequest base = new TierRequest("chat", prompt, 0, TierRequest.Simulation.NONE);
            GuestAnswer asDefault = ask(instance, base.judgedBy(policy(new Thresholds(60, 130))));
            assertEquals(tokens, asDefault.observedScore());
            assertEquals(Tier.SMALL, asDefault.observedTier());
            assertEquals(Tier.NANO, ask(instance, base.judgedBy(policy(new Thresholds(tokens, 130)))).observedTier());
            assertEquals(Tier.SMALL, ask(instance, base.judgedBy(policy(new Thresholds(tokens - 1, tokens)))).observedTier());
            assertEquals(Tier.LARGE, ask(instance, base.judgedBy(policy(new Thresholds(10, tokens - 1)))).observedTier());
        }
    }

    /** The scorer's keyword policy: the task name and the prompt's first bytes, each keyword once. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(TierConfig.Engine.class)
    void keywordsAddTheirWeightOnce(TierConfig.Engine kind) {
        ScoreWeights w = new ScoreWeights(10, 15, 20, 25);
        AssessmentPolicy policy = new AssessmentPolicy(Thresholds.DEFAULT, w, 16);
        try (CoreInstance instance = instance(kind)) {
            String plain = "Tell me a story about a dog";
            int t = CL100K.countTokens(plain);
            assertEquals(t, score(instance, "chat", plain, policy));
            assertEquals(t + 10, score(instance, "summarize", plain, policy));
            String early = "Refine, SUMmarize: " + plain;
            assertEquals(CL100K.countTokens(early) + 10 + 15, score(instance, "chat", early, policy));
            // "analysis" lies past the 16 scanned bytes: no bonus.
            String late = "Tell me a story, then an analysis";
            assertEquals(CL100K.countTokens(late), score(instance, "chat", late, policy));
            // Once per keyword, however often it occurs.
            assertEquals(t + 20, score(instance, "generate-general", plain, policy));
        }
    }

    private static int score(CoreInstance instance, String task, String prompt, AssessmentPolicy policy) {
        return ask(instance, new TierRequest(task, prompt, 0, TierRequest.Simulation.NONE).judgedBy(policy)).observedScore();
    }

    private static AssessmentPolicy policy(Thresholds thresholds) {
        return AssessmentPolicy.DEFAULT.withThresholds(thresholds);
    }
}
