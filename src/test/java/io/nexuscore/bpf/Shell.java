package io.nexuscore.bpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs ip/tc/curl for the veth tests; output captured, bounded by a timeout. */
final class Shell {

    record Result(int exitCode, String output) {
    }

    private Shell() {
    }

    static Result run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + String.join(" ", command));
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + List.of(command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
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
