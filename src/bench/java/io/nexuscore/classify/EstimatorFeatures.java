package io.nexuscore.classify;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * For bench/estimator-fit.sh: one CSV row per prompt of the given JSON-lines files with its
 * cl100k_base count (the truth), the shipped estimate, the ASCII features the scan counts
 * (PromptEstimate.Features over the prompt written as a JSON string) and how many characters fall
 * in each block of 64 code points (TokenBlocks' index), which is what the block weights are fitted to.
 * Lives in the classify package to reach the package-private PromptEstimate.Features, whose
 * per-feature counts nothing but this fit needs.
 *
 * <pre>java -cp ... io.nexuscore.classify.EstimatorFeatures KIND=FILE... &gt; features.csv</pre>
 */
public final class EstimatorFeatures {

    private EstimatorFeatures() {
    }

    public static void main(String[] args) throws IOException {
        Encoding cl100k = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        System.out.println("kind,truth,estimate,words,second_blanks,punct_runs,digit_runs,letters,blocks");
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("want KIND=FILE, got " + arg);
            }
            String kind = arg.substring(0, eq);
            for (String line : Files.readAllLines(Path.of(arg.substring(eq + 1)))) {
                if (line.isBlank()) {
                    continue;
                }
                String prompt = new JsonObject(line).getString("prompt");
                byte[] string = Json.encode(prompt).getBytes(StandardCharsets.UTF_8);
                Map<Integer, Integer> blocks = new TreeMap<>();
                prompt.codePoints().filter(cp -> cp >= 0x80)
                        .forEach(cp -> blocks.merge(TokenBlocks.blockOf(cp), 1, Integer::sum));
                StringBuilder row = new StringBuilder(kind).append(',').append(cl100k.countTokensOrdinary(prompt))
                        .append(',').append(PromptEstimate.ofPrompt(prompt).tokens(TokenGain.ONE_Q10))
                        .append(',').append(count(string, 1, 0, 0, 0, 0)).append(',').append(count(string, 0, 1, 0, 0, 0))
                        .append(',').append(count(string, 0, 0, 1, 0, 0)).append(',').append(count(string, 0, 0, 0, 1, 0))
                        .append(',').append(count(string, 0, 0, 0, 0, 1)).append(',');
                blocks.forEach((block, count) -> row.append(Integer.toHexString(block)).append(':').append(count).append(';'));
                System.out.println(row);
            }
        }
    }

    /**
     * One feature of a JSON string's scan: the scan with that feature's weight 1 and the others' 0
     * (words, second blanks, punctuation runs, digit runs, letters).
     */
    private static long count(byte[] string, int word, int secondBlank, int punctRun, int digitRun, int letter) {
        PromptEstimate.Features f = new PromptEstimate.Features(
                PromptEstimate.Features.unitWeights(word, secondBlank, punctRun, digitRun, letter), letter);
        f.feed(string, 1, string.length - 1, false); // inside the quotes, as the scan sees it
        return f.unitsQ10;
    }
}
