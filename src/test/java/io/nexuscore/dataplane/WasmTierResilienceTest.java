package io.nexuscore.dataplane;

import static io.nexuscore.dataplane.DataPlaneTest.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * No client can wedge a Wasm tier: test hooks are refused unless the operator enabled them, a
 * queued request whose client left is never run, and a request that waited past the tier's
 * maxQueueWaitMs gets 503 + Retry-After. Real nano guests behind the real listener.
 */
@ExtendWith(VertxExtension.class)
class WasmTierResilienceTest {

    /** Upstream tiers from the fixture, except nano: one real Wasm instance with a small queue. */
    private static JsonObject oneNanoWorker(LocalOpenAiServer others, long maxQueueWaitMs) {
        JsonObject config = RouterFixture.config(others);
        config.getJsonObject("dataPlane").put("testHooks", true);
        JsonObject nano = config.getJsonObject("tiers").getJsonObject("nano");
        nano.remove("upstream");
        nano.put("instances", 1).put("queueCapacity", 4).put("maxQueueWaitMs", maxQueueWaitMs).put("cpus", List.of());
        return config;
    }

    /** Waits (bounded) until GET /tiers shows the one nano worker inside a guest call. */
    private static void awaitWorkerBusy(Vertx vertx, JsonObject config) throws InterruptedException {
        int control = config.getJsonObject("control").getInteger("port");
        HttpClient client = vertx.createHttpClient();
        JsonObject last = null;
        for (int i = 0; i < 3_000; i++) { // bounded, generous: a loaded CI machine starts guests slowly
            JsonObject tiers = RouterFixture.send(client, control, io.vertx.core.http.HttpMethod.GET, "/tiers", null)
                    .await().json();
            for (Object t : tiers.getJsonArray("tiers")) {
                if (t instanceof JsonObject tier && "nano".equals(tier.getString("tier"))
                        && tier.getJsonObject("pool").getInteger("busy") == 1) {
                    return;
                }
            }
            Thread.sleep(20);
            last = tiers;
        }
        throw new AssertionError("the nano worker never got busy: " + last);
    }

    private static JsonObject busy(int ms) {
        return new JsonObject().put("prompt", "hi").put("simulate_ms", ms);
    }

    private static double meter(RouterRuntime router, String name) {
        Counter counter = router.registry().find(name).tag("tier", "nano").counter();
        if (counter != null) {
            return counter.count();
        }
        Gauge gauge = router.registry().find(name).tag("tier", "nano").gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    @Test
    void testHooksAreRefusedByDefaultNamingTheFields(Vertx vertx) {
        RouterRuntime router = RouterFixture.start(RouterFixture.config(LocalOpenAiServer.start(vertx).await()),
                EventSink.DISCARD);
        try {
            RouterFixture.Reply reply = RouterFixture.post(vertx.createHttpClient(), router.dataPlanePort(),
                    "/v1/tasks/echo", new JsonObject().put("prompt", "hi").put("simulate_spin", true)
                            .put("simulate_alloc_bytes", 1)).await();
            assertProblem(reply, 400, "invalid-request");
            String detail = reply.json().getString("detail");
            assertTrue(detail.contains("simulate_alloc_bytes") && detail.contains("simulate_spin"), detail);
            assertTrue(detail.contains("dataPlane.testHooks"), detail);
        } finally {
            router.close();
        }
    }

    @Test
    void simulatedLatencyNeverFeedsTheAdaptiveLoop(Vertx vertx) {
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new Answering(tier));
            models.put(tier, tier.label());
        }
        JsonObject json = RouterFixture.config(LocalOpenAiServer.start(vertx).await());
        json.getJsonObject("dataPlane").put("testHooks", true);
        RouterConfig config = RouterConfig.fromJson(json);
        DataPlaneMetrics metrics = new DataPlaneMetrics(new SimpleMeterRegistry());
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, ReadCost.MEMORY, metrics);
        List<Tier> recorded = new CopyOnWriteArrayList<>();
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), new DataPlaneHandler(
                DataPlaneDependencies.of(config.dataPlane(), resolver, backends, models, metrics,
                        EventSink.DISCARD, (tier, misroute, tenant, nanos, trueTokens, estimateQ4) -> recorded.add(tier), null)));
        vertx.deployVerticle(acceptor).await();
        HttpClient client = vertx.createHttpClient();
        assertEquals(200, RouterFixture.post(client, acceptor.actualPort(), "/v1/tasks/echo", busy(5)).await().status());
        assertEquals(List.of(), recorded, "a simulated latency reached the feedback loop");
        assertEquals(200, RouterFixture.post(client, acceptor.actualPort(), "/v1/tasks/echo",
                new JsonObject().put("prompt", "hi")).await().status());
        assertEquals(List.of(Tier.NANO), recorded);
    }

    @Test
    void aQueuedRequestWhoseClientLeftIsNeverRun(Vertx vertx) throws Exception {
        JsonObject config = oneNanoWorker(LocalOpenAiServer.start(vertx).await(), 60_000);
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        try {
            Future<RouterFixture.Reply> first = RouterFixture.post(vertx.createHttpClient(), router.dataPlanePort(),
                    "/v1/tasks/echo", busy(1_500));
            awaitWorkerBusy(vertx, config);
            byte[] body = busy(1_500).toBuffer().getBytes();
            try (Socket socket = new Socket("127.0.0.1", router.dataPlanePort())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST /v1/tasks/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                for (int i = 0; i < 500 && meter(router, "nexus.tier.queue.depth") < 1; i++) {
                    Thread.sleep(10);
                }
                assertEquals(1, meter(router, "nexus.tier.queue.depth"), "the second request should be queued");
            }
            for (int i = 0; i < 500 && meter(router, "nexus.tier.cancelled") < 1; i++) {
                Thread.sleep(10);
            }
            assertEquals(1, meter(router, "nexus.tier.cancelled"));
            assertEquals(0, meter(router, "nexus.tier.queue.depth"), "the cancelled job left the queue at once");
            assertEquals(200, first.await().status());
            // The worker is free now; had the job stayed, it would run within its next poll.
            Thread.sleep(300);
            assertEquals(1, router.registry().find("nexus.tier.call").tag("tier", "nano").timer().count(),
                    "the worker ran the request of a client that had gone");
        } finally {
            router.close();
        }
    }

    @Test
    void aRequestWaitingPastMaxQueueWaitGets503WithRetryAfter(Vertx vertx) throws Exception {
        JsonObject config = oneNanoWorker(LocalOpenAiServer.start(vertx).await(), 200);
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        try {
            HttpClient client = vertx.createHttpClient();
            Future<RouterFixture.Reply> first = RouterFixture.post(client, router.dataPlanePort(), "/v1/tasks/echo", busy(1_500));
            awaitWorkerBusy(vertx, config);
            RouterFixture.Reply second = RouterFixture.post(client, router.dataPlanePort(), "/v1/tasks/echo",
                    new JsonObject().put("prompt", "hi")).await();
            assertProblem(second, 503, "queue-timeout");
            assertNotNull(second.header("Retry-After"));
            assertEquals(200, first.await().status());
            assertEquals(1, meter(router, "nexus.tier.queue.expired"));
        } finally {
            router.close();
        }
    }

    /** A backend that answers at once, as its tier. */
    private record Answering(Tier tier) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            return CompletableFuture.completedFuture(new TierReply("ok", tier, 1, 1, "m"));
        }

        @Override
        public void close() {
        }
    }
}
