package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.maps.SocketMarks;
import io.nexuscore.classify.Tier;
import io.nexuscore.testing.Privileged;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A connection established through a SYN cookie keeps its tenant floor in kernel mode (issue 12).
 *
 * With a cookie the listener keeps no request socket: the child socket is built from the final ACK,
 * and with net.ipv4.tcp_fwmark_accept=1 takes that ACK's mark, which the TC chain never sets (it
 * marks SYNs with the floor and segments carrying request bytes). So the SYN mark never reaches
 * the socket and only the data plane's lookup in the pinned tenant map can give the floor.
 *
 * The router runs as its own process inside a network namespace this test creates
 * ({@code ip netns exec}), in kernel mode on that namespace's lo, so net.ipv4.tcp_syncookies=2
 * ("always send cookies") and the router's tcp_fwmark_accept change that namespace only, and the
 * router's bpffs is the private one {@code ip netns exec} gives it: deleting the namespace and
 * stopping the router leave nothing on the host (asserted for the host's tcp_syncookies).
 * The client is bash in the namespace: it holds the connection open while {@code ss -e} shows
 * the router-side socket's mark; /proc/net/netstat's SyncookiesRecv proves the cookie path.
 */
class SynCookieTenantFloorTest {

    private static final int DATA_PORT = 8080;
    private static final int CONTROL_PORT = 8081;
    private static final Path HOST_SYNCOOKIES = Path.of("/proc/sys/net/ipv4/tcp_syncookies");
    private static final Pattern ASSIGNED = Pattern.compile("(?im)^x-nx-assigned-tier: (\\w+)\\r?$");
    private static final Pattern FWMARK = Pattern.compile("fwmark:0x([0-9a-f]+)");
    /** A nano-sized chat request (score 14 with the default weights; nano_max is 60). */
    private static final String BODY = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    private final String namespace = "nxtest-synck-" + UUID.randomUUID().toString().substring(0, 6);
    private Path work;
    private Process router;

    /** What one held-open connection saw: the response head, the router's socket mark, cookies received meanwhile. */
    private record Probe(String head, Optional<Integer> mark, long cookiesReceived) {

        Tier assignedTier() {
            Matcher m = ASSIGNED.matcher(head);
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
            assertTrue(m.find(), head);
            return Tier.fromLabel(m.group(1));
        }

        Optional<Tier> markFloor() {
            return mark.flatMap(SocketMarks::tenantFloor);
        }
    }

    @Test
    void aSynCookieConnectionKeepsItsTenantFloorThroughThePinnedMapLookup() throws Exception {
        KernelTestSupport.requireKernel();
        Privileged.require(Processes.run(List.of("ss", "-V")).exitCode() == 0
                && Processes.run(List.of("ip", "-V")).exitCode() == 0
                && Processes.run(List.of("bash", "--version")).exitCode() == 0,
                "ss, ip (iproute2) and bash are needed to run the router in a network namespace");
        String hostSyncookies = Files.readString(HOST_SYNCOOKIES).trim();
        work = Files.createTempDirectory("nexus-syncookie");
        try {
            Processes.ok("ip", "netns", "add", namespace);
            inNamespace("ip", "link", "set", "lo", "up");
            // First without cookies: the handshake keeps a request socket, the SYN's mark reaches the socket.
            inNamespace("sysctl", "-qw", "net.ipv4.tcp_syncookies=0");
            startRouter();
            JsonObject tenant = new JsonObject().put("prefix", "127.0.0.1/32").put("floor", "large");
            assertEquals("201", control("PUT", "/tenants/syn-cookie", tenant.encode()), "PUT /tenants/syn-cookie");

            Probe marked = probe();
            assertEquals(0, marked.cookiesReceived(), "tcp_syncookies=0: a plain handshake");
            assertEquals(Optional.of(Tier.LARGE), marked.markFloor(),
                    "the TC chain put the floor on the SYN and ss shows it on the socket: " + marked);
            assertEquals(Tier.LARGE, marked.assignedTier());

            inNamespace("sysctl", "-qw", "net.ipv4.tcp_syncookies=2");
            Probe cookie = probe();
            assertEquals(1, cookie.cookiesReceived(), "tcp_syncookies=2: the connection came through a SYN cookie");
            assertEquals(Optional.empty(), cookie.markFloor(), "no floor mark reaches a cookie socket: " + cookie);
            assertEquals(Tier.LARGE, cookie.assignedTier(), "the floor came from the pinned map lookup: " + cookie.head());

            // The request alone is nano: without the tenant the same cookie connection is served at nano.
            assertEquals("204", control("DELETE", "/tenants/syn-cookie", null), "DELETE /tenants/syn-cookie");
            Probe plain = probe();
            assertEquals(1, plain.cookiesReceived());
            assertEquals(Tier.NANO, plain.assignedTier(), plain.head());
        } finally {
            try {
                stopRouter();
            } finally {
                Processes.run(List.of("ip", "netns", "del", namespace));
                RequestSuite.deleteRecursively(work);
            }
        }
        assertEquals(hostSyncookies, Files.readString(HOST_SYNCOOKIES).trim(), "the host's tcp_syncookies is untouched");
    }

    private String inNamespace(String... command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
        full.addAll(List.of(command));
        return Processes.ok(full);
    }

    private void startRouter() throws IOException, InterruptedException {
        JsonObject tier = new JsonObject().put("instances", 1).put("cpus", List.of());
        JsonObject config = new JsonObject()
                .put("dataPlane", new JsonObject().put("host", "127.0.0.1").put("port", DATA_PORT).put("instances", 1))
                .put("control", new JsonObject().put("host", "127.0.0.1").put("port", CONTROL_PORT).put("auth", "none")
                        .put("stateFile", work.resolve("state.json").toString()))
                .put("kernel", new JsonObject().put("mode", "kernel").put("pinDir", "/sys/fs/bpf/" + namespace)
                        .put("interfaces", List.of("lo")).put("xdpMode", "generic"))
                .put("tiers", new JsonObject().put("nano", tier).put("small", tier.copy())
                        .put("large", tier.copy().put("memoryLimitBytes", 256L << 20)));
        Path configFile = work.resolve("router.json");
        Files.writeString(configFile, config.encodePrettily());
        Path log = work.resolve("router.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        router = new ProcessBuilder("ip", "netns", "exec", namespace, java, "-cp", System.getProperty("java.class.path"),
                "io.nexuscore.Main", "--config", configFile.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            if (!router.isAlive()) {
                fail("the router exited (" + router.exitValue() + "):\n" + Files.readString(log));
            }
            Processes.Result health = Processes.run(List.of("ip", "netns", "exec", namespace, "curl", "-s", "-m", "2",
                    "http://127.0.0.1:" + CONTROL_PORT + "/healthz"));
            if (health.exitCode() == 0 && health.output().contains("\"mode\":\"kernel\"")) {
                return;
            }
            if (System.nanoTime() > deadline) {
                fail("no kernel-mode /healthz within 120 s: " + health.output() + "\n" + Files.readString(log));
            }
            Thread.sleep(250);
        }
    }

    private void stopRouter() throws InterruptedException {
        if (router == null) {
            return;
        }
        router.destroy(); // SIGTERM: the shutdown hook detaches and releases what the router set
        if (!router.waitFor(30, TimeUnit.SECONDS)) {
            router.destroyForcibly();
            router.waitFor(10, TimeUnit.SECONDS);
        }
        router = null;
    }

    /** @return the HTTP status curl saw */
    private String control(String method, String path, String body) {
        List<String> command = new ArrayList<>(List.of("curl", "-s", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}",
                "-X", method));
        if (body != null) {
            command.addAll(List.of("-H", "Content-Type: application/json", "--data-binary", body));
        }
        command.add("http://127.0.0.1:" + CONTROL_PORT + path);
        return inNamespace(command.toArray(String[]::new)).trim();
    }

    /**
     * One request on a new connection from bash in the namespace; while the connection is still
     * open (keep-alive), {@code ss -e} lists the router's side of it with its mark.
     */
    private Probe probe() throws IOException {
        Path request = work.resolve("request.http");
        // One write (cat), so the head and body reach XDP in one segment as a real client sends them.
        Files.writeString(request, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + BODY.length() + "\r\n\r\n" + BODY,
                StandardCharsets.US_ASCII);
        String script = String.join("\n",
                "set -e",
                "exec 3<>/dev/tcp/127.0.0.1/" + DATA_PORT,
                "cat '" + request + "' >&3",
                "while IFS= read -r -t 20 line <&3; do line=${line%$'\\r'}; echo \"$line\"; [ -z \"$line\" ] && break; done",
                "echo '--- ss'",
                "ss -tnHe state established '( sport = :" + DATA_PORT + " )' 2>/dev/null",
                "exec 3>&-");
        long before = cookiesReceived();
        String output = inNamespace("bash", "-c", script);
        long after = cookiesReceived();
        int split = output.indexOf("--- ss\n");
        assertTrue(split >= 0, output);
        String head = output.substring(0, split);
        List<String> sockets = output.substring(split + "--- ss\n".length()).lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, sockets.size(), "one established router-side socket: " + output);
        Matcher mark = FWMARK.matcher(sockets.get(0));
        return new Probe(head, mark.find() ? Optional.of(Integer.parseUnsignedInt(mark.group(1), 16)) : Optional.empty(),
                after - before);
    }

    /** TcpExt SyncookiesRecv of the namespace: ACKs that carried a valid cookie and became a socket. */
    private long cookiesReceived() {
        List<String> lines = inNamespace("cat", "/proc/net/netstat").lines().filter(l -> l.startsWith("TcpExt:")).toList();
        assertEquals(2, lines.size(), "TcpExt names and values in /proc/net/netstat");
        List<String> names = List.of(lines.get(0).split("\\s+"));
        String[] values = lines.get(1).split("\\s+");
        int at = names.indexOf("SyncookiesRecv");
        assertTrue(at > 0, "SyncookiesRecv in " + names);
        return Long.parseLong(values[at]);
    }
}
