package io.nexuscore.testing;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Prompts people wrote, for tests whose inputs must not be shaped to pass: the shared corpus
 * (../shared/corpus beside the checkout, or NEXUSCORE_CORPUS: GSM8K, MT-Bench) and the unseen
 * sets in bench/data (other languages, scripts, code, structured data). Outside CI a missing
 * corpus skips the test with the reason; with CI=true it fails.
 */
public final class RealPrompts {

    private RealPrompts() {
    }

    /** The corpus directory. */
    public static Path corpusDir() {
        String override = System.getenv("NEXUSCORE_CORPUS");
        Path dir = override != null ? Path.of(override) : Path.of("..", "shared", "corpus");
        if (!Files.isDirectory(dir)) {
            String reason = "the prompt corpus is not at " + dir.toAbsolutePath() + " (set NEXUSCORE_CORPUS)";
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(reason);
            }
            Assumptions.abort(reason);
        }
        return dir;
    }

    /** Every {@code prompt} of a JSON-lines file of the corpus, e.g. {@code mt-bench-questions.jsonl}. */
    public static List<String> corpus(String file) {
        return read(corpusDir().resolve(file));
    }

    /** Every {@code prompt} of a set in bench/data, e.g. {@code unseen-scripts.jsonl}. */
    public static List<String> unseen(String file) {
        return read(Path.of("bench", "data", file));
    }

    /** Every n-th prompt of {@code prompts}, from the first: a spread over a file's lengths. */
    public static List<String> everyNth(List<String> prompts, int n) {
        List<String> picked = new ArrayList<>();
        for (int i = 0; i < prompts.size(); i += n) {
            picked.add(prompts.get(i));
        }
        return picked;
    }

    private static List<String> read(Path file) {
        try {
            List<String> prompts = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                if (!line.isBlank()) {
                    prompts.add(new JsonObject(line).getString("prompt"));
                }
            }
            return prompts;
        } catch (IOException e) {
            throw new UncheckedIOException("reading prompts from " + file, e);
        }
    }
}
