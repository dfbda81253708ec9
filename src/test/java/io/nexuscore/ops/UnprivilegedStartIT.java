package io.nexuscore.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The router started as {@code nobody} on the default configuration (only the ports moved so it
 * runs beside others): it comes up in user-space mode, says so in one log line, keeps its state and
 * its generated control token under ./run of its working directory, and serves an authenticated PATCH.
 * Needs root to switch to nobody: outside CI it skips otherwise.
 */
class UnprivilegedStartIT {

    @Test
    void nobodyStartsOnTheDefaultsInUserSpaceModeWithStateUnderRun() throws Exception {
        OpsRules.require(OpsRules.isRoot(), "not root: cannot switch to nobody");
        Path work = Files.createTempDirectory("nexuscore-nobody-");
        Process router = null;
        try {
            Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path jar = Files.copy(OpsRules.routerJar(), work.resolve("nexuscore.jar"), StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(jar, PosixFilePermissions.fromString("rw-r--r--"));
            Path home = Files.createDirectory(work.resolve("home"));
            int dataPort = freePort();
            int controlPort = freePort();
            Path config = home.resolve("ports.json");
            Files.writeString(config, "{\"dataPlane\": {\"host\": \"127.0.0.1\", \"port\": " + dataPort
                    + "}, \"control\": {\"port\": " + controlPort + "}}");
            chown(home);
            Path log = work.resolve("router.log");
            ProcessBuilder pb = new ProcessBuilder("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    "java", "-jar", jar.toString(), "--config", config.toString())
                    .directory(home.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().remove("XDG_STATE_HOME");
            pb.environment().remove("NEXUSCORE_CONFIG");
            pb.environment().put("HOME", home.toString());
            router = pb.start();

            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            URI health = URI.create("http://127.0.0.1:" + controlPort + "/healthz");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            HttpResponse<String> healthy = null;
            while (healthy == null) {
                if (!router.isAlive()) {
                    fail("the router exited (" + router.exitValue() + "):\n" + Files.readString(log));
                }
                if (System.nanoTime() > deadline) {
                    fail("no /healthz within 120 s:\n" + Files.readString(log));
                }
                try {
                    healthy = http.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString());
                } catch (java.io.IOException notYet) {
                    Thread.sleep(200);
                }
            }
            assertEquals(200, healthy.statusCode(), healthy.body());
            assertTrue(healthy.body().contains("\"mode\":\"user\""), healthy.body());
            String output = Files.readString(log);
            assertEquals(1, output.lines().filter(l -> l.contains("user-space mode")).count(), output);

            Path token = home.resolve("run/control.token");
            assertTrue(Files.isRegularFile(token), "token under ./run:\n" + output);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(token)));
            assertEquals(65534, (Integer) Files.getAttribute(token, "unix:uid"), "owned by nobody");
            HttpResponse<String> patched = http.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + controlPort + "/thresholds"))
                    .header("Authorization", "Bearer " + Files.readString(token).strip())
                    .header("Content-Type", "application/merge-patch+json")
                    .method("PATCH", HttpRequest.BodyPublishers.ofString("{\"nano_max\": 33}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, patched.statusCode(), patched.body());
            assertTrue(Files.readString(home.resolve("run/state.json")).contains("33"), "state saved under ./run");
        } finally {
            if (router != null) {
                router.destroy(); // SIGTERM to the process this test started
                if (!router.waitFor(30, TimeUnit.SECONDS)) {
                    router.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void chown(Path dir) throws Exception {
        io.nexuscore.testing.ExternalProcess.Result chown = io.nexuscore.testing.ExternalProcess.run(
                java.time.Duration.ofSeconds(30), "chown", "-R", "nobody:nogroup", dir.toString());
        assertEquals(0, chown.exitCode(), chown.output());
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
