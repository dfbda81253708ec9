package io.nexuscore.testing;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Real prompts for end-to-end tests, from the shared corpus beside the repository
 * ({@code ../shared/corpus}: GSM8K questions written by people), so that a request's text has the
 * mix of words, numbers and punctuation real traffic has rather than one word repeated. Outside CI a
 * missing corpus skips the test with the reason; with CI=true it fails (Privileged's rule).
 */
public final class Corpus {

    /** Relative to the repository root, where Maven runs the tests. */
    static final Path DIR = Path.of("..", "shared", "corpus");

    private Corpus() {
    }

    /** The GSM8K questions in file order. */
    public static List<String> gsm8k() {
        return prompts("gsm8k-test.jsonl");
    }

    /** Every {@code prompt} of a JSON-lines file of the shared corpus, e.g. {@code mt-bench-questions.jsonl}. */
    public static List<String> prompts(String file) {
        Path path = DIR.resolve(file);
        Privileged.require(Files.isRegularFile(path), "the shared prompt corpus is missing: " + path.toAbsolutePath());
        return read(path);
    }

    /** Every {@code prompt} of a set in bench/data, text of kinds nothing was tuned to (scripts, code, passages). */
    public static List<String> unseen(String file) {
        return read(Path.of("bench", "data", file));
    }

    /** Every n-th of {@code prompts}, from the first: a spread over a file's lengths. */
    public static List<String> everyNth(List<String> prompts, int n) {
        return java.util.stream.IntStream.range(0, prompts.size()).filter(i -> i % n == 0).mapToObj(prompts::get).toList();
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
                    .filter(line -> !line.isBlank())
                    .map(line -> new JsonObject(line).getString("prompt"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first question of at most {@code maxBytes} bytes of UTF-8: a short real prompt. */
    public static String shortQuestion(int maxBytes) {
        return gsm8k().stream()
                .filter(q -> q.getBytes(StandardCharsets.UTF_8).length <= maxBytes)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no question of at most " + maxBytes + " bytes in the corpus"));
    }

    /**
     * Questions joined by blank lines, from the first, until the text holds at least {@code minBytes}
     * bytes of UTF-8: a long prompt made of real sentences (about 4.25 bytes per cl100k token).
     */
    public static String atLeast(int minBytes) {
        StringBuilder text = new StringBuilder();
        for (String prompt : gsm8k()) {
            if (text.length() > 0) {
                text.append("\n\n");
            }
            text.append(prompt);
            if (text.toString().getBytes(StandardCharsets.UTF_8).length >= minBytes) {
                return text.toString();
            }
        }
        throw new IllegalStateException("the corpus holds fewer than " + minBytes + " bytes");
    }
}
