package io.nexuscore.fleet;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One router of a test fleet: {@code java -jar target/nexuscore-*.jar} in a directory of its own
 * (config, state file, generated control token, log), stopped by its PID only.
 */
final class RouterProcess implements AutoCloseable {

    record Response(int status, String body) {
        JsonObject json() {
            return new JsonObject(body);
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    final String node;
    final String host;
    final int dataPort;
    final int controlPort;
    private final Path jar;
    private final Path dir;
    private final List<String> prefix;
    private Process process;
    /** Classes beside the router's jar (a test's own, for a router that must be able to load them). */
    private List<Path> extraClasspath = List.of();

    /** The router's shaded jar under target/ (the integration tests run after {@code mvn package}). */
    static Path builtJar() throws IOException {
        try (java.util.stream.Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(p -> p.getFileName().toString().matches("nexuscore-.*\\.jar"))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no target/nexuscore-*.jar: run after `mvn package`"))
                    .toAbsolutePath();
        }
    }

    private static Path fleetSecret;

    /**
     * The fleet secret every router of this test JVM shares ({@code cluster.secretFile}): a random one,
     * 0600 and owned by the user running the tests, removed when the JVM exits.
     */
    static synchronized Path fleetSecret() throws IOException {
        if (fleetSecret == null) {
            Path dir = Files.createTempDirectory("nexuscore-fleet-secret-");
            dir.toFile().deleteOnExit();
            Path file = dir.resolve("fleet.secret");
            Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            file.toFile().deleteOnExit();
            byte[] secret = new byte[32];
            new java.security.SecureRandom().nextBytes(secret);
            Files.writeString(file, java.util.HexFormat.of().formatHex(secret) + "\n");
            fleetSecret = file;
        }
        return fleetSecret;
    }

    /** The {@code cluster} section of one fleet member, with the shared {@link #fleetSecret()}. */
    static JsonObject clusterSection(String node, String host, int port, io.vertx.core.json.JsonArray members)
            throws IOException {
        return new JsonObject().put("enabled", true).put("node", node).put("host", host).put("port", port)
                .put("members", members).put("secretFile", fleetSecret().toString());
    }

    /**
     * A small router for the kernel fleet tests: one acceptor, one-instance tiers (large capped at
     * 256 MiB), no kernel timing metrics, the state file in {@code dir}.
     */
    static JsonObject smallKernelRouter(Path dir, String dataHost, int data, String controlHost, int control) {
        JsonObject tier = new JsonObject().put("instances", 1);
        return new JsonObject()
                .put("dataPlane", new JsonObject().put("host", dataHost).put("port", data).put("instances", 1))
                .put("control", new JsonObject().put("host", controlHost).put("port", control)
                        .put("stateFile", dir.resolve("state.json").toString())
                        // A test network of its own: plain HTTP off loopback, as the operator may say so.
                        .put("plaintextOffLoopback", !controlHost.startsWith("127.")))
                .put("metrics", new JsonObject().put("kernelTiming", false).put("tlbFlushes", false))
                .put("tiers", new JsonObject().put("nano", tier).put("small", tier.copy())
                        .put("large", tier.copy().put("memoryLimitBytes", 256L << 20)));
    }

    /** A router on loopback. */
    RouterProcess(String node, Path jar, Path dir, int dataPort, int controlPort, JsonObject config) throws IOException {
        this(node, List.of(), "127.0.0.1", jar, dir, dataPort, controlPort, config);
    }

    /**
     * @param prefix what runs the JVM ({@code ip netns exec NS} for a router in a namespace of its own)
     * @param host   where its listeners are reached from the test
     */
    RouterProcess(String node, List<String> prefix, String host, Path jar, Path dir, int dataPort, int controlPort,
                  JsonObject config) throws IOException {
        this.node = node;
        this.prefix = List.copyOf(prefix);
        this.host = host;
        this.jar = jar;
        this.dir = Files.createDirectories(dir);
        this.dataPort = dataPort;
        this.controlPort = controlPort;
        Files.writeString(dir.resolve("config.json"), config.encodePrettily());
    }

    /** Runs the router with {@code entries} on its class path too (its jar's Main-Class, not -jar). */
    RouterProcess withClasspath(List<Path> entries) {
        this.extraClasspath = List.copyOf(entries);
        return this;
    }

    void start() throws IOException {
        List<String> command = new java.util.ArrayList<>(prefix);
        // Vert.x's file cache under the router's own directory: a SIGKILLed router cannot remove
        // its /tmp/vertx-cache-* itself (one was left per test run), the test's cleanup takes this one.
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                "-Dvertx.cacheDirBase=" + dir.resolve("vertx-cache")));
        if (extraClasspath.isEmpty()) {
            command.addAll(List.of("-jar", jar.toString()));
        } else {
            String mainClass;
            try (java.util.jar.JarFile file = new java.util.jar.JarFile(jar.toFile())) {
                mainClass = file.getManifest().getMainAttributes().getValue("Main-Class");
            }
            StringBuilder classpath = new StringBuilder(jar.toString());
            extraClasspath.forEach(p -> classpath.append(java.io.File.pathSeparator).append(p.toAbsolutePath()));
            command.addAll(List.of("-cp", classpath.toString(), mainClass));
        }
        command.addAll(List.of("--config", "config.json"));
        process = new ProcessBuilder(command)
                .directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("router.log").toFile())).start();
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    /** SIGKILL: no shutdown hook, no leaving the cluster: what a crash looks like to the fleet. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGSTOP / SIGCONT: the process keeps its sockets but answers nothing, as behind a partition. */
    void signal(String name) throws IOException, InterruptedException {
        io.nexuscore.testing.ExternalProcess.Result kill = io.nexuscore.testing.ExternalProcess.run(
                java.time.Duration.ofSeconds(10), "kill", "-" + name, String.valueOf(process.pid()));
        if (kill.exitCode() != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed: " + kill.output());
        }
    }

    /** True once the data plane accepts connections (it listens only after the fleet's policy is applied). */
    boolean serving() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, dataPort), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    Response get(String path) {
        return send(request(path).GET());
    }

    Response send(String method, String path, JsonObject body) {
        return send(request(path).header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(body.encode())));
    }

    /** GET that may fail (router down or paused): null then. */
    JsonObject tryJson(String path) {
        try {
            Response r = get(path);
            return r.status() == 200 ? r.json() : null;
        } catch (UncheckedIOException | IllegalStateException e) {
            return null;
        }
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + host + ":" + controlPort + path))
                .timeout(Duration.ofSeconds(10));
        Path token = dir.resolve("control.token");
        try {
            if (Files.exists(token)) {
                b.header("Authorization", "Bearer " + Files.readString(token).strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b;
    }

    private static Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The SSE history of one event type, read until the stream goes quiet (the hub keeps history). */
    List<JsonObject> events(String type) {
        HttpRequest request = request("/events?types=" + type).header("Last-Event-ID", "0").timeout(Duration.ofSeconds(2))
                .GET().build();
        List<JsonObject> found = new java.util.concurrent.CopyOnWriteArrayList<>();
        var sent = HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofLines());
        try {
            HttpResponse<java.util.stream.Stream<String>> response = sent.get(5, TimeUnit.SECONDS);
            Thread reader = new Thread(() -> {
                try (var lines = response.body()) {
                    lines.filter(l -> l.startsWith("data:")).forEach(l -> found.add(new JsonObject(l.substring(5).trim())));
                } catch (RuntimeException closed) {
                    // the stream is closed below
                }
            });
            reader.setDaemon(true);
            reader.start();
            reader.join(1500);
            response.body().close();
        } catch (Exception e) {
            throw new AssertionError("reading GET /events on " + node + " failed: " + e, e);
        }
        return List.copyOf(found);
    }

    String log() {
        return log(60);
    }

    /** The last {@code count} lines of the router's log. */
    String log(int count) {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("router.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Polls every 100 ms for at most {@code seconds}; fails naming what and showing the log. */
    void await(String what, int seconds, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (process != null && !process.isAlive()) {
                throw new AssertionError(node + " exited while waiting for: " + what + "\n" + log());
            }
            if (System.nanoTime() > end) {
                throw new AssertionError(node + ": not within " + seconds + " s: " + what + "\n" + log());
            }
            Thread.sleep(100);
        }
    }

    /** SIGTERM (after SIGCONT, should it be paused), then SIGKILL if it does not stop in 30 s. */
    @Override
    public void close() throws Exception {
        if (process == null || !process.isAlive()) {
            return;
        }
        signal("CONT");
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
