package io.nexuscore.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs an external tool (bpftool, ip, curl, promtool, npx, python3, ...) for a test, always under a
 * deadline: the output is read on a thread of its own while this one waits, so a tool that fills
 * its pipe or never closes its output cannot hang the suite, and a tool still running at the
 * deadline is destroyed with every process it started, and the test fails naming it.
 */
public final class ExternalProcess {

    /** Exit code and the output, stdout and stderr merged. */
    public record Result(int exitCode, String output) {
    }

    private ExternalProcess() {
    }

    public static Result run(Duration timeout, List<String> command) {
        return run(timeout, "", command);
    }

    public static Result run(Duration timeout, String... command) {
        return run(timeout, "", List.of(command));
    }

    /** Runs the command with {@code stdin} as its input. */
    public static Result run(Duration timeout, String stdin, List<String> command) {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        }
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        Thread reader = new Thread(() -> drain(p.getInputStream(), output), "output of " + command.get(0));
        reader.setDaemon(true);
        reader.start();
        try {
            try (var in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                // The tool exited without reading its input; its exit code and output say why.
            }
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                reader.join(TimeUnit.SECONDS.toMillis(5));
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout.toSeconds()
                        + " s and was killed; its output so far:\n" + text(output));
            }
            // The tool exited; a child it left behind may still hold the pipe open, so the read is bounded too.
            reader.join(TimeUnit.SECONDS.toMillis(10));
            return new Result(p.exitValue(), text(output));
        } catch (InterruptedException e) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
    }

    /** Runs and requires exit code 0; returns the output. */
    public static String ok(Duration timeout, String... command) {
        Result r = run(timeout, command);
        if (r.exitCode() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + r.exitCode() + ": " + r.output());
        }
        return r.output();
    }

    private static void drain(InputStream in, ByteArrayOutputStream out) {
        byte[] buffer = new byte[8192];
        try (in) {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                synchronized (out) {
                    out.write(buffer, 0, n);
                }
            }
        } catch (IOException e) {
            // The pipe closed under us (the process was destroyed): what was read stays.
        }
    }

    private static String text(ByteArrayOutputStream out) {
        synchronized (out) {
            return out.toString(StandardCharsets.UTF_8);
        }
    }
}
