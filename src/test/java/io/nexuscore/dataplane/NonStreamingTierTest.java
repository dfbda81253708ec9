package io.nexuscore.dataplane;
import io.nexuscore.kernel.maps.LatencyRecorder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code stream: true} on a tier that answers in one piece (the Wasm pools) still gets an OpenAI
 * event stream, and the tier's own assessment (here: large for a nano request) counts a misroute.
 */
@ExtendWith(VertxExtension.class)
class NonStreamingTierTest {

    /** Answers at once and always believes the request was a large one. */
    private record OpinionatedTier(Tier tier) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            return CompletableFuture.completedFuture(new TierReply("whole answer", Tier.LARGE, 3, 2, "m-" + tier.label()));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void wholeRepliesBecomeAOneChunkEventStreamAndMisroutesAreCounted(Vertx vertx, VertxTestContext ctx) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DataPlaneMetrics metrics = new DataPlaneMetrics(registry);
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new OpinionatedTier(tier));
            models.put(tier, "m-" + tier.label());
        }
        RouterConfig config = RouterConfig.fromJson(RouterFixture.config(LocalOpenAiServer.start(vertx).await()));
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, ReadCost.MEMORY, metrics);
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), new DataPlaneHandler(
                DataPlaneDependencies.of(config.dataPlane(), resolver, backends, models, metrics,
                        EventSink.DISCARD, LatencyRecorder.NONE, null)));
        vertx.deployVerticle(acceptor)
                .compose(id -> RouterFixture.post(vertx.createHttpClient(), acceptor.actualPort(), "/v1/chat/completions",
                        RouterFixture.chat(5).put("stream", true)))
                .onComplete(ctx.succeeding(reply -> ctx.verify(() -> {
                    assertEquals(200, reply.status());
                    assertEquals("text/event-stream", reply.header("Content-Type"));
                    assertEquals("nano", reply.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
                    assertEquals("large", reply.header(DataPlaneHandler.HEADER_TIER));
                    String[] events = reply.body().toString().split("\n\n");
                    assertEquals(2, events.length);
                    JsonObject chunk = new JsonObject(events[0].substring("data: ".length()));
                    assertEquals("chat.completion.chunk", chunk.getString("object"));
                    assertEquals("whole answer", chunk.getJsonArray("choices").getJsonObject(0)
                            .getJsonObject("delta").getString("content"));
                    JsonObject nexus = chunk.getJsonObject("nexuscore");
                    assertEquals("nano", nexus.getString("assigned_tier"), "the one chunk carries the summary");
                    assertEquals("large", nexus.getString("observed_tier"));
                    assertEquals("user", nexus.getString("route_source"));
                    assertTrue(events[1].equals("data: [DONE]"));
                    assertEquals(1, registry.get("nexus_misroutes").tag("assigned", "nano").tag("observed", "large")
                            .counter().count());
                    // nano <-> large is gross; without a score of its own the reply cannot be banded.
                    assertEquals(1, registry.get("nexus_misroutes_gross").tag("assigned", "nano").tag("observed", "large")
                            .counter().count());
                    assertEquals(0, registry.find("nexus_misroutes_banded").counters().size());
                    ctx.completeNow();
                })));
    }
}
