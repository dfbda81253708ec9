package io.nexuscore.dataplane;

import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ASSIGNED_TIER;
import static io.nexuscore.dataplane.DataPlaneTest.assertProblem;
import static io.nexuscore.dataplane.DataPlaneTest.errors;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Tier failures become the documented status and problem, and one failing tier never stalls the others. */
@ExtendWith(VertxExtension.class)
class TierFailureTest {

    @Test
    void unreachableUpstreamIs502AndOtherTiersKeepServing(Vertx vertx, VertxTestContext ctx) {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        JsonObject config = RouterFixture.config(upstream);
        // Nothing listens on a freshly freed port: connect is refused.
        config.getJsonObject("tiers").getJsonObject("nano").getJsonObject("upstream")
                .put("baseUrl", "http://127.0.0.1:" + FreePort.pick() + "/v1");
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        HttpClient client = vertx.createHttpClient();
        int port = router.dataPlanePort();
        Future<RouterFixture.Reply> nano = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(10));
        Future<RouterFixture.Reply> large = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(900));
        Future.all(nano, large).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            assertProblem(nano.result(), 502, "upstream");
            assertEquals("nano", nano.result().header(HEADER_ASSIGNED_TIER));
            assertEquals(200, large.result().status());
            assertEquals(1, errors(router, "upstream"));
            router.close();
            ctx.completeNow();
        })));
    }

    /** A reachable upstream that does not answer within the tier's timeout is a gateway timeout (504). */
    @Test
    void upstreamSlowerThanItsTimeoutIs504AndOtherTiersKeepServing(Vertx vertx, VertxTestContext ctx) {
        LocalOpenAiServer fast = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer slow = LocalOpenAiServer.start(vertx).await();
        slow.hold();
        JsonObject config = RouterFixture.config(fast);
        config.getJsonObject("tiers").getJsonObject("nano").getJsonObject("upstream")
                .put("baseUrl", slow.baseUrl("nano")).put("timeoutMs", 300);
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        HttpClient client = vertx.createHttpClient();
        int port = router.dataPlanePort();
        Future<RouterFixture.Reply> nano = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(10));
        Future<RouterFixture.Reply> small = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(400));
        Future.all(nano, small).onComplete(ctx.succeeding(all -> ctx.verify(() -> {
            assertProblem(nano.result(), 504, "deadline");
            assertEquals(200, small.result().status());
            slow.release();
            router.close();
            ctx.completeNow();
        })));
    }

    @Test
    void fullTierQueueIs503WithRetryAfter(Vertx vertx, VertxTestContext ctx) throws Exception {
        LocalOpenAiServer others = LocalOpenAiServer.start(vertx).await();
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        upstream.hold();
        JsonObject config = RouterFixture.config(others);
        // One request in flight, one waiting: a third has no room.
        config.getJsonObject("tiers").getJsonObject("nano").put("instances", 1).put("queueCapacity", 1)
                .getJsonObject("upstream").put("baseUrl", upstream.baseUrl("nano"));
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        HttpClient client = vertx.createHttpClient();
        int port = router.dataPlanePort();
        Future<RouterFixture.Reply> first = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(10));
        upstream.awaitReceived(1);
        Future<RouterFixture.Reply> second = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(11));
        Future<RouterFixture.Reply> third = RouterFixture.post(client, port, "/v1/chat/completions", RouterFixture.chat(12));
        // Whichever of the two reached the pool last found the wait queue full and was refused.
        Future<RouterFixture.Reply> refused = Future.any(second, third).map(any ->
                second.isComplete() ? second.result() : third.result());
        refused.compose(reply -> {
            Future<RouterFixture.Reply> large = RouterFixture.post(client, port, "/v1/chat/completions",
                    RouterFixture.chat(900));
            return large.map(l -> List.of(reply, l));
        }).onComplete(ctx.succeeding(replies -> ctx.verify(() -> {
            RouterFixture.Reply reply = replies.get(0);
            assertProblem(reply, 503, "queue-full");
            assertEquals("1", reply.header("Retry-After"));
            assertEquals(200, replies.get(1).status(), "the large tier serves while nano is saturated");
            upstream.release();
            Future.all(first, second, third).onComplete(done -> ctx.verify(() -> {
                assertEquals(200, first.result().status());
                long served = List.of(second, third).stream().filter(f -> f.result().status() == 200).count();
                assertEquals(1, served, "the queued request is served once the upstream answers");
                router.close();
                ctx.completeNow();
            }));
        })));
    }

    /** Every failure kind of the tier contract, through a real acceptor, as a backend reports it. */
    @ParameterizedTest
    @EnumSource(TierFailure.Kind.class)
    void everyTierFailureKindHasItsStatusAndProblem(TierFailure.Kind kind, Vertx vertx, VertxTestContext ctx) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DataPlaneMetrics metrics = new DataPlaneMetrics(registry);
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new FailingBackend(tier, kind));
            models.put(tier, "m-" + tier.label());
        }
        RouterConfig config = RouterConfig.fromJson(RouterFixture.config(LocalOpenAiServer.start(vertx).await()));
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, ReadCost.MEMORY, metrics);
        List<Tier> recorded = new java.util.concurrent.CopyOnWriteArrayList<>();
        DataPlaneHandler handler = new DataPlaneHandler(DataPlaneDependencies.of(config.dataPlane(), resolver, backends,
                models, metrics, EventSink.DISCARD,
                (tier, misroute, tenant, nanos, trueTokens, estimateQ4) -> recorded.add(tier), null));
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), handler);
        HttpClient client = vertx.createHttpClient();
        vertx.deployVerticle(acceptor)
                .compose(id -> RouterFixture.post(client, acceptor.actualPort(), "/v1/tasks/anything",
                        new JsonObject().put("prompt", "p")))
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertProblem(reply, TierFailureProblems.type(kind).status(), kind.label());
                    boolean retryable = kind == TierFailure.Kind.QUEUE_FULL || kind == TierFailure.Kind.CLOSED
                            || kind == TierFailure.Kind.QUEUE_TIMEOUT || kind == TierFailure.Kind.UNAVAILABLE;
                    if (retryable) {
                        assertEquals("1", reply.header("Retry-After"));
                    } else {
                        assertNull(reply.header("Retry-After"));
                    }
                    assertTrue(reply.json().getString("detail").contains("injected " + kind));
                    assertEquals(1, registry.find("nexus_http_errors").tag("type", kind.label()).counter().count());
                    assertEquals(kind == TierFailure.Kind.DEADLINE ? List.of(Tier.NANO) : List.of(), recorded,
                            "only a deadline is a latency the feedback loop should see");
                    assertEquals(1, registry.find("nexus_requests").tag("status", String.valueOf(TierFailureProblems.type(kind).status()))
                            .counter().count());
                    ctx.completeNow();
                })));
    }

    /** Stands in for a Wasm pool (merged separately) reporting a failure of the tier contract. */
    private record FailingBackend(Tier tier, TierFailure.Kind kind) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            return CompletableFuture.failedFuture(new TierFailure(kind, "injected " + kind));
        }

        @Override
        public void close() {
        }
    }
}
