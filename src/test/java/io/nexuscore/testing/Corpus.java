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
        Path file = DIR.resolve("gsm8k-test.jsonl");
        Privileged.require(Files.isRegularFile(file), "the shared prompt corpus is missing: " + file.toAbsolutePath());
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
