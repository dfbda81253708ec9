package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.config.ControlConfig;
import io.nexuscore.events.EventHub;
import io.nexuscore.http.ProblemType;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may drive the control plane, over real loopback sockets with hand-written requests (so the
 * Host and Origin headers are exactly what a browser or an attacker would send): the default token
 * (generated at first start, 0600, reused at the next), the explicit opt-out, Host and Origin on every
 * route, and the reads that expose tenants and events off-loopback.
 */
class ControlSecurityTest {

    @TempDir
    Path dir;

    private final Vertx vertx = Vertx.vertx();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    @AfterEach
    void close() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        registry.close();
    }

    /** Deploys a control plane with the given config (port 0) and returns its port. */
    private int deploy(ControlConfig config) throws Exception {
        ControlVerticle verticle = new ControlVerticle(config, ControlPorts.userSpace(Thresholds.DEFAULT, "test"),
                TierStateView.NONE, new EventHub(16, 16, registry), registry,
                new ControlVerticle.Timings(Duration.ofMillis(50), Duration.ofSeconds(30)));
        vertx.deployVerticle(verticle).await(30, TimeUnit.SECONDS);
        return verticle.actualPort();
    }

    private ControlConfig config(String host, ControlConfig.Auth auth) {
        Path state = dir.resolve("state").resolve("state.json");
        return new ControlConfig(host, 0, auth, Optional.empty(), state.resolveSibling("control.token"),
                List.of("router.internal"), state, 16, 16, ControlConfig.DEFAULT_MAX_SUBSCRIBERS);
    }

    @Test
    void theDefaultGeneratesAPrivateTokenAtFirstStartAndMutatingCallsNeedIt() throws Exception {
        ControlConfig config = config("127.0.0.1", ControlConfig.Auth.TOKEN);
        int port = deploy(config);
        Path tokenFile = config.tokenFile();
        assertTrue(Files.isRegularFile(tokenFile), "token generated at first start");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile)));
        String token = Files.readString(tokenFile).strip();
        assertTrue(token.length() >= 32, token);

        Reply anonymous = patch(port, "127.0.0.1:" + port, null, null);
        assertEquals(401, anonymous.status(), anonymous.text());
        assertEquals(ProblemType.TYPE_BASE + "unauthorized", anonymous.json().getString("type"));
        Reply wrong = patch(port, "127.0.0.1:" + port, "not-the-token-at-all", null);
        assertEquals(401, wrong.status(), wrong.text());
        Reply authed = patch(port, "127.0.0.1:" + port, token, null);
        assertEquals(200, authed.status(), authed.text());
        for (String path : List.of("/healthz", "/metrics", "/thresholds")) {
            assertEquals(200, get(port, "localhost:" + port, path, null).status(), path + " is open on loopback");
        }
        // Key hashes and prefixes, tenant names and upstream errors, members' addresses: never open.
        for (String path : List.of("/tenants", "/events?types=none", "/fleet")) {
            Reply anonymousRead = get(port, "localhost:" + port, path, null);
            assertEquals(401, anonymousRead.status(), path + " needs the token on loopback too: " + anonymousRead.text());
            assertEquals(ProblemType.TYPE_BASE + "unauthorized", anonymousRead.json().getString("type"));
        }
        assertEquals(200, request(port, "GET /tenants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token
                + "\r\nConnection: close\r\n\r\n").status());

        // A second start on the same state directory reads the same token, and does not print a new one.
        int second = deploy(config);
        assertEquals(token, Files.readString(tokenFile).strip());
        assertEquals(200, patch(second, "127.0.0.1:" + second, token, null).status());
    }

    @Test
    void aTokenFileOthersCanReadIsRefused() throws Exception {
        ControlConfig config = config("127.0.0.1", ControlConfig.Auth.TOKEN);
        Files.createDirectories(config.tokenFile().getParent());
        Files.writeString(config.tokenFile(), "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(config.tokenFile(), PosixFilePermissions.fromString("rw-r--r--"));
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> deploy(config));
        assertTrue(String.valueOf(e.getMessage()).contains("chmod 600"), e.getMessage());
    }

    /** Root accepted a 0600 file any local user planted before the first start: its token became theirs. */
    @Test
    void aTokenFileAnotherUserPlantedOrASymlinkIsRefused() throws Exception {
        io.nexuscore.testing.Privileged.require(io.nexuscore.testing.Privileged.isRoot(), "chown needs root");
        ControlConfig config = config("127.0.0.1", ControlConfig.Auth.TOKEN);
        Files.createDirectories(config.tokenFile().getParent());
        Files.writeString(config.tokenFile(), "attacker-knows-this-token-0123456789\n");
        Files.setPosixFilePermissions(config.tokenFile(), PosixFilePermissions.fromString("rw-------"));
        Files.setOwner(config.tokenFile(), config.tokenFile().getFileSystem().getUserPrincipalLookupService()
                .lookupPrincipalByName("nobody"));
        Exception planted = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> deploy(config));
        assertTrue(String.valueOf(planted.getMessage()).contains("not root"), planted.getMessage());

        Files.delete(config.tokenFile());
        Path elsewhere = Files.writeString(dir.resolve("elsewhere"), "attacker-knows-this-token-0123456789\n");
        Files.setPosixFilePermissions(elsewhere, PosixFilePermissions.fromString("rw-------"));
        Files.createSymbolicLink(config.tokenFile(), elsewhere);
        Exception link = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> deploy(config));
        assertTrue(String.valueOf(link.getMessage()).contains("symlink"), link.getMessage());
    }

    @Test
    void authNoneIsAnExplicitLoopbackOptOut() throws Exception {
        int port = deploy(config("127.0.0.1", ControlConfig.Auth.NONE));
        assertEquals(200, patch(port, "127.0.0.1:" + port, null, null).status());
        assertFalse(Files.exists(dir.resolve("state").resolve("control.token")), "no token file when auth is off");
    }

    @Test
    void hostAndOriginAreCheckedOnEveryRoute() throws Exception {
        ControlConfig config = config("127.0.0.1", ControlConfig.Auth.NONE);
        int port = deploy(config);
        for (String path : List.of("/healthz", "/metrics", "/thresholds")) {
            Reply rebound = get(port, "attacker.example:" + port, path, null);
            assertEquals(403, rebound.status(), path + ": " + rebound.text());
            assertEquals(ProblemType.TYPE_BASE + "forbidden-host", rebound.json().getString("type"));
        }
        assertEquals(3.0, controlErrors("forbidden-host"), "every refusal is counted");
        int noHost = get(port, null, "/healthz", null).status();
        assertTrue(noHost >= 400, "no Host header at all (Vert.x refuses the request before routing): " + noHost);
        assertEquals(200, get(port, "[::1]:" + port, "/healthz", null).status());
        assertEquals(200, get(port, "localhost", "/healthz", null).status());
        assertEquals(200, get(port, "router.internal:" + port, "/healthz", null).status(), "a configured name");

        // A page on another site in a browser on this machine: right Host, foreign Origin.
        Reply crossSite = patch(port, "127.0.0.1:" + port, null, "http://attacker.example");
        assertEquals(403, crossSite.status(), crossSite.text());
        assertEquals(ProblemType.TYPE_BASE + "forbidden-origin", crossSite.json().getString("type"));
        assertEquals(403, patch(port, "127.0.0.1:" + port, null, "null").status(), "sandboxed pages send Origin: null");
        assertEquals(403, get(port, "127.0.0.1:" + port, "/thresholds", "http://127.0.0.1.attacker.example").status());
        assertEquals(200, patch(port, "127.0.0.1:" + port, null, "http://localhost:" + port).status(), "same origin");
    }

    private ControlConfig offLoopback(String host, Optional<ControlConfig.Tls> tls, boolean plaintext, int perClient) {
        Path state = dir.resolve("state").resolve("state.json");
        return new ControlConfig(host, 0, host.equals("127.0.0.1") ? ControlConfig.Auth.NONE : ControlConfig.Auth.TOKEN,
                Optional.empty(), state.resolveSibling("control.token"), List.of("router.internal"), state, 16, 16,
                ControlConfig.DEFAULT_MAX_SUBSCRIBERS, perClient, tls, plaintext);
    }

    @Test
    void offLoopbackEveryRouteNeedsTheTokenButTheDashboardsStaticFiles() throws Exception {
        ControlConfig config = offLoopback("0.0.0.0", Optional.empty(), true, 8);
        int port = deploy(config);
        String token = Files.readString(config.tokenFile()).strip();
        String host = "127.0.0.1:" + port;
        for (String path : List.of("/healthz", "/metrics", "/thresholds", "/tiers", "/adaptive", "/tenants", "/events",
                "/fleet")) {
            assertEquals(401, get(port, host, path, null).status(), path);
        }
        assertEquals(200, get(port, host, "/", null).status(), "the dashboard page holds no data; it asks for the token");
        for (String path : List.of("/healthz", "/metrics", "/thresholds", "/tenants")) {
            assertEquals(200, request(port, "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer "
                    + token + "\r\nConnection: close\r\n\r\n").status(), path);
        }
    }

    @Test
    void offLoopbackWithoutTlsIsRefusedUnlessTheOperatorSaysSo() {
        io.nexuscore.config.ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(
                io.nexuscore.config.ConfigException.class, () -> offLoopback("0.0.0.0", Optional.empty(), false, 8));
        assertTrue(e.getMessage().contains("control.tls") && e.getMessage().contains("plaintextOffLoopback"), e.getMessage());
        offLoopback("0.0.0.0", Optional.empty(), true, 8); // the explicit choice
    }

    /** "127.evil.example" passed a prefix check; a name resolves to whatever DNS or /etc/hosts says. */
    @Test
    void loopbackMeansAnIpLiteral() {
        for (String name : List.of("127.evil.example", "127.0.0.1.nip.io", "localhost", "127.1")) {
            assertFalse(ControlConfig.isLoopback(name), name);
            org.junit.jupiter.api.Assertions.assertThrows(io.nexuscore.config.ConfigException.class,
                    () -> config(name, ControlConfig.Auth.NONE), name + " with auth none");
        }
        for (String literal : List.of("127.0.0.1", "127.0.0.2", "::1", "[::1]")) {
            assertTrue(ControlConfig.isLoopback(literal), literal);
        }
    }

    @Test
    void tlsServesHttpsAndRefusesAKeyOthersCanRead() throws Exception {
        ExternalTool.require("/usr/bin/openssl", "openssl");
        Path cert = dir.resolve("control.crt");
        Path key = dir.resolve("control.key");
        // Under a deadline, its output read while it runs: a hung openssl fails the test.
        ExternalTool.Result made = ExternalTool.run("", "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", key.toString(), "-out", cert.toString(), "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1");
        assertEquals(0, made.exitCode(), made.output());
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        ControlConfig.Tls tls = new ControlConfig.Tls(cert, key);
        ControlConfig config = offLoopback("0.0.0.0", Optional.of(tls), false, 8);
        int port = deploy(config);
        String token = Files.readString(config.tokenFile()).strip();

        io.vertx.core.http.HttpClient https = vertx.createHttpClient(new io.vertx.core.http.HttpClientOptions().setSsl(true)
                .setTrustOptions(new io.vertx.core.net.PemTrustOptions().addCertPath(cert.toString())));
        io.vertx.core.http.HttpClientResponse answer = https.request(new io.vertx.core.http.RequestOptions()
                        .setHost("127.0.0.1").setPort(port).setURI("/healthz").putHeader("Authorization", "Bearer " + token))
                .compose(r -> r.send()).await(10, TimeUnit.SECONDS);
        assertEquals(200, answer.statusCode());
        // Plain HTTP to the TLS port gets no answer of the control plane.
        String plain;
        try {
            plain = get(port, "127.0.0.1:" + port, "/healthz", null).text();
        } catch (IOException | RuntimeException e) {
            plain = "";
        }
        assertFalse(plain.startsWith("HTTP/1.1 200"), plain);

        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        Exception refused = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> deploy(config));
        assertTrue(String.valueOf(refused.getMessage()).contains("chmod 600"), refused.getMessage());
    }

    /** With auth "none" nobody holds a token: the per-client bound answers 503 (and one client cannot take every slot). */
    @Test
    void eventStreamsAreBoundedPerClient() throws Exception {
        int port = deploy(offLoopback("127.0.0.1", Optional.empty(), false, 2));
        List<Socket> open = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
                s.getOutputStream().write(("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                s.setSoTimeout(10_000);
                byte[] head = new byte[12];
                assertEquals(12, s.getInputStream().readNBytes(head, 0, 12));
                assertEquals("HTTP/1.1 200", new String(head, StandardCharsets.US_ASCII));
                open.add(s);
            }
            Reply third = request(port, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            assertEquals(503, third.status(), third.text());
            assertTrue(third.text().contains("maxSubscribersPerClient"), third.text());
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    /**
     * A request hidden in the body of one whose framing is ambiguous never reaches a route: here a
     * PATCH (auth off, so it would be applied) behind {@code Transfer-Encoding: gzip}, which Netty
     * alone read as "no body", so the PATCH was decoded and applied as a request of its own.
     */
    @Test
    void aRequestSmuggledBehindAnAmbiguousFramingIsNeverRouted() throws Exception {
        int port = deploy(config("127.0.0.1", ControlConfig.Auth.NONE));
        String host = "127.0.0.1:" + port;
        String body = "{\"nano_max\": 42}";
        Reply reply = request(port, "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: gzip\r\n\r\n"
                + "PATCH /thresholds HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/merge-patch+json\r\n"
                + "Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body);
        assertEquals(400, reply.status(), reply.text());
        assertEquals(1, reply.text().split("HTTP/1\\.1 ", -1).length - 1, "one answer only: " + reply.text());
        assertEquals(ProblemType.TYPE_BASE + "malformed-http", reply.json().getString("type"), reply.text());
        assertEquals(1.0, controlErrors("malformed-http"), "counted");
        Reply unknownCoding = request(port, "POST /thresholds HTTP/1.1\r\nHost: " + host
                + "\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
        assertEquals(501, unknownCoding.status(), unknownCoding.text());
        Reply thresholds = get(port, host, "/thresholds", null);
        assertEquals(200, thresholds.status());
        assertEquals(Thresholds.DEFAULT.nanoMax(), thresholds.json().getInteger("nano_max"), thresholds.text());
    }

    @Test
    void aTlsHandshakeIsAnswered400AtOnce() throws Exception {
        int port = deploy(config("127.0.0.1", ControlConfig.Auth.NONE));
        Reply reply = request(port, "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003");
        assertEquals(400, reply.status(), reply.text());
        assertEquals(ProblemType.TYPE_BASE + "malformed-http", reply.json().getString("type"));
        assertEquals(1.0, controlErrors("malformed-http"), "counted");
    }

    private double controlErrors(String type) {
        io.micrometer.core.instrument.Counter counter = registry.find("nexus.control.errors").tag("type", type).counter();
        return counter == null ? 0 : counter.count();
    }

    // --- raw HTTP -------------------------------------------------------------------------------

    record Reply(int status, String text) {
        JsonObject json() {
            return new JsonObject(text.substring(text.indexOf("\r\n\r\n") + 4));
        }
    }

    private static Reply get(int port, String host, String path, String origin) throws IOException {
        return request(port, "GET " + path + " HTTP/1.1\r\n" + (host == null ? "" : "Host: " + host + "\r\n")
                + (origin == null ? "" : "Origin: " + origin + "\r\n") + "Connection: close\r\n\r\n");
    }

    private static Reply patch(int port, String host, String token, String origin) throws IOException {
        String body = "{\"nano_max\": 42}";
        return request(port, "PATCH /thresholds HTTP/1.1\r\nHost: " + host + "\r\n"
                + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + (origin == null ? "" : "Origin: " + origin + "\r\n")
                + "Content-Type: application/merge-patch+json\r\nContent-Length: " + body.length()
                + "\r\nConnection: close\r\n\r\n" + body);
    }

    private static Reply request(int port, String raw) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            ByteArrayOutputStream received = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                received.write(buffer, 0, n);
                String sofar = received.toString(StandardCharsets.ISO_8859_1);
                if (sofar.startsWith("HTTP/1.1 200") && raw.startsWith("GET /events")) {
                    break; // a stream: the status is the answer
                }
            }
            String text = received.toString(StandardCharsets.ISO_8859_1);
            return new Reply(Integer.parseInt(text.substring(9, 12)), text);
        }
    }
}
