package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierPoolState;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The calibration sample each completed request hands the latency recorder: the true prompt token
 * count only when a Wasm guest (a pool backend) answered; an upstream's count is another tokenizer's,
 * so its requests carry none (0, 0).
 */
@ExtendWith(VertxExtension.class)
class CalibrationSampleTest {

    private static final int GUEST_TOKENS = 42;

    /** A tier answering with a fixed prompt-token count; {@code pool}: it presents itself as a Wasm pool. */
    private record CountingTier(Tier tier, boolean pool) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            return CompletableFuture.completedFuture(new TierReply("ok", tier, 10, GUEST_TOKENS, 1, "m"));
        }

        @Override
        public Optional<TierPoolState> poolState() {
            return pool ? Optional.of(new TierPoolState(tier, "test", 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, false, 0, 0))
                    : Optional.empty();
        }

        @Override
        public void close() {
        }
    }

    private record Sample(Tier tier, int trueTokens, int estimateQ4) {
    }

    @Test
    void onlyGuestAnswersCarryTheTrueCount(Vertx vertx) throws InterruptedException {
        RouterConfig config = RouterConfig.fromJson(RouterFixture.config(LocalOpenAiServer.start(vertx).await()));
        Sample guest = sample(vertx, config, true);
        assertEquals(Tier.NANO, guest.tier());
        assertEquals(GUEST_TOKENS, guest.trueTokens(), "a guest's count is a sample");
        assertTrue(guest.estimateQ4() > 0, "with the resolution's unit-gain estimate: " + guest);
        assertEquals(new Sample(Tier.NANO, 0, 0), sample(vertx, config, false), "an upstream's is not");
    }

    /** One small request through a data plane whose tiers are pools (or not); what the recorder got. */
    private static Sample sample(Vertx vertx, RouterConfig config, boolean pools) throws InterruptedException {
        DataPlaneMetrics metrics = new DataPlaneMetrics(new SimpleMeterRegistry());
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new CountingTier(tier, pools));
            models.put(tier, "m");
        }
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, ReadCost.MEMORY, metrics);
        List<Sample> samples = new CopyOnWriteArrayList<>();
        LatencyRecorder recorder = (tier, misroute, tenant, nanos, trueTokens, estimateQ4) ->
                samples.add(new Sample(tier, trueTokens, estimateQ4));
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), new DataPlaneHandler(
                DataPlaneDependencies.of(config.dataPlane(), resolver, backends, models, metrics,
                        EventSink.DISCARD, recorder, null)));
        String id = vertx.deployVerticle(acceptor).await();
        try {
            RouterFixture.Reply reply = RouterFixture.post(vertx.createHttpClient(), acceptor.actualPort(), "/v1/tasks/echo",
                    new JsonObject().put("prompt", "hi")).await();
            assertEquals(200, reply.status());
            assertEquals("nano", reply.header(DataPlaneHandler.HEADER_ASSIGNED_TIER));
            // The recorder runs right after the response is written: it may trail the client's read.
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (samples.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } finally {
            vertx.undeploy(id).await();
        }
        assertEquals(1, samples.size(), "one sample per completed request: " + samples);
        return samples.get(0);
    }
}
