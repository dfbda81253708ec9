package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.http.ProblemType;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * API-key tenants through a real router over loopback sockets: keys set through the control plane
 * (hashes only), requests on the data plane naming their tenant by key, 401 when keys are required,
 * the tenant header as the fallback when they are optional, and keys surviving a restart.
 */
@ExtendWith(VertxExtension.class)
class TenantKeysRouterTest {

    private static final String CONTROL_TOKEN = "control-token-for-tenant-keys";
    private static final String ACME_KEY = "nx-acme-3f9c2b7d41e8a6055d1c";
    private static final String GLOBEX_KEY = "nx-globex-81aa07c2e9d34b6f";

    private static JsonObject config(LocalOpenAiServer upstream, String tenantKeys, String stateFile) {
        JsonObject config = RouterFixture.config(upstream);
        config.getJsonObject("dataPlane").put("tenantKeys", tenantKeys);
        JsonObject control = config.getJsonObject("control").put("bearerToken", CONTROL_TOKEN);
        if (stateFile != null) {
            control.put("stateFile", stateFile);
        }
        return config;
    }

    private static int controlPort(JsonObject config) {
        return config.getJsonObject("control").getInteger("port");
    }

    private static RouterFixture.Reply control(HttpClient client, JsonObject config, HttpMethod method, String path,
                                               JsonObject body) {
        RequestOptions options = new RequestOptions().setMethod(method).setHost("127.0.0.1")
                .setPort(controlPort(config)).setURI(path)
                .putHeader("Authorization", "Bearer " + CONTROL_TOKEN);
        if (body != null) {
            options.putHeader("Content-Type", "application/json");
        }
        return send(client, options, body == null ? null : body.toBuffer());
    }

    private static RouterFixture.Reply chat(HttpClient client, RouterRuntime router, Map<String, String> headers) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                .setPort(router.dataPlanePort()).setURI("/v1/chat/completions");
        headers.forEach(options::putHeader);
        return send(client, options, RouterFixture.chat(20).toBuffer());
    }

    private static RouterFixture.Reply send(HttpClient client, RequestOptions options, Buffer body) {
        return RouterFixture.exchange(client, options, body).await();
    }

    /**
     * The tenant of the request event with this status (published right after the answer: the client
     * can be faster), waited for on the test thread for up to 5 s; the events are cleared for the next.
     */
    private static String tenantOfRequest(RecordingEventSink events, int status) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            for (RecordingEventSink.Event e : events.events()) {
                if (e.type().equals("request") && Integer.valueOf(status).equals(e.data().getInteger("status"))) {
                    events.clear();
                    return e.data().getString("tenant");
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no request event with status " + status + " within 5 s: " + events.events());
            }
            Thread.sleep(10);
        }
    }

    private static double unauthorized(RouterRuntime router) {
        var counter = router.registry().find("nexus_http_errors").tag("type", "unauthorized").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void requiredKeysNameTheTenantRefuseOthersAndSurviveARestart(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RecordingEventSink events = new RecordingEventSink();
        JsonObject config = config(upstream, "required", null);
        String stateFile = config.getJsonObject("control").getString("stateFile");
        RouterRuntime router = RouterFixture.start(config, events);
        try {
            String acmeHash = TenantKeys.hash(ACME_KEY);
            RouterFixture.Reply put = control(client, config, HttpMethod.PUT, "/tenants/acme/keys",
                    new JsonObject().put("keys", new JsonArray().add(acmeHash).add(acmeHash)));
            assertEquals(200, put.status(), put.body().toString());
            assertEquals(new JsonObject().put("id", "acme").put("keys", new JsonArray().add(acmeHash)), put.json());
            // A plaintext key is not a hash: refused, and never echoed.
            RouterFixture.Reply plain = control(client, config, HttpMethod.PUT, "/tenants/globex/keys",
                    new JsonObject().put("keys", new JsonArray().add(GLOBEX_KEY)));
            assertEquals(422, plain.status());
            assertFalse(plain.body().toString().contains(GLOBEX_KEY), "the refusal echoes the key");
            // A hash belongs to one tenant.
            assertEquals(409, control(client, config, HttpMethod.PUT, "/tenants/globex/keys",
                    new JsonObject().put("keys", new JsonArray().add(acmeHash))).status());

            // The key names the tenant, whatever the tenant header says.
            RouterFixture.Reply known = chat(client, router,
                    Map.of("Authorization", "Bearer " + ACME_KEY, "X-NX-Tenant", "mallory"));
            assertEquals(200, known.status(), known.body().toString());
            assertEquals("acme", tenantOfRequest(events, 200));

            double before = unauthorized(router);
            RouterFixture.Reply unknown = chat(client, router,
                    Map.of("Authorization", "Bearer " + GLOBEX_KEY, "X-NX-Tenant", "acme"));
            assertEquals(401, unknown.status());
            assertEquals(ProblemType.UNAUTHORIZED.type(), unknown.json().getString("type"));
            assertEquals("application/problem+json", unknown.header("Content-Type"));
            assertTrue(unknown.header("WWW-Authenticate").startsWith("Bearer "), unknown.header("WWW-Authenticate"));
            assertTrue(unknown.header("WWW-Authenticate").contains("invalid_token"));
            assertFalse(unknown.body().toString().contains(GLOBEX_KEY), "the 401 echoes the key");
            RouterFixture.Reply missing = chat(client, router, Map.of("X-NX-Tenant", "acme"));
            assertEquals(401, missing.status());
            assertFalse(missing.header("WWW-Authenticate").contains("invalid_token"));
            assertEquals(before + 2, unauthorized(router), "each 401 is counted");
            assertEquals(401, send(client, new RequestOptions().setMethod(HttpMethod.GET).setHost("127.0.0.1")
                    .setPort(router.dataPlanePort()).setURI("/v1/models"), null).status(), "every data-plane route");

            RouterFixture.Reply list = control(client, config, HttpMethod.GET, "/tenants", null);
            assertEquals(200, list.status());
            assertEquals(new JsonObject().put("tenants", new JsonArray().add(new JsonObject().put("id", "acme")
                    .put("keys", new JsonArray().add(acmeHash)))), list.json());
            assertFalse(list.body().toString().contains(ACME_KEY), "GET /tenants shows a plaintext key");
            Path saved = TenantKeys.besideStateFile(Path.of(stateFile));
            assertFalse(Files.readString(saved).contains(ACME_KEY), "the keys file holds a plaintext key");
            assertEquals(PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(saved));
        } finally {
            router.close();
        }

        // A new router on new ports over the same state file: the key still names the tenant.
        JsonObject again = config(upstream, "required", stateFile);
        again.getJsonObject("dataPlane").put("port", FreePort.pick());
        again.getJsonObject("control").put("port", FreePort.pick());
        RouterRuntime restarted = RouterFixture.start(again, events);
        try {
            events.clear();
            RouterFixture.Reply known = chat(client, restarted, Map.of("Authorization", "Bearer " + ACME_KEY));
            assertEquals(200, known.status(), known.body().toString());
            assertEquals("acme", tenantOfRequest(events, 200));
            // Deleting the tenant takes its keys with it.
            assertEquals(204, control(client, again, HttpMethod.DELETE, "/tenants/acme", null).status());
            assertEquals(401, chat(client, restarted, Map.of("Authorization", "Bearer " + ACME_KEY)).status());
            assertEquals(new JsonArray(), control(client, again, HttpMethod.GET, "/tenants", null).json()
                    .getJsonArray("tenants"));
        } finally {
            restarted.close();
            upstream.close().await();
        }
    }

    @Test
    void optionalKeysFallBackToTheTenantHeader(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RecordingEventSink events = new RecordingEventSink();
        JsonObject config = config(upstream, "optional", null);
        RouterRuntime router = RouterFixture.start(config, events);
        try {
            assertEquals(200, control(client, config, HttpMethod.PUT, "/tenants/acme/keys",
                    new JsonObject().put("keys", new JsonArray().add(TenantKeys.hash(ACME_KEY)))).status());
            // A tenant with a prefix floor lists its keys beside it.
            assertEquals(201, control(client, config, HttpMethod.PUT, "/tenants/acme",
                    new JsonObject().put("prefix", "192.0.2.0/24").put("floor", "nano")).status());
            JsonObject acme = control(client, config, HttpMethod.GET, "/tenants", null).json()
                    .getJsonArray("tenants").getJsonObject(0);
            assertEquals(List.of(TenantKeys.hash(ACME_KEY)), acme.getJsonArray("keys").getList());
            assertEquals("192.0.2.0/24", acme.getString("prefix"));

            assertEquals(200, chat(client, router, Map.of("X-NX-Tenant", "initech")).status());
            assertEquals("initech", tenantOfRequest(events, 200), "no key: the header names the tenant");
            assertEquals(200, chat(client, router,
                    Map.of("Authorization", "Bearer " + GLOBEX_KEY, "X-NX-Tenant", "initech")).status());
            assertEquals("initech", tenantOfRequest(events, 200), "an unknown key: the header still does");
            assertEquals(200, chat(client, router, Map.of()).status());
            assertEquals(RequestAdmission.ANONYMOUS_TENANT, tenantOfRequest(events, 200));
            assertEquals(200, chat(client, router,
                    Map.of("Authorization", "bearer " + ACME_KEY, "X-NX-Tenant", "initech")).status());
            assertEquals("acme", tenantOfRequest(events, 200), "a known key wins over the header");
            assertNull(router.registry().find("nexus_http_errors").tag("type", "unauthorized").counter());
        } finally {
            router.close();
            upstream.close().await();
        }
    }
}
