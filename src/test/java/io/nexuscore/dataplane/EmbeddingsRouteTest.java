package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * POST /v1/embeddings against real local upstreams: a failing endpoint is passed over for a healthy
 * one, an all-failing target is a 502 problem that does not echo the upstream, a 4xx is refused;
 * each answer counted by status and published as a request event without a tier.
 */
@ExtendWith(VertxExtension.class)
class EmbeddingsRouteTest {

    private static double count(RouterRuntime router, String status) {
        var c = router.registry().find("nexus_embeddings_requests").tag("status", status).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void aFailingEndpointIsPassedOverAndAFailingTargetIsAProblem(Vertx vertx) throws Exception {
        LocalOpenAiServer failing = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer healthy = LocalOpenAiServer.start(vertx).await();
        failing.failWith(503);
        HttpClient client = vertx.createHttpClient();
        RecordingEventSink events = new RecordingEventSink();
        JsonObject config = RouterFixture.config(healthy).put("embeddings", new JsonObject().put("model", "nx-embed")
                .put("upstream", new JsonObject().put("model", "up-embed").put("maxRetries", 1).put("ejectAfter", 1)
                        .put("baseUrls", new JsonArray(List.of(failing.baseUrl("a"), healthy.baseUrl("b"))))));
        RouterRuntime router = RouterFixture.start(config, events);
        JsonObject body = new JsonObject().put("model", "whatever").put("input", new JsonArray().add("abcd").add("abcdefgh"))
                .put("encoding_format", "float");
        try {
            for (int i = 0; i < 3; i++) {
                RouterFixture.Reply reply = RouterFixture.post(client, router.dataPlanePort(), "/v1/embeddings", body).await();
                assertEquals(200, reply.status(), reply.body().toString());
                JsonObject answer = reply.json();
                assertEquals("nx-embed", answer.getString("model"));
                assertEquals(2, answer.getJsonArray("data").size());
                assertEquals(8.0, answer.getJsonArray("data").getJsonObject(1).getJsonArray("embedding").getDouble(0), 1e-6);
            }
            assertEquals("up-embed", healthy.bodies().get(0).getString("model"), "the upstream's model went upstream");
            assertTrue(failing.received() <= 1, "ejected after its first failure, not tried again: " + failing.received());
            assertEquals(3, count(router, "200"));
            JsonObject event = events.events().stream().filter(e -> e.type().equals("request")).findFirst().orElseThrow().data();
            assertEquals("embeddings", event.getString("endpoint"));
            assertEquals(200, event.getInteger("status"));
            assertEquals(null, event.getValue("assigned_tier"));

            healthy.failWith(500);
            RouterFixture.Reply failed = RouterFixture.post(client, router.dataPlanePort(), "/v1/embeddings", body).await();
            assertEquals(502, failed.status(), failed.body().toString());
            assertEquals("https://nexuscore.io/problems/upstream", failed.json().getString("type"));
            assertFalse(failed.body().toString().contains("sk-upstream"), "the upstream's words are not echoed");
            assertEquals(1, count(router, "502"));

            healthy.failWith(400);
            RouterFixture.Reply refused = RouterFixture.post(client, router.dataPlanePort(), "/v1/embeddings", body).await();
            assertEquals(400, refused.status());
            assertEquals("https://nexuscore.io/problems/upstream-refused", refused.json().getString("type"));

            RouterFixture.Reply bad = RouterFixture.post(client, router.dataPlanePort(), "/v1/embeddings",
                    body.copy().put("dimensions", 0)).await();
            assertEquals(400, bad.status());
            assertTrue(bad.json().getString("detail").contains("dimensions"), bad.json().encode());
            assertEquals(1, router.registry().find("nexus_http_errors").tag("type", "invalid-request").counter().count());
        } finally {
            router.close();
        }
    }
}
