package io.nexuscore.tenants;

import io.nexuscore.RouterRuntime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.FreePort;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * In user-space mode no TC program marks SYNs, so the data plane applies the tenant prefixes the
 * control plane stores: a floor set through PUT /tenants must raise the next connection's requests.
 */
class UserSpaceTenantFloorTest {

    private static final String NANO_BODY = "{\"prompt\":\"hello there\"}";

    @TempDir
    Path dir;

    private RouterRuntime router;
    private int dataPort;
    private int controlPort;

    @BeforeEach
    void start() throws Exception {
        dataPort = FreePort.pick();
        controlPort = FreePort.pick();
        Path config = dir.resolve("router.json");
        Files.writeString(config, """
                {"dataPlane": {"host": "127.0.0.1", "port": %d, "instances": 1},
                 "control": {"port": %d, "stateFile": "%s", "auth": "none"},
                 "kernel": {"mode": "user"},
                 "tiers": {"nano": {"instances": 1}, "small": {"instances": 1}, "large": {"instances": 1}}}
                """.formatted(dataPort, controlPort, dir.resolve("state.json")));
        router = RouterRuntime.start(RouterConfig.load(Optional.of(config)));
    }

    @AfterEach
    void stop() {
        router.close();
    }

    @Test
    void tenantPrefixRaisesNewConnections() throws Exception {
        assertEquals("nano", assignedTier(), "no floor yet");

        HttpResponse<String> put = send(HttpRequest.newBuilder(control("/tenants/loopback"))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"prefix\": \"127.0.0.0/8\", \"floor\": \"large\"}")));
        assertEquals(201, put.statusCode(), put.body());
        assertEquals("large", assignedTier(), "a nano-sized request from 127.0.0.1 is served at the tenant floor");

        assertEquals(204, send(HttpRequest.newBuilder(control("/tenants/loopback")).DELETE()).statusCode());
        assertEquals("nano", assignedTier(), "the floor is gone for new connections");
    }

    /** Floors are looked up per request: a change reaches a keep-alive connection opened before it. */
    @Test
    void floorChangesReachAConnectionAlreadyOpen() throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", dataPort)) {
            socket.setSoTimeout(10_000);
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                    socket.getInputStream(), java.nio.charset.StandardCharsets.ISO_8859_1));
            assertEquals("nano", assignedTierOn(socket, in));
            assertEquals(201, send(HttpRequest.newBuilder(control("/tenants/loopback"))
                    .header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString("{\"prefix\": \"127.0.0.0/8\", \"floor\": \"large\"}")))
                    .statusCode());
            assertEquals("large", assignedTierOn(socket, in), "the new floor reaches the open connection");
            assertEquals(204, send(HttpRequest.newBuilder(control("/tenants/loopback")).DELETE()).statusCode());
            assertEquals("nano", assignedTierOn(socket, in), "DELETE /tenants reaches the open connection");
        }
    }

    /** One request on an open keep-alive socket; reads the answer in full and returns its assigned tier. */
    private static String assignedTierOn(java.net.Socket socket, java.io.BufferedReader in) throws Exception {
        socket.getOutputStream().write(("POST /v1/tasks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: "
                + NANO_BODY.length() + "\r\n\r\n" + NANO_BODY).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        String tier = null;
        int length = 0;
        for (String line; !(line = in.readLine()).isEmpty(); ) {
            String lower = line.toLowerCase(java.util.Locale.ROOT);
            if (lower.startsWith("x-nx-assigned-tier:")) {
                tier = line.substring(line.indexOf(':') + 1).trim();
            } else if (lower.startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        in.skip(length);
        return tier;
    }

    /** One request on a fresh connection. */
    private String assignedTier() throws Exception {
        HttpResponse<String> response = send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + dataPort + "/v1/tasks/echo"))
                .POST(HttpRequest.BodyPublishers.ofString(NANO_BODY)));
        assertEquals(200, response.statusCode(), response.body());
        return response.headers().firstValue("X-NX-Assigned-Tier").orElseThrow();
    }

    private URI control(String path) {
        return URI.create("http://127.0.0.1:" + controlPort + path);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
