package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.http.ProblemType;
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
 * What a client that is not the operator can make the upstream spend, through a real router and a
 * real upstream over loopback: the tenant header cannot name a tenant that has keys and must be a
 * tenant id; n and max_tokens are capped per tier; unknown top-level fields are refused (or dropped,
 * or passed, as configured); a case variant of model/stream/stream_options never reaches the
 * upstream beside the router's own. Each refusal is problem+json with its type, counted, and the
 * upstream receives nothing.
 */
@ExtendWith(VertxExtension.class)
class RequestGuardTest {

    private static final String CONTROL_TOKEN = "control-token-for-request-guard";
    private static final String ACME_KEY = "nx-acme-3f9c2b7d41e8a6055d1c";

    private static JsonObject config(LocalOpenAiServer upstream, JsonObject requestLimits) {
        JsonObject config = RouterFixture.config(upstream);
        config.getJsonObject("dataPlane").put("tenantKeys", "optional");
        if (requestLimits != null) {
            config.getJsonObject("dataPlane").put("requestLimits", requestLimits);
        }
        config.getJsonObject("control").put("bearerToken", CONTROL_TOKEN);
        return config;
    }

    private static RouterFixture.Reply chat(HttpClient client, RouterRuntime router, JsonObject body,
                                            Map<String, String> headers) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                .setPort(router.dataPlanePort()).setURI("/v1/chat/completions").putHeader("Content-Type", "application/json");
        headers.forEach(options::putHeader);
        return RouterFixture.exchange(client, options, body.toBuffer()).await();
    }

    private static double errors(RouterRuntime router, ProblemType type) {
        var counter = router.registry().find("nexus_http_errors").tag("type", type.slug()).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void assertRefused(RouterRuntime router, RouterFixture.Reply reply, ProblemType type, String detailPart) {
        assertEquals(type.status(), reply.status(), reply.body().toString());
        assertEquals("application/problem+json", reply.header("Content-Type"));
        assertEquals(type.type(), reply.json().getString("type"));
        assertTrue(reply.json().getString("detail").contains(detailPart), reply.json().getString("detail"));
        assertTrue(errors(router, type) >= 1, "counted in nexus_http_errors{type=" + type.slug() + "}");
    }

    @Test
    void theTenantHeaderCannotNameATenantWithKeysAndMustBeAnId(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        JsonObject config = config(upstream, null);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            RequestOptions put = new RequestOptions().setMethod(HttpMethod.PUT).setHost("127.0.0.1")
                    .setPort(config.getJsonObject("control").getInteger("port")).setURI("/tenants/acme/keys")
                    .putHeader("Authorization", "Bearer " + CONTROL_TOKEN).putHeader("Content-Type", "application/json");
            assertEquals(200, RouterFixture.exchange(client, put, new JsonObject().put("keys",
                    new JsonArray().add(TenantKeys.hash(ACME_KEY))).toBuffer()).await().status());

            RouterFixture.Reply named = chat(client, router, RouterFixture.chat(20), Map.of("X-NX-Tenant", "acme"));
            assertRefused(router, named, ProblemType.TENANT_KEY_REQUIRED, "acme");
            assertTrue(named.header("WWW-Authenticate").startsWith("Bearer "));
            RouterFixture.Reply bad = chat(client, router, RouterFixture.chat(20), Map.of("X-NX-Tenant", "../acme"));
            assertRefused(router, bad, ProblemType.INVALID_TENANT, "X-NX-Tenant");
            assertRefused(router, chat(client, router, RouterFixture.chat(20), Map.of("X-NX-Tenant", "a".repeat(65))),
                    ProblemType.INVALID_TENANT, "tenant id");
            assertEquals(0, upstream.received(), "no refused request reached the upstream");

            assertEquals(200, chat(client, router, RouterFixture.chat(20),
                    Map.of("X-NX-Tenant", "acme", "Authorization", "Bearer " + ACME_KEY)).status(), "with its key");
            assertEquals(200, chat(client, router, RouterFixture.chat(20), Map.of("X-NX-Tenant", "initech")).status(),
                    "a tenant without keys is still named by the header");
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void nAndMaxTokensAreCappedPerTierBeforeAnythingIsForwarded(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RouterRuntime router = RouterFixture.start(config(upstream, new JsonObject()
                .put("nano", new JsonObject().put("maxTokens", 256).put("n", 1))), new RecordingEventSink());
        try {
            // A nano-sized prompt asking for 128 choices of 32,000 tokens each, on the router's key.
            assertRefused(router, chat(client, router, RouterFixture.chat(20).put("n", 128), Map.of()),
                    ProblemType.REQUEST_LIMIT, "n/best_of 128 is above the nano tier's 1");
            assertRefused(router, chat(client, router, RouterFixture.chat(20).put("max_tokens", 32_000), Map.of()),
                    ProblemType.REQUEST_LIMIT, "32000 is above the nano tier's 256");
            assertRefused(router, chat(client, router, RouterFixture.chat(20).put("max_completion_tokens", 257), Map.of()),
                    ProblemType.REQUEST_LIMIT, "257");
            assertRefused(router, chat(client, router, RouterFixture.chat(20).put("n", "128"), Map.of()),
                    ProblemType.INVALID_REQUEST, "n must be a non-negative integer");
            assertEquals(0, upstream.received(), "nothing was forwarded");

            RouterFixture.Reply within = chat(client, router,
                    RouterFixture.chat(20).put("n", 1).put("max_completion_tokens", 256), Map.of());
            assertEquals(200, within.status(), within.body().toString());
            assertEquals("nano", within.header("X-NX-Tier"));
            assertEquals(256, upstream.bodies().get(0).getInteger("max_completion_tokens"));
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void unknownTopLevelFieldsAreRefusedByDefault(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RouterRuntime router = RouterFixture.start(config(upstream, null), new RecordingEventSink());
        try {
            RouterFixture.Reply tier = chat(client, router, RouterFixture.chat(20).put("service_tier", "priority"), Map.of());
            assertRefused(router, tier, ProblemType.UNKNOWN_FIELD, "service_tier");
            assertEquals("service_tier", tier.json().getString("field"));
            assertRefused(router, chat(client, router, RouterFixture.chat(20).put("num_predict", 100_000), Map.of()),
                    ProblemType.UNKNOWN_FIELD, "num_predict");
            assertEquals(0, upstream.received());
            // The OpenAI fields pass, nested objects included.
            RouterFixture.Reply ok = chat(client, router, RouterFixture.chat(20).put("temperature", 0.2)
                    .put("response_format", new JsonObject().put("type", "json_object").put("service_tier", "x")), Map.of());
            assertEquals(200, ok.status(), ok.body().toString());
            assertEquals(0.2, upstream.bodies().get(0).getDouble("temperature"));
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void dropRemovesUnknownFieldsAndPassForwardsThem(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RouterRuntime dropping = RouterFixture.start(config(upstream, new JsonObject().put("unknownFields", "drop")),
                new RecordingEventSink());
        try {
            RouterFixture.Reply reply = chat(client, dropping, RouterFixture.chat(20).put("service_tier", "priority")
                    .put("temperature", 0.5), Map.of());
            assertEquals(200, reply.status(), reply.body().toString());
            JsonObject forwarded = upstream.bodies().get(0);
            assertFalse(forwarded.containsKey("service_tier"), forwarded.encode());
            assertEquals(0.5, forwarded.getDouble("temperature"));
            assertEquals("upstream-nano", forwarded.getString("model"));
        } finally {
            dropping.close();
        }
        RouterRuntime passing = RouterFixture.start(config(upstream, new JsonObject().put("unknownFields", "pass")),
                new RecordingEventSink());
        try {
            assertEquals(200, chat(client, passing, RouterFixture.chat(20).put("keep_alive", "5m"), Map.of()).status());
            assertEquals("5m", upstream.bodies().get(1).getString("keep_alive"));
        } finally {
            passing.close();
            upstream.close().await();
        }
    }

    @Test
    void aCaseVariantOfModelOrStreamTakesTheRebuiltBody(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        RouterRuntime router = RouterFixture.start(config(upstream, new JsonObject().put("unknownFields", "pass")),
                new RecordingEventSink());
        try {
            // Go's encoding/json (Ollama, LocalAI) matches keys case-insensitively and takes the last one.
            String raw = "{\"model\":\"whatever\",\"messages\":[{\"role\":\"user\",\"content\":\"hi there\"}],"
                    + "\"MODEL\":\"gpt-4o-the-expensive-one\",\"Stream_Options\":{\"include_usage\":false}}";
            RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                    .setPort(router.dataPlanePort()).setURI("/v1/chat/completions").putHeader("Content-Type", "application/json");
            RouterFixture.Reply reply = RouterFixture.exchange(client, options, io.vertx.core.buffer.Buffer.buffer(raw)).await();
            assertEquals(200, reply.status(), reply.body().toString());
            JsonObject forwarded = upstream.bodies().get(0);
            assertEquals("upstream-nano", forwarded.getString("model"));
            forwarded.fieldNames().forEach(name -> assertTrue(name.equals(name.toLowerCase(java.util.Locale.ROOT)),
                    "the client's " + name + " reached the upstream: " + forwarded.encode()));
            assertEquals("hi there", forwarded.getJsonArray("messages").getJsonObject(0).getString("content"));
        } finally {
            router.close();
            upstream.close().await();
        }
    }
}
