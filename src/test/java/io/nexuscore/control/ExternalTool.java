package io.nexuscore.control;

import io.nexuscore.testing.ExternalProcess;
import io.nexuscore.testing.Privileged;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

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

    /**
     * Runs the tool with stdin, returning exit code and combined output; a tool still running after
     * {@link #TIMEOUT} (a hung npx fetching a package, a python waiting on something) is killed and the test fails.
     */
    static Result run(String stdin, String... command) {
        ExternalProcess.Result r = ExternalProcess.run(TIMEOUT, stdin, List.of(command));
        return new Result(r.exitCode(), r.output());
    }

    /** Generous: npx's first run unpacks its package; promtool and python answer in a second. */
    static final Duration TIMEOUT = Duration.ofMinutes(3);

    record Result(int exitCode, String output) {
    }
}
