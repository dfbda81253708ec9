package io.nexuscore.bench;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.dataplane.AcceptorVerticle;
import io.nexuscore.dataplane.DataPlaneDependencies;
import io.nexuscore.dataplane.DataPlaneHandler;
import io.nexuscore.dataplane.DataPlaneMetrics;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.dataplane.TierResolver;
import io.nexuscore.events.EventSink;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The router's own cost: the full data plane (routing, body limit, JSON parse, scoring, dispatch,
 * OpenAI rendering, metrics, events) in front of an in-process tier that answers at once, standing
 * in for the Wasm nano guest until the pools are merged. Same answer text as the bare server.
 *
 * Usage: InlineRouter PORT [INSTANCES]
 */
public final class InlineRouter {

    private InlineRouter() {
    }

    /** A tier that does no work: what remains is the router. */
    private record InstantTier(Tier tier) implements TierBackend {
        @Override
        public CompletableFuture<TierReply> submit(TierRequest request) {
            return CompletableFuture.completedFuture(new TierReply("Hello there, how are you?", tier,
                    request.prompt().length() / 4, 7, "nexus-" + tier.label()));
        }

        @Override
        public void close() {
        }
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int instances = args.length > 1 ? Integer.parseInt(args[1]) : Runtime.getRuntime().availableProcessors();
        RouterConfig config = RouterConfig.fromJson(new JsonObject()
                .put("dataPlane", new JsonObject().put("host", "127.0.0.1").put("port", port).put("instances", instances))
                .put("kernel", new JsonObject().put("mode", "user")));
        PeerVertx peer = PeerVertx.start();
        Vertx vertx = peer.vertx();
        DataPlaneMetrics metrics = new DataPlaneMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new InstantTier(tier));
            models.put(tier, "nexus-" + tier.label());
        }
        TierResolver resolver = new TierResolver(new Scorer(config.scoring().weights()),
                new InMemoryThresholdStore(config.scoring().thresholds()), VerdictSource.NONE, ReadCost.MEMORY, metrics);
        DataPlaneHandler handler = new DataPlaneHandler(DataPlaneDependencies.of(config.dataPlane(), resolver, backends,
                models, metrics, EventSink.DISCARD, LatencyRecorder.NONE, null));
        vertx.deployVerticle(() -> new AcceptorVerticle(config.dataPlane(), handler),
                new DeploymentOptions().setInstances(instances)).await();
        System.out.println("inline router on 127.0.0.1:" + port + " (" + instances + " instances, transport "
                + peer.transport() + ")");
    }
}
