package io.nexuscore.dataplane;
import io.nexuscore.kernel.maps.LatencyRecorder;

import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ASSIGNED_TIER;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_ROUTE_SOURCE;
import static io.nexuscore.dataplane.DataPlaneHandler.HEADER_SCORE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.upstream.UpstreamTierBackend;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The acceptor's kernel-mode path (worker hop, 4-tuple lookup, verdict verification) with a verdict
 * source that holds, like the kernel's LRU map, only the latest head seen: the one of request A.
 * The real map is exercised by the kernel data path's tests once merged.
 */
@ExtendWith(VertxExtension.class)
class KernelModePathTest {

    @Test
    void verifiedVerdictIsAppliedAndAStaleOneNeverIs(Vertx vertx, VertxTestContext ctx) {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        RouterConfig config = RouterConfig.fromJson(RouterFixture.config(upstream));
        Buffer bodyA = RouterFixture.chat(30).toBuffer();
        Buffer bodyB = RouterFixture.chat(31).toBuffer();
        byte[] line = "POST /v1/chat/completions HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1);
        // The kernel "saw" A with a score that differs from Java's, so the header proves who decided.
        KernelVerdict latestHead = new KernelVerdict(222, Tier.LARGE, bodyA.length(), Scorer.requestLineHash(line));
        List<FourTuple> lookups = new CopyOnWriteArrayList<>();
        List<String> lookupThreads = new CopyOnWriteArrayList<>();
        VerdictSource kernel = tuple -> {
            lookups.add(tuple);
            lookupThreads.add(Thread.currentThread().getName());
            return Optional.of(latestHead);
        };
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DataPlaneMetrics metrics = new DataPlaneMetrics(registry);
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new UpstreamTierBackend(vertx, config.tier(tier), () -> RouterFixture.THRESHOLDS));
            models.put(tier, config.tier(tier).model());
        }
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                kernel, ReadCost.SYSCALL, metrics);
        DataPlaneHandler handler = new DataPlaneHandler(DataPlaneDependencies.of(config.dataPlane(), resolver, backends,
                models, metrics, EventSink.DISCARD, LatencyRecorder.NONE,
                vertx.createSharedWorkerExecutor("test-resolver", 2)));
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), handler);
        HttpClient client = vertx.createHttpClient(new PoolOptions().setHttp1MaxSize(1));
        List<String> seen = new ArrayList<>();
        int[] clientPort = new int[1];
        vertx.deployVerticle(acceptor).compose(id -> {
            Future<Void> chain = Future.succeededFuture();
            for (Buffer body : new Buffer[] {bodyA, bodyB, bodyA}) {
                chain = chain.compose(v -> client.request(new RequestOptions().setMethod(HttpMethod.POST)
                                .setHost("127.0.0.1").setPort(acceptor.actualPort()).setURI("/v1/chat/completions"))
                        .compose(req -> req.send(body))
                        .compose(resp -> {
                            clientPort[0] = resp.request().connection().localAddress().port();
                            seen.add(resp.getHeader(HEADER_ROUTE_SOURCE) + "/" + resp.getHeader(HEADER_ASSIGNED_TIER)
                                    + "/" + resp.getHeader(HEADER_SCORE));
                            return resp.body().mapEmpty();
                        }));
            }
            return chain;
        }).onComplete(ctx.succeeding(v -> ctx.verify(() -> {
            int javaScoreB = RouterFixture.handScoredChat(31).score(); // 7, worked out by hand
            assertEquals(List.of("kernel/large/222", "user/nano/" + javaScoreB, "kernel/large/222"), seen);
            assertEquals(2, registry.get("nexus_kernel_user_disagreements").counter().count());
            assertEquals(1, registry.get("nexus_verdict_fallbacks").tag("reason", "stale").counter().count());
            FourTuple tuple = lookups.get(0);
            assertEquals(clientPort[0], tuple.srcPort(), "looked up by the client's source port");
            assertEquals(acceptor.actualPort(), tuple.dstPort());
            assertTrue(lookupThreads.stream().allMatch(name -> name.startsWith("test-resolver")),
                    "lookups run on the resolver pool, not an event loop: " + lookupThreads);
            ctx.completeNow();
        })));
    }
}
