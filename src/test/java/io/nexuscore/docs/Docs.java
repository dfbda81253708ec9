package io.nexuscore.docs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The repository's Markdown documents as the docs tests read them: README.md and docs/*.md. */
final class Docs {

    private Docs() {
    }

    /** The repository root: Maven runs the tests in the project directory. */
    static Path root() {
        Path root = Path.of("").toAbsolutePath();
        assertTrue(Files.isRegularFile(root.resolve("README.md")) && Files.isDirectory(root.resolve("docs")),
                "the tests run in the repository root (README.md and docs/ beside pom.xml), not in " + root);
        return root;
    }

    static List<Path> documents() {
        Path root = root();
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(f -> f.getFileName().toString().endsWith(".md")).sorted().forEach(docs::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }

    /** The benchmark histories, bench/*.md: their links are checked too (their old paths are history, not checked). */
    static List<Path> benchmarkHistories() {
        try (Stream<Path> files = Files.list(root().resolve("bench"))) {
            return files.filter(f -> f.getFileName().toString().endsWith(".md")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A document's lines with each fenced code block's lines marked, so prose and code can be told apart. */
    record Line(int number, String text, boolean inFence) {
    }

    static List<Line> lines(String markdown) {
        List<Line> out = new ArrayList<>();
        boolean fence = false;
        int n = 0;
        for (String line : markdown.split("\n", -1)) {
            n++;
            boolean marker = line.stripLeading().startsWith("```");
            out.add(new Line(n, line, fence || marker));
            if (marker) {
                fence = !fence;
            }
        }
        return out;
    }
}
