package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.upstream.UpstreamTierBackend;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.junit5.VertxExtension;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A streamed answer that waits on a client reading slowly: the wait is the client's, not the tier's,
 * so the feedback loop's latency sample leaves it out (a client stalling on purpose must not lower
 * nano_max for every tenant). Over real sockets, with a real upstream tier and a stream far larger
 * than the sockets' buffers, so the router has to pause the upstream while the client does not read.
 */
@ExtendWith(VertxExtension.class)
class StreamClientWaitTest {

    private static final int EVENTS = 256;
    private static final long STALL_MS = 3_000;

    /** An SSE upstream: EVENTS events of 64 KiB (16 MiB), its usage, [DONE]; it waits for its own drain. */
    private static HttpServer streamingUpstream(Vertx vertx) {
        String content = "x".repeat(64 * 1024);
        Buffer event = Buffer.buffer("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"}}]}\n\n");
        Buffer end = Buffer.buffer("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n"
                + "data: [DONE]\n\n");
        return vertx.createHttpServer().requestHandler(request -> request.body().onSuccess(body -> {
            HttpServerResponse response = request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
            writeEvents(response, event, end, EVENTS);
        }));
    }

    private static void writeEvents(HttpServerResponse response, Buffer event, Buffer end, int left) {
        for (int n = left; n > 0; n--) {
            response.write(event);
            if (response.writeQueueFull()) {
                int rest = n - 1;
                response.drainHandler(v -> writeEvents(response, event, end, rest));
                return;
            }
        }
        response.end(end);
    }

    @Test
    void aStreamsWaitOnAStallingClientIsNotInTheLatencySample(Vertx vertx) throws Exception {
        HttpServer upstream = streamingUpstream(vertx).listen(0, "127.0.0.1").await();
        RouterConfig config = RouterConfig.fromJson(RouterFixture.config(LocalOpenAiServer.start(vertx).await()));
        UpstreamConfig up = new UpstreamConfig(URI.create("http://127.0.0.1:" + upstream.actualPort() + "/v1"), "up",
                60_000, Optional.empty());
        Map<Tier, TierBackend> backends = new EnumMap<>(Tier.class);
        Map<Tier, String> models = new EnumMap<>(Tier.class);
        for (Tier tier : Tier.values()) {
            backends.put(tier, new UpstreamTierBackend(vertx, new TierConfig(tier, TierConfig.Engine.CHICORY, "unused",
                    "nexus-" + tier.label(), 4, 16, TierConfig.WASM_PAGE, 1000, List.of(), Optional.of(up)),
                    () -> Thresholds.DEFAULT));
            models.put(tier, "nexus-" + tier.label());
        }
        DataPlaneMetrics metrics = new DataPlaneMetrics(new SimpleMeterRegistry());
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS),
                VerdictSource.NONE, ReadCost.MEMORY, metrics);
        List<Long> samples = new CopyOnWriteArrayList<>();
        LatencyRecorder recorder = (tier, misroute, tenant, nanos, trueTokens, estimateQ4) -> samples.add(nanos);
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), new DataPlaneHandler(
                DataPlaneDependencies.of(config.dataPlane(), resolver, backends, models, metrics,
                        EventSink.DISCARD, recorder, null)));
        String id = vertx.deployVerticle(acceptor).await();
        try (Socket client = new Socket()) {
            client.setReceiveBufferSize(4096); // before connect: the window stays small
            client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), acceptor.actualPort()));
            byte[] body = "{\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}".getBytes(StandardCharsets.US_ASCII);
            OutputStream out = client.getOutputStream();
            long sent = System.nanoTime();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            Thread.sleep(STALL_MS); // the client does not read: the router's write queue fills, the upstream pauses
            long received = 0;
            byte[] buffer = new byte[1 << 16];
            InputStream in = client.getInputStream();
            String tail = "";
            client.setSoTimeout(30_000);
            for (int n; !tail.contains("data: [DONE]") && (n = in.read(buffer)) >= 0; ) {
                received += n;
                tail = (tail + new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                tail = tail.substring(Math.max(0, tail.length() - 64));
            }
            long wholeNanos = System.nanoTime() - sent;
            assertTrue(received > EVENTS * 64L * 1024, "the whole stream arrived: " + received + " bytes");
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (samples.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, samples.size(), "one sample for the completed stream");
            assertTrue(wholeNanos >= STALL_MS * 1_000_000, "the client stalled " + STALL_MS + " ms");
            // The upstream produced the stream in a fraction of the stall; the sample must not hold the stall.
            assertTrue(samples.get(0) < STALL_MS * 1_000_000 / 2,
                    "sample " + samples.get(0) / 1_000_000 + " ms, whole request " + wholeNanos / 1_000_000 + " ms");
        } finally {
            vertx.undeploy(id).await();
            upstream.close().await();
        }
    }
}
