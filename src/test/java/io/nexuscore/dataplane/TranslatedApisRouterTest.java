package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.tenants.TenantKeys;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Responses and Messages endpoints go through the same accounting as chat: tenant keys (also as
 * Anthropic's {@code x-api-key}), the assigned/observed tier headers, the misroute judgement, the
 * request event naming the endpoint, the per-tier request counter.
 */
@ExtendWith(VertxExtension.class)
class TranslatedApisRouterTest {

    private static final String CONTROL_TOKEN = "control-token-for-translated-apis";
    private static final String ACME_KEY = "nx-acme-7e1d55c0b2f94a83";

    private static RouterFixture.Reply post(HttpClient client, RouterRuntime router, String path, JsonObject body,
                                            Map<String, String> headers) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                .setPort(router.dataPlanePort()).setURI(path).putHeader("Content-Type", "application/json");
        headers.forEach(options::putHeader);
        return RouterFixture.exchange(client, options, body.toBuffer()).await();
    }

    private static JsonObject requestEvent(RecordingEventSink events, String endpoint) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (RecordingEventSink.Event e : events.events()) {
                if (e.type().equals("request") && endpoint.equals(e.data().getString("endpoint"))) {
                    events.clear();
                    return e.data();
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no request event for " + endpoint + " within 5 s: " + events.events());
    }

    @Test
    void responsesAndMessagesAreKeyedTieredJudgedAndPublished(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RecordingEventSink events = new RecordingEventSink();
        JsonObject config = RouterFixture.config(upstream);
        config.getJsonObject("dataPlane").put("tenantKeys", "required");
        config.getJsonObject("control").put("bearerToken", CONTROL_TOKEN);
        RouterRuntime router = RouterFixture.start(config, events);
        try {
            RequestOptions put = new RequestOptions().setMethod(HttpMethod.PUT).setHost("127.0.0.1")
                    .setPort(config.getJsonObject("control").getInteger("port")).setURI("/tenants/acme/keys")
                    .putHeader("Authorization", "Bearer " + CONTROL_TOKEN).putHeader("Content-Type", "application/json");
            assertEquals(200, RouterFixture.exchange(client, put, new JsonObject().put("keys",
                    new JsonArray().add(TenantKeys.hash(ACME_KEY))).toBuffer()).await().status());

            JsonObject messages = new JsonObject().put("model", "claude").put("max_tokens", 32)
                    .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", "hello there")));
            RouterFixture.Reply anthropic = post(client, router, "/v1/messages", messages, Map.of("x-api-key", ACME_KEY));
            assertEquals(200, anthropic.status(), anthropic.body().toString());
            assertEquals("message", anthropic.json().getString("type"));
            assertEquals("served by nano", anthropic.json().getJsonArray("content").getJsonObject(0).getString("text"));
            assertEquals("nano", anthropic.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
            assertNotNull(anthropic.header(DataPlaneHandler.HEADER_MISROUTE));
            JsonObject event = requestEvent(events, "messages");
            assertEquals("acme", event.getString("tenant"), "x-api-key named the tenant: " + event);
            assertEquals("nano", event.getString("assigned_tier"));
            assertNotNull(event.getJsonObject("misroute"), "the answer was judged: " + event);

            RouterFixture.Reply wrong = post(client, router, "/v1/messages", messages, Map.of("x-api-key", "nx-nobody"));
            assertEquals(401, wrong.status());
            assertTrue(wrong.header("WWW-Authenticate").contains("invalid_token"), "a wrong key, not a missing one");
            assertTrue(!wrong.body().toString().contains("nx-nobody"), "the 401 echoes the key");

            RouterFixture.Reply openai = post(client, router, "/v1/responses",
                    new JsonObject().put("model", "gpt").put("input", "hello there"),
                    Map.of("Authorization", "Bearer " + ACME_KEY));
            assertEquals(200, openai.status(), openai.body().toString());
            assertEquals("response", openai.json().getString("object"));
            assertEquals("completed", openai.json().getString("status"));
            assertEquals(200, requestEvent(events, "responses").getInteger("status"));
            RouterFixture.Reply refused = post(client, router, "/v1/responses", new JsonObject().put("input", "x")
                    .put("tools", new JsonArray().add(new JsonObject().put("type", "function"))),
                    Map.of("Authorization", "Bearer " + ACME_KEY));
            assertEquals(400, refused.status());
            assertEquals("https://nexuscore.io/problems/unsupported-feature", refused.json().getString("type"));
            assertEquals(1, router.registry().find("nexus_http_errors").tag("type", "unsupported-feature").counter().count());
            assertTrue(router.registry().find("nexus_requests").tag("tier", "nano").counters().stream()
                    .mapToDouble(c -> c.count()).sum() >= 2, "counted as requests of the tier");
        } finally {
            router.close();
            upstream.close().await();
        }
    }
}
