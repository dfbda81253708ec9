package io.nexuscore.ops;

import io.nexuscore.testing.Privileged;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The suite's rule for tests that need something of the machine (root, a free interface, a Docker
 * engine): outside CI they skip with the reason; with CI=true they fail, never skip. Plus running
 * the repository's scripts with a bounded wait.
 */
final class OpsRules {

    private OpsRules() {
    }

    static boolean inCi() {
        return Privileged.inCi();
    }

    /** Skips (outside CI) or fails (in CI) with {@code reason} unless {@code condition} holds. */
    static void require(boolean condition, String reason) {
        Privileged.require(condition, reason);
    }

    static boolean isRoot() {
        return Privileged.isRoot();
    }

    /** The repository root (failsafe runs with the project directory as the working directory). */
    static Path projectDir() {
        Path dir = Path.of("").toAbsolutePath();
        if (!Files.isRegularFile(dir.resolve("pom.xml"))) {
            throw new IllegalStateException("not run from the project directory: " + dir);
        }
        return dir;
    }

    /** The shaded router jar `package` built. */
    static Path routerJar() throws IOException {
        try (var files = Files.list(projectDir().resolve("target"))) {
            return files.filter(p -> p.getFileName().toString().matches("nexuscore-.*\\.jar"))
                    .filter(p -> !p.getFileName().toString().startsWith("original-"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no target/nexuscore-*.jar: run after `mvn package`"));
        }
    }

    record Run(int exitCode, String output) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n" + output;
        }
    }

    /** Runs a command in the project directory, merging stderr into stdout; kills it after the timeout. */
    static Run run(List<String> command, Map<String, String> env, long timeoutSeconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(projectDir().toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Path log = Files.createTempFile("nexuscore-ops-", ".log");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        try {
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                fail(String.join(" ", command) + " did not finish within " + timeoutSeconds + " s:\n"
                        + Files.readString(log, StandardCharsets.UTF_8));
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println("$ " + String.join(" ", command) + "\n" + output);
            return new Run(p.exitValue(), output);
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
