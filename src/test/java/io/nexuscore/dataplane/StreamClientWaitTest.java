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
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.upstream.UpstreamTierBackend;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
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
 * No timing threshold (a loaded machine slows the upstream as much as the client): the request event
 * names the wait the router counted, which must be there, and the sample must be the latency without it.
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
        io.nexuscore.testing.RecordingEventSink events = new io.nexuscore.testing.RecordingEventSink();
        AcceptorVerticle acceptor = new AcceptorVerticle(config.dataPlane(), new DataPlaneHandler(
                DataPlaneDependencies.of(config.dataPlane(), resolver, backends, models, metrics,
                        events, recorder, null)));
        String id = vertx.deployVerticle(acceptor).await();
        try (Socket client = new Socket()) {
            client.setReceiveBufferSize(4096); // before connect: the window stays small
            client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), acceptor.actualPort()));
            byte[] body = "{\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}".getBytes(StandardCharsets.US_ASCII);
            OutputStream out = client.getOutputStream();
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
            assertTrue(received > EVENTS * 64L * 1024, "the whole stream arrived: " + received + " bytes");
            long deadline = System.nanoTime() + 5_000_000_000L;
            while ((samples.isEmpty() || events.events().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, samples.size(), "one sample for the completed stream");
            JsonObject request = events.events().stream().filter(e -> e.type().equals("request")).findFirst()
                    .orElseThrow(() -> new AssertionError("no request event")).data();
            long waitedUs = request.getLong("client_wait_us");
            long wholeUs = request.getLong("latency_us");
            // The client read nothing for STALL_MS with a 4 KB window under megabytes of stream: the
            // router paused the upstream and waited; that wait is counted...
            assertTrue(waitedUs > 0, "the router waited on the stalled client: " + request);
            assertTrue(waitedUs <= wholeUs, request.encode());
            // ...and the sample is the request's latency without it (to the microsecond the event rounds to).
            long sampleUs = samples.get(0) / 1_000;
            assertTrue(Math.abs(sampleUs - (wholeUs - waitedUs)) <= 1,
                    "sample " + sampleUs + " us, latency " + wholeUs + " us, client wait " + waitedUs + " us");
        } finally {
            vertx.undeploy(id).await();
            upstream.close().await();
        }
    }
}
