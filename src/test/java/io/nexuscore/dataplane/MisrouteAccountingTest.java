package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.misroute.MisrouteMeters;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The data plane judges every answer strict / banded / gross against the thresholds the request
 * was assigned under, hands those thresholds to the tier, and shows the figures in the metrics,
 * the request events and the X-NX-Tokens header.
 */
@ExtendWith(VertxExtension.class)
class MisrouteAccountingTest {

    /** A tier whose "true score" is the prompt itself (a number), judged against the thresholds it was handed. */
    private record ScoreEchoTier(Tier tier) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            int score = Integer.parseInt(request.prompt());
            Tier observed = request.policy().thresholds().tierFor(score);
            return CompletableFuture.completedFuture(new TierReply("ok", observed, score, score - 1, 1, "m"));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void strictBandedAndGrossAreCountedAndPublished(Vertx vertx, VertxTestContext ctx) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DataPlaneMetrics metrics = new DataPlaneMetrics(registry);
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new ScoreEchoTier(tier));
            models.put(tier, "m");
        }
        RouterConfig config = RouterConfig.fromJson(RouterFixture.config(LocalOpenAiServer.start(vertx).await()));
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, ReadCost.MEMORY, metrics);
        List<JsonObject> events = new CopyOnWriteArrayList<>();
        EventSink sink = (type, data) -> {
            if (type.equals(RequestEvent.TYPE)) {
                events.add(data);
            }
        };
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), new DataPlaneHandler(
                DataPlaneDependencies.of(config.dataPlane(), resolver, backends, models, metrics,
                        sink, LatencyRecorder.NONE, null)));
        // Every body is ~16 bytes on /v1/tasks/echo: score 4, assigned nano (nano_max 60, band 20 %: 72).
        List<Integer> trueScores = List.of(50, 65, 80, 200);
        vertx.deployVerticle(acceptor).compose(id -> {
            HttpClient client = vertx.createHttpClient();
            Future<List<String>> chain = Future.succeededFuture(new ArrayList<>());
            for (int score : trueScores) {
                chain = chain.compose(tokens -> RouterFixture.post(client, acceptor.actualPort(), "/v1/tasks/echo",
                        new JsonObject().put("prompt", Integer.toString(score))).map(reply -> {
                            assertEquals(200, reply.status());
                            assertEquals("nano", reply.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
                            tokens.add(reply.header(DataPlaneHandler.HEADER_TOKENS));
                            return tokens;
                        }));
            }
            return chain;
        }).onComplete(ctx.succeeding(tokens -> ctx.verify(() -> {
            assertEquals(List.of("49", "64", "79", "199"), tokens);
            assertEquals(4, count(registry, MisrouteMeters.ASSESSED));
            assertEquals(3, count(registry, MisrouteMeters.STRICT));  // 65, 80, 200
            assertEquals(2, count(registry, MisrouteMeters.BANDED));  // 80, 200
            assertEquals(1, count(registry, MisrouteMeters.GROSS));   // 200
            assertEquals(1, registry.get(MisrouteMeters.GROSS).tag("assigned", "nano").tag("observed", "large")
                    .counter().count());
            JsonObject nano = MisrouteMeters.summary(registry, Tier.NANO);
            assertEquals(new JsonObject().put("assessed", 4L).put("strict", 3L).put("strict_rate", 0.75)
                    .put("banded", 2L).put("banded_rate", 0.5).put("gross", 1L).put("gross_rate", 0.25), nano);
            assertEquals(0L, MisrouteMeters.summary(registry, Tier.SMALL).getLong("assessed"));

            assertEquals(4, events.size());
            JsonObject gross = events.get(3);
            assertEquals("large", gross.getString("observed_tier"));
            assertEquals(200, gross.getInteger("observed_score"));
            assertEquals(199, gross.getInteger("prompt_tokens"));
            assertEquals(new JsonObject().put("strict", true).put("banded", true).put("gross", true),
                    gross.getJsonObject("misroute"));
            assertEquals(new JsonObject().put("strict", true).put("banded", false).put("gross", false),
                    events.get(1).getJsonObject("misroute"));
            ctx.completeNow();
        })));
    }

    private static double count(SimpleMeterRegistry registry, String name) {
        return registry.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
