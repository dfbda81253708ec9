package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.SocketMarks;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.RequestHeadParser;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.TokenBlocks;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every constant that C, Java and the scripts share, checked against its one source: the
 * {@code #define}s of nexus_shared.h for numbers, {@link KernelDataPath} for the names the scripts
 * repeat (scripts/lib.sh is shell and cannot import them). BtfLayoutTest does the same for struct
 * layouts; together they fail when any shared fact drifts.
 */
class SharedConstantsTest {

    private static final Path HEADER = Path.of("src/main/bpf/nexus_shared.h");
    private static final Path SCRIPT_LIB = Path.of("scripts/lib.sh");
    /** {@code #define NAME value} with a plain integer value (decimal or hex, optional u/U/ULL suffix). */
    private static final Pattern DEFINE = Pattern.compile("^#define\\s+(\\w+)\\s+(0x[0-9a-fA-F]+|\\d+)[uUlL]*\\b");
    private static final Pattern SHIFT_DEFINE = Pattern.compile("^#define\\s+(\\w+)\\s+\\((\\d+)[uUlL]*\\s*<<\\s*(\\d+)\\)");

    @Test
    void javaConstantsEqualTheHeadersDefines() throws IOException {
        Map<String, Long> header = headerDefines();
        Map<String, Long> java = new LinkedHashMap<>();
        java.put("REQUEST_LINE_MAX", (long) Scorer.REQUEST_LINE_MAX);
        java.put("LINE_HASH_SEED", Scorer.LINE_HASH_SEED);
        java.put("LINE_HASH_MULT", Scorer.LINE_HASH_MULT);
        java.put("HEAD_WINDOW", (long) RequestHeadParser.HEAD_WINDOW);
        java.put("CONTENT_LENGTH_MAX", RequestHeadParser.CONTENT_LENGTH_MAX);
        java.put("TIER_NANO", (long) Tier.NANO.wire());
        java.put("TIER_SMALL", (long) Tier.SMALL.wire());
        java.put("TIER_LARGE", (long) Tier.LARGE.wire());
        java.put("TIER_COUNT", (long) Tier.values().length);
        java.put("NEXUS_MARK_MAGIC", Integer.toUnsignedLong(SocketMarks.MAGIC));
        java.put("NEXUS_MARK_MAGIC_MASK", Integer.toUnsignedLong(SocketMarks.MAGIC_MASK));
        java.put("NEXUS_MARK_KIND_FLOOR", (long) SocketMarks.KIND_FLOOR);
        java.put("NEXUS_MARK_KIND_REQUEST", (long) SocketMarks.KIND_REQUEST);
        java.put("TC_SLOT_POLICY", (long) KernelDataPath.TC_SLOT_POLICY);
        java.put("TC_SLOT_MARK", (long) KernelDataPath.TC_SLOT_MARK);
        java.put("VERDICT_SLOTS", (long) SharedStructs.VERDICT_SLOTS);
        java.put("VERDICT_SLOTS6", (long) SharedStructs.VERDICT_SLOTS6);
        java.put("VERDICT_FALLBACK", (long) SharedStructs.VERDICT_FALLBACK);
        java.put("VERDICT_FALLBACK6", (long) SharedStructs.VERDICT_FALLBACK6);
        java.put("SLOT_HASH_MULT", Integer.toUnsignedLong(SharedStructs.SLOT_HASH_MULT));
        java.put("ADAPT_MAX_EVENTS", (long) AdaptiveSettings.MAX_EVENTS);
        java.put("ADAPT_CUT_MAX_STEPS", (long) AdaptiveSettings.CUT_MAX_STEPS);
        java.put("TOKEN_GAIN_ONE", (long) io.nexuscore.classify.TokenGain.ONE_Q10);
        java.put("TOKEN_GAIN_MAX", (long) io.nexuscore.classify.TokenGain.MAX_Q10);
        java.put("VERDICT_F_BLIND", (long) SharedStructs.VERDICT_F_BLIND);
        java.put("VERDICT_F_COUNTED", (long) SharedStructs.VERDICT_F_COUNTED);
        java.put("VERDICT_F_OVER_REQUESTS", (long) SharedStructs.VERDICT_F_OVER_REQUESTS);
        java.put("VERDICT_F_OVER_TOKENS", (long) SharedStructs.VERDICT_F_OVER_TOKENS);
        java.put("VERDICT_F_OVER_FOR_GOOD", (long) SharedStructs.VERDICT_F_OVER_FOR_GOOD);
        java.put("TENANT_LIMIT_SLOTS", (long) SharedStructs.TENANT_LIMIT_SLOTS);
        java.put("LIMIT_WINDOW_NS", SharedStructs.LIMIT_WINDOW_NS);
        java.put("KEYWORD_SCAN_BYTES", (long) PromptEstimate.KEYWORD_SCAN_BYTES);
        java.put("TRAILER_ALLOWANCE", (long) PromptEstimate.TRAILER_ALLOWANCE);
        java.put("ENVELOPE_GUESS", (long) PromptEstimate.ENVELOPE_GUESS);
        java.put("BODY_WINDOW", (long) PromptEstimate.BODY_WINDOW);
        java.put("PROMPT_ENVELOPE", (long) PromptEstimate.PROMPT_ENVELOPE);
        java.put("FLAT_TRAILER", (long) PromptEstimate.FLAT_TRAILER);
        java.put("PENDING_BODIES", (long) SharedStructs.PENDING_BODIES);
        java.put("PROMPT_EXTRA_MAX", PromptEstimate.EXTRA_MAX);
        java.put("PROMPT_Q10_MAX", PromptEstimate.Q10_MAX);
        java.put("PROMPT_COLON_MAX", (long) PromptEstimate.COLON_MAX);
        java.put("TOKEN_PER_WORD_Q10", (long) PromptEstimate.TOKEN_PER_WORD_Q10);
        java.put("TOKEN_PER_BLANK_RUN_Q10", (long) PromptEstimate.TOKEN_PER_BLANK_RUN_Q10);
        java.put("TOKEN_PER_PUNCT_RUN_Q10", (long) PromptEstimate.TOKEN_PER_PUNCT_RUN_Q10);
        java.put("TOKEN_PER_DIGIT_RUN_Q10", (long) PromptEstimate.TOKEN_PER_DIGIT_RUN_Q10);
        java.put("TOKEN_PER_LETTER_Q10", (long) PromptEstimate.TOKEN_PER_LETTER_Q10);
        java.put("PROMPT_STRINGS", (long) PromptEstimate.PROMPT_STRINGS);
        java.put("TOKEN_BLOCKS", (long) TokenBlocks.BLOCKS);
        java.put("TOKEN_BLOCK_SUPPLEMENTARY", (long) TokenBlocks.SUPPLEMENTARY);
        java.put("TOKEN_BLOCK_WIDE", (long) TokenBlocks.WIDE);
        java.put("TOKEN_TABLE_ENTRIES", (long) TokenBlocks.TABLE_ENTRIES);
        java.put("TOKEN_WIDE_NOT_UNIFORM", (long) TokenBlocks.WIDE_NOT_UNIFORM);
        java.put("TOKEN_PER_BYTE_Q10", (long) PromptEstimate.TOKEN_PER_BYTE_Q10);
        java.put("THRESHOLDS_WRITER_OTHER", (long) io.nexuscore.classify.ThresholdState.WRITER_OTHER);
        java.put("THRESHOLDS_WRITER_API", (long) io.nexuscore.classify.ThresholdState.WRITER_API);
        java.put("THRESHOLDS_WRITER_KERNEL", (long) io.nexuscore.classify.ThresholdState.WRITER_KERNEL);
        for (Map.Entry<String, Long> e : java.entrySet()) {
            assertTrue(header.containsKey(e.getKey()), e.getKey() + " is not #defined in " + HEADER);
            assertEquals(header.get(e.getKey()), e.getValue(), e.getKey() + ": nexus_shared.h and Java disagree");
        }
    }

    @Test
    void scriptsNameTheMapsAndProgramsTheRouterPins() throws IOException {
        String lib = Files.readString(SCRIPT_LIB);
        Matcher maps = Pattern.compile("NX_PINNED_MAPS=\\(([^)]*)\\)", Pattern.DOTALL).matcher(lib);
        assertTrue(maps.find(), "NX_PINNED_MAPS not found in " + SCRIPT_LIB);
        List<String> scripted = Arrays.stream(maps.group(1).trim().split("\\s+")).toList();
        assertEquals(KernelDataPath.PINNED_MAPS, scripted, "scripts/lib.sh NX_PINNED_MAPS vs KernelDataPath.PINNED_MAPS");
        assertEquals(KernelDataPath.XDP_PROGRAM, scriptValue(lib, "NX_XDP_PROGRAM"));
        assertEquals(KernelDataPath.TC_CLASSIFY_PROGRAM, scriptValue(lib, "NX_TC_PROGRAM"));
    }

    /**
     * scripts/lib.sh falls back to literal defaults (it runs before jq may be installed); each must
     * equal the embedded nexuscore.json, the one source of the router's defaults.
     */
    @Test
    void scriptDefaultsEqualTheEmbeddedConfiguration() throws IOException {
        JsonObject defaults = new JsonObject(Files.readString(Path.of("src/main/resources/nexuscore.json")));
        Matcher m = Pattern.compile("nx_config \\.(\\w+)\\.(\\w+) (\\S+)\\)").matcher(Files.readString(SCRIPT_LIB));
        int checked = 0;
        while (m.find()) {
            Object value = defaults.getJsonObject(m.group(1)).getValue(m.group(2));
            String expected = value instanceof JsonArray a
                    ? String.join(" ", a.stream().map(String::valueOf).toList())
                    : String.valueOf(value);
            assertEquals(expected, m.group(3), "scripts/lib.sh default of ." + m.group(1) + "." + m.group(2));
            checked++;
        }
        assertTrue(checked >= 5, "expected the five nx_config defaults in " + SCRIPT_LIB + ", found " + checked);
    }

    /**
     * The records' built-in defaults (used for keys an overlay leaves out) and the C program's
     * initialiser and map-missing fallbacks must equal the embedded nexuscore.json too.
     */
    @Test
    void recordAndKernelDefaultsEqualTheEmbeddedConfiguration() throws IOException {
        JsonObject scoring = new JsonObject(Files.readString(Path.of("src/main/resources/nexuscore.json")))
                .getJsonObject("scoring");
        JsonObject weights = scoring.getJsonObject("weights");
        assertEquals(new io.nexuscore.classify.ScoreWeights(weights.getInteger("sum"), weights.getInteger("ref"),
                weights.getInteger("gen"), weights.getInteger("ana")), io.nexuscore.classify.ScoreWeights.DEFAULT);
        assertEquals(new io.nexuscore.classify.Thresholds(scoring.getInteger("nanoMax"), scoring.getInteger("smallMax")),
                io.nexuscore.classify.Thresholds.DEFAULT);
        String program = Files.readString(Path.of("src/main/bpf/nexus_classify.bpf.c"));
        for (String kw : List.of("sum", "ref", "gen", "ana")) {
            Matcher m = Pattern.compile("\\.weight_" + kw + " = (\\d+),").matcher(program);
            assertTrue(m.find(), ".weight_" + kw + " initialiser not found");
            assertEquals(weights.getInteger(kw), Integer.valueOf(m.group(1)), "C initialiser of weight_" + kw);
        }
        Matcher fallback = Pattern.compile("nano_max = t \\? t->nano_max : (\\d+);\\s+__u32 small_max = t \\? t->small_max : (\\d+);")
                .matcher(program);
        assertTrue(fallback.find(), "tier_for()'s fallback thresholds not found");
        assertEquals(scoring.getInteger("nanoMax"), Integer.valueOf(fallback.group(1)));
        assertEquals(scoring.getInteger("smallMax"), Integer.valueOf(fallback.group(2)));
    }

    private static String scriptValue(String lib, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + "=(\\S+)$").matcher(lib);
        assertTrue(m.find(), name + " not found in " + SCRIPT_LIB);
        return m.group(1);
    }

    private static Map<String, Long> headerDefines() throws IOException {
        Map<String, Long> defines = new HashMap<>();
        for (String line : Files.readAllLines(HEADER)) {
            Matcher m = DEFINE.matcher(line);
            if (m.find()) {
                String v = m.group(2);
                defines.put(m.group(1), v.startsWith("0x") ? Long.parseUnsignedLong(v.substring(2), 16) : Long.parseLong(v));
                continue;
            }
            Matcher s = SHIFT_DEFINE.matcher(line);
            if (s.find()) {
                defines.put(s.group(1), Long.parseLong(s.group(2)) << Integer.parseInt(s.group(3)));
            }
        }
        return defines;
    }
}
