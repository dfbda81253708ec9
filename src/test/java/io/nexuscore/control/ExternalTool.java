package io.nexuscore.control;

import io.nexuscore.testing.Privileged;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A Debian-packaged tool a test drives (scripts/install-deps.sh installs it). Outside CI a missing tool
 * skips the test with the reason; with CI=true it fails, so CI never passes without running it.
 */
final class ExternalTool {

    private ExternalTool() {
    }

    static Path require(String path, String debianPackage) {
        Path tool = Path.of(path);
        Privileged.require(Files.isExecutable(tool),
                path + " is missing (Debian package " + debianPackage + "; run scripts/install-deps.sh)");
        return tool;
    }

    static void requireFile(String path, String debianPackage) {
        Privileged.require(Files.exists(Path.of(path)),
                path + " is missing (Debian package " + debianPackage + "; run scripts/install-deps.sh)");
    }

    /** Runs the tool with stdin, returning exit code and combined output. */
    static Result run(String stdin, String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(stdin.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        return new Result(p.waitFor(), out);
    }

    record Result(int exitCode, String output) {
    }
}
