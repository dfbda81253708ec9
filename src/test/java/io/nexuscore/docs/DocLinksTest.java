package io.nexuscore.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link and every repository path cited in README.md and docs/*.md resolves, so a
 * document cannot point at a file that moved or a heading that was renamed. The links of the
 * benchmark histories (bench/*.md) are checked as well; the paths they cite are a record of past
 * runs and are not.
 *
 * <p>Links: every Markdown link or image outside code ({@code [text](target)}) that is not a URL must
 * name an existing file or directory relative to the document, and a {@code #fragment} must be a
 * heading of the target document (GitHub's anchor rule). Paths: inside every inline code span and
 * every fenced block, each token shaped like a path ({@code a/b/c.ext}, {@code ./x.sh}) whose first
 * segment is a top-level entry of the repository ({@code src/}, {@code bench/}, {@code scripts/},
 * {@code docker/}, {@code docs/}, {@code .ci/}) must exist; {@code *} globs must match something,
 * and {@code ...} stands for any directories in between. Paths of the running system
 * ({@code /sys/fs/bpf/...}, {@code ./run/}, {@code target/}) are not repository paths and are not checked.
 */
class DocLinksTest {

    private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
    /** A path-shaped token: segments of name characters separated by slashes, not inside a longer path or URL. */
    private static final Pattern PATH = Pattern.compile("(?<![\\w/$.}:@<>-])(\\.?\\.?/)?[\\w.*-]+(?:/[\\w.*-]+)+/?(?![\\w<{$])");
    static final Set<String> REPOSITORY_TOP = Set.of("src", "bench", "scripts", "docker", "docs", ".ci");
    /** Made by the build and the scripts when they run: never in the repository. */
    static final Set<String> RUNTIME = Set.of("run", "target");

    @Test
    void everyRelativeLinkResolves() {
        List<String> broken = new ArrayList<>();
        List<Path> documents = new ArrayList<>(Docs.documents());
        documents.addAll(Docs.benchmarkHistories());
        for (Path doc : documents) {
            for (Docs.Line line : Docs.lines(Docs.read(doc))) {
                if (line.inFence()) {
                    continue;
                }
                Matcher m = LINK.matcher(withoutCodeSpans(line.text()));
                while (m.find()) {
                    String problem = checkLink(doc, m.group(1));
                    if (problem != null) {
                        broken.add(where(doc, line) + m.group(1) + ": " + problem);
                    }
                }
            }
        }
        assertEquals(List.of(), broken, "links that do not resolve");
    }

    @Test
    void everyCitedRepositoryPathExists() {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (Path doc : Docs.documents()) {
            for (Docs.Line line : Docs.lines(Docs.read(doc))) {
                List<String> code = new ArrayList<>();
                if (line.inFence()) {
                    code.add(line.text());
                } else {
                    Matcher span = CODE_SPAN.matcher(line.text());
                    while (span.find()) {
                        code.add(span.group(2));
                    }
                }
                for (String text : code) {
                    Matcher path = PATH.matcher(text);
                    while (path.find()) {
                        String cited = path.group();
                        if (!isRepositoryPath(cited)) {
                            continue;
                        }
                        checked++;
                        if (!exists(cited)) {
                            missing.add(where(doc, line) + cited);
                        }
                    }
                }
            }
        }
        assertTrue(checked > 50, "the check found the documents' paths (" + checked + ")");
        assertEquals(List.of(), missing, "cited repository paths that do not exist");
    }

    /** The checker itself: what it takes for a repository path, and that it tells existing from missing. */
    @Test
    void theCheckerTellsRepositoryPathsFromOthers() {
        assertTrue(isRepositoryPath("bench/kernel-bench.sh"));
        assertTrue(isRepositoryPath("./test.sh"));
        assertTrue(isRepositoryPath("src/main/bpf/build.sh"));
        assertTrue(!isRepositoryPath("/sys/fs/bpf/nexuscore"));
        assertTrue(!isRepositoryPath("bpf/ParityTest"), "a test named by its package is not a path");
        assertTrue(!isRepositoryPath("target/bench-classes"), "build output is not in the repository");
        assertTrue(!isRepositoryPath("./run/control.token"), "the scripts' run directory is not in the repository");
        assertTrue(exists("scripts/install-deps.sh") && exists("bench/*-results.md") && exists("src/.../RouterConfig.java"));
        assertTrue(!exists("scripts/no-such-script.sh") && !exists("bench/*-nothing.md"));
        assertTrue(checkLink(Docs.root().resolve("README.md"), "docs/no-such.md") != null);
        assertTrue(checkLink(Docs.root().resolve("README.md"), "#no-such-heading") != null);
        assertEquals(null, checkLink(Docs.root().resolve("README.md"), "#quick-start"));
        assertEquals("data-plane--bash-benchdataplane-benchsh-10-10", slug("Data plane — `bash bench/dataplane-bench.sh 10 10`"), "GitHub keeps both hyphens around a dropped dash");
    }

    private static String withoutCodeSpans(String line) {
        return CODE_SPAN.matcher(line).replaceAll("");
    }

    private static String where(Path doc, Docs.Line line) {
        return Docs.root().relativize(doc) + ":" + line.number() + ": ";
    }

    static boolean isRepositoryPath(String token) {
        if (token.startsWith("/") || token.startsWith("../")) {
            return false;
        }
        String path = token.startsWith("./") ? token.substring(2) : token;
        int slash = path.indexOf('/');
        String first = slash < 0 ? path : path.substring(0, slash);
        if (RUNTIME.contains(first)) {
            return false;
        }
        // ./start.sh: a file at the top; anything deeper only under a directory the repository holds.
        return slash < 0 ? token.startsWith("./") : REPOSITORY_TOP.contains(first);
    }

    static boolean exists(String cited) {
        Path root = Docs.root();
        String path = cited.startsWith("./") ? cited.substring(2) : cited;
        if (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (!path.contains("*") && !path.contains("...")) {
            return Files.exists(root.resolve(path));
        }
        String glob = path.replace("/.../", "/**/");
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
        String top = path.substring(0, path.indexOf('/'));
        try (Stream<Path> files = Files.walk(root.resolve(top))) {
            return files.map(root::relativize).anyMatch(matcher::matches);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Null when the link resolves, else what is wrong with it. */
    static String checkLink(Path doc, String target) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return null; // https:, mailto: and the like: not the repository's to check
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String fragment = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        if (!resolved.startsWith(Docs.root())) {
            return "points outside the repository";
        }
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (fragment != null) {
            if (!resolved.getFileName().toString().endsWith(".md")) {
                return "a fragment on a file that is not Markdown";
            }
            if (!anchors(resolved).contains(fragment)) {
                return "no heading with the anchor #" + fragment + " in " + Docs.root().relativize(resolved);
            }
        }
        return null;
    }

    /** The anchors GitHub gives the document's headings (a repeated heading gets -1, -2, ...). */
    static Set<String> anchors(Path markdown) {
        Set<String> anchors = new HashSet<>();
        for (Docs.Line line : Docs.lines(Docs.read(markdown))) {
            if (line.inFence() || !line.text().startsWith("#")) {
                continue;
            }
            String heading = line.text().replaceFirst("^#+\\s*", "");
            String base = slug(heading);
            String anchor = base;
            for (int n = 1; !anchors.add(anchor); n++) {
                anchor = base + "-" + n;
            }
        }
        return anchors;
    }

    /** GitHub's rule: lower case, punctuation dropped (letters, digits, spaces, hyphens and underscores kept), spaces to hyphens. */
    static String slug(String heading) {
        return heading.toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N} _-]", "")
                .replace(' ', '-');
    }
}
