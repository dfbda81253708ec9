package io.nexuscore.e2e;

import io.nexuscore.testing.ExternalProcess;
import java.time.Duration;
import java.util.List;

/** Runs curl, bpftool, ip and tc for the end-to-end tests: output read while the tool runs, killed after 60 s. */
final class Processes {

    record Result(int exitCode, String output) {
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Processes() {
    }

    static Result run(List<String> command) {
        ExternalProcess.Result r = ExternalProcess.run(TIMEOUT, command);
        return new Result(r.exitCode(), r.output());
    }

    /** Runs and requires exit code 0; returns the output. */
    static String ok(List<String> command) {
        Result r = run(command);
        if (r.exitCode() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + r.exitCode() + ": " + r.output());
        }
        return r.output();
    }

    static String ok(String... command) {
        return ok(List.of(command));
    }
}
