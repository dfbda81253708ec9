package io.nexuscore.kernel;

import io.nexuscore.testing.ExternalProcess;
import java.time.Duration;
import java.util.List;

/** Runs ip/tc/curl/bpftool for the veth tests: output read while the tool runs, killed after 60 s. */
final class Shell {

    record Result(int exitCode, String output) {
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Shell() {
    }

    static Result run(String... command) {
        ExternalProcess.Result r = ExternalProcess.run(TIMEOUT, List.of(command));
        return new Result(r.exitCode(), r.output());
    }

    /** Runs and requires exit code 0. */
    static String ok(String... command) {
        Result r = run(command);
        if (r.exitCode() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + r.exitCode() + ": " + r.output());
        }
        return r.output();
    }
}
