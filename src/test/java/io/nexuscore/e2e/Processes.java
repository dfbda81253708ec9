package io.nexuscore.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs curl, bpftool, ip and tc for the end-to-end tests: output captured, bounded by a timeout. */
final class Processes {

    record Result(int exitCode, String output) {
    }

    private Processes() {
    }

    static Result run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            // Read on this thread; the timeout bounds a process that keeps its output open.
            var output = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out after 60 s: " + String.join(" ", command));
            }
            return new Result(p.exitValue(), output.get(10, TimeUnit.SECONDS));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("cannot read the output of " + command, e);
        }
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
