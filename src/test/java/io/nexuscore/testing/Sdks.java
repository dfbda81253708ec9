package io.nexuscore.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The official client SDKs (the {@code openai} and {@code @anthropic-ai/sdk} npm packages, the Python
 * {@code openai} and {@code anthropic} packages, and Python's {@code requests}) as real clients of a
 * router in tests.
 * {@code scripts/install-sdks.sh} installs them into {@code target/sdks} once per JVM (a no-op when
 * present, so runs after the first need no network); a script given as text then runs under a
 * timeout with the environment it is handed (base URL, API key). Without node or python3, or when the
 * install fails, the test skips with the reason outside CI and fails with CI=true ({@link Privileged}).
 */
public final class Sdks {

    /** First install: npm and pip over the network (about two minutes here); later runs are no-ops. */
    private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(6);
    public static final Duration SCRIPT_TIMEOUT = Duration.ofSeconds(60);
    private static final Path DIR = Path.of("target", "sdks").toAbsolutePath();

    private static Install install;

    private Sdks() {
    }

    /** What a script printed and how it ended. */
    public record Result(int exitCode, String stdout, String stderr, boolean timedOut) {
        public boolean ok() {
            return exitCode == 0 && !timedOut;
        }

        /** For assertion messages: everything the script said. */
        public String describe() {
            return (timedOut ? "timed out; " : "exit " + exitCode + "; ") + "stdout:\n" + stdout + "\nstderr:\n" + stderr;
        }
    }

    private record Install(boolean ok, String reason) {
    }

    /** Runs {@code script} (JavaScript, ES module) with node, the npm SDKs resolvable from it. */
    public static Result node(String script, Map<String, String> env) {
        return node(script, env, List.of());
    }

    /** {@link #node(String, Map)} under {@code wrapper} (e.g. {@code ip netns exec NAME}: a client in another namespace). */
    public static Result node(String script, Map<String, String> env, List<String> wrapper) {
        requireInstalled();
        Path file = write("script-", ".mjs", script);
        try {
            return run(wrapped(wrapper, "node", file.toString()), env, SCRIPT_TIMEOUT);
        } finally {
            delete(file);
        }
    }

    /** Runs {@code script} (Python 3) with the venv's interpreter, the PyPI SDKs importable. */
    public static Result python(String script, Map<String, String> env) {
        return python(script, env, List.of());
    }

    /** {@link #python(String, Map)} under {@code wrapper} (e.g. {@code ip netns exec NAME}). */
    public static Result python(String script, Map<String, String> env, List<String> wrapper) {
        requireInstalled();
        Path file = write("script-", ".py", script);
        try {
            return run(wrapped(wrapper, DIR.resolve("py/bin/python").toString(), file.toString()), env, SCRIPT_TIMEOUT);
        } finally {
            delete(file);
        }
    }

    private static List<String> wrapped(List<String> wrapper, String... command) {
        List<String> all = new java.util.ArrayList<>(wrapper);
        all.addAll(List.of(command));
        return all;
    }

    /** Installs once per JVM; skips (outside CI) or fails (CI=true) with the reason when it cannot. */
    public static synchronized void requireInstalled() {
        if (install == null) {
            install = installOnce();
        }
        Privileged.require(install.ok(), install.reason());
    }

    private static Install installOnce() {
        for (String tool : List.of("node", "npm", "python3")) {
            if (!onPath(tool)) {
                return new Install(false, tool + " is not on PATH (Debian nodejs, npm, python3-venv; run scripts/install-deps.sh)");
            }
        }
        Path script = projectRoot().resolve("scripts/install-sdks.sh");
        Result r = run(List.of("bash", script.toString(), DIR.toString()), Map.of(), INSTALL_TIMEOUT);
        if (!r.ok()) {
            return new Install(false, "scripts/install-sdks.sh " + DIR + " failed (" + r.describe() + ")");
        }
        return new Install(true, "");
    }

    /** Runs {@code command}, destroying it (and its children) when it outlives {@code timeout}. */
    public static Result run(List<String> command, Map<String, String> env, Duration timeout) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(DIR.toFile().isDirectory() ? DIR.toFile() : null);
        pb.environment().putAll(env);
        // Scripts resolve the npm packages from DIR/node (an ES module resolves imports from its own
        // location, which is a temp file, so NODE_PATH alone is not enough: see write()).
        pb.environment().put("NODE_PATH", DIR.resolve("node/node_modules").toString());
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            return new Result(-1, "", "could not start " + command + ": " + e, false);
        }
        try {
            p.getOutputStream().close();
            Drain out = new Drain(p.getInputStream());
            Drain err = new Drain(p.getErrorStream());
            boolean finished = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!finished) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            out.join(5_000);
            err.join(5_000);
            return new Result(finished ? p.exitValue() : -1, out.text(), err.text(), !finished);
        } catch (InterruptedException e) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            return new Result(-1, "", "interrupted", true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads a process stream on a thread of its own so a chatty child never blocks on a full pipe. */
    private static final class Drain extends Thread {
        private final InputStream in;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Drain(InputStream in) {
            this.in = in;
            setDaemon(true);
            start();
        }

        @Override
        public void run() {
            try {
                in.transferTo(bytes);
            } catch (IOException ignored) {
                // the process was destroyed: what was read so far is kept
            }
        }

        synchronized String text() {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** Scripts are written inside DIR so that node resolves {@code import "openai"} from DIR/node. */
    private static Path write(String prefix, String suffix, String text) {
        try {
            Path dir = Files.createDirectories(DIR.resolve("node/scripts"));
            Path file = Files.createTempFile(dir, prefix, suffix);
            Files.writeString(file, text);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void delete(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            System.err.println("Sdks: could not remove " + file + ": " + e);
        }
    }

    private static boolean onPath(String tool) {
        String path = System.getenv().getOrDefault("PATH", "");
        List<Path> dirs = new ArrayList<>();
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (!d.isEmpty()) {
                dirs.add(Path.of(d));
            }
        }
        return dirs.stream().anyMatch(d -> Files.isExecutable(d.resolve(tool)));
    }

    /** Maven runs tests in the project directory; the script sits under it. */
    private static Path projectRoot() {
        return Path.of("").toAbsolutePath();
    }
}
