package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.VethNetns;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.NanoCut;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The path of {@code bench/adaptive-demo.sh}, end to end, so it cannot silently stop working again (it
 * did: the demo's test-hook latency is left out of the latency ring, and nothing noticed). The router
 * runs in kernel mode with XDP and TC on a veth pair (never lo), its nano tier forwarding to a local
 * model server that answers in 82 ms (the demo's delay), over the nano target of 50 ms. Short chat prompts go in through
 * the data plane from the peer's network namespace; then the latency samples must have been written
 * to the ring and drained by the kernel timer, and the timer must have lowered nano_max, seen as a
 * {@code recalibration} and a {@code threshold} event (source kernel), in GET /adaptive and in the map,
 * by the cut the rule gives for the P95 the kernel reported (at least 8 with an 82 ms upstream).
 * Only the period is shortened (PATCH /adaptive); the rest are the default settings. No timing is
 * asserted: the test waits, with a deadline, for the events.
 */
class AdaptiveLoopEndToEndTest {

    private static final int UPSTREAM_DELAY_MS = 82;
    private static final int PERIOD_MS = 1000;
    private static final long LOAD_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final List<String> PROMPTS = List.of("Say hi.", "What is 2 + 2?", "Name a color.",
            "Is water wet?", "Spell cat backwards.");

    private Vertx vertx;
    private LocalOpenAiServer upstream;
    private VethNetns veth;
    private Path pinDir;
    private Path stateDir;
    private RouterRuntime router;
    private Curl curl;
    private ControlClient control;

    @BeforeEach
    void start() {
        KernelTestSupport.requireKernel();
        stateDir = RequestSuite.tempDir();
        pinDir = KernelTestSupport.uniquePinDir();
        vertx = Vertx.vertx();
        try {
            upstream = LocalOpenAiServer.start(vertx).await();
            upstream.delayAnswers(UPSTREAM_DELAY_MS);
            veth = VethNetns.create();
            int port = FreePort.pick();
            JsonObject kernel = new JsonObject().put("mode", "kernel").put("pinDir", pinDir.toString())
                    .put("interfaces", List.of(veth.hostInterface)).put("xdpMode", "generic");
            JsonObject json = RequestSuite.config(veth.hostAddress.getHostAddress(), port, kernel, stateDir);
            json.getJsonObject("tiers").getJsonObject("nano").put("queueCapacity", 64)
                    .put("upstream", new JsonObject().put("baseUrl", upstream.baseUrl("nano")).put("model", "slow-nano"));
            router = RouterRuntime.start(RouterConfig.fromJson(json));
            curl = new Curl(List.of("ip", "netns", "exec", veth.namespace), veth.hostAddress.getHostAddress(), port);
            control = ControlClient.forConfig(json);
        } catch (RuntimeException | Error e) {
            stop();
            throw e;
        }
    }

    @AfterEach
    void stop() {
        try {
            if (router != null) {
                router.close();
                router = null;
            }
        } finally {
            try {
                if (veth != null) {
                    veth.close();
                    veth = null;
                }
            } finally {
                if (pinDir != null) {
                    KernelDataPath.removePins(pinDir);
                }
                if (vertx != null) {
                    vertx.close().await();
                    vertx = null;
                }
                RequestSuite.deleteRecursively(stateDir);
            }
        }
    }

    @Test
    void slowNanoRequestsThroughTheDataPlaneMakeTheKernelLowerNanoMax() throws Exception {
        JsonObject settings = control.get("/adaptive").json();
        assertEquals(60, control.get("/thresholds").json().getInteger("nano_max"));
        assertEquals(50, settings.getInteger("nano_target_p95_ms"), "the default target");
        ControlClient.Response patched = control.send("PATCH", "/adaptive", new JsonObject().put("period_ms", PERIOD_MS));
        assertEquals(200, patched.status(), patched.body());
        int minSamples = patched.json().getInteger("min_samples");

        List<Curl.Reply> replies = sendUntilARecalibration();

        assertTrue(replies.size() >= minSamples, replies.size() + " requests");
        for (Curl.Reply reply : replies) {
            assertEquals(200, reply.status(), reply.toString());
            assertEquals("nano", reply.tier(), reply.toString());
            assertEquals("kernel", reply.routeSource(), "the verdict came from XDP: " + reply);
        }
        // Every answered request wrote one sample into the ring (the sample follows the answer).
        ControlClient.awaitCondition("nexus_latency_events_total = " + replies.size(),
                () -> metric("nexus_latency_events_total") == replies.size());
        assertEquals(0.0, metric("nexus_latency_events_dropped_total"));
        assertEquals(replies.size(), upstream.received(), "every request went to the slow upstream");

        JsonObject recalibration = control.awaitEvent("recalibration", e -> e.getInteger("old_nano_max") == 60);
        assertTrue(recalibration.getInteger("samples") >= minSamples, recalibration.encode());
        int p95Us = (int) Math.round(recalibration.getDouble("p95_ms") * 1000);
        assertTrue(p95Us >= 81_920, "every sample waited 82 ms on the upstream (bucket floor 81,920 us): "
                + recalibration.encode());
        int step = settings.getInteger("step");
        int expected = NanoCut.next(60, settings.getInteger("floor"), step, p95Us,
                settings.getInteger("nano_target_p95_ms") * 1000);
        assertTrue(60 - expected >= 8, "a cut of at least 8 (5 * 81,920 / 50,000): " + recalibration.encode());
        assertEquals(expected, recalibration.getInteger("new_nano_max"), "cut in proportion to the miss: "
                + recalibration.encode());
        JsonObject threshold = control.awaitEvent("threshold",
                e -> e.getJsonObject("new").getInteger("nano_max") == expected);
        assertEquals("kernel", threshold.getString("source"), threshold.encode());

        JsonObject status = control.get("/adaptive").json().getJsonObject("status");
        assertTrue(status.getLong("drained") >= minSamples, "the timer drained the ring: " + status.encode());
        assertTrue(status.getLong("recalibrations") >= 1, status.encode());
        int nanoMax = control.get("/thresholds").json().getInteger("nano_max");
        assertTrue(nanoMax <= expected && nanoMax >= settings.getInteger("floor"), "nano_max " + nanoMax);
        assertTrue(metric("nexus_recalibrations_total") >= 1, "nexus_recalibrations_total counts it");
    }

    /**
     * Four clients in the peer namespace, each sending batches of ten short chat prompts over one
     * keep-alive connection, until the kernel has recalibrated once or the deadline passes.
     */
    private List<Curl.Reply> sendUntilARecalibration() throws Exception {
        List<Curl.Reply> replies = new CopyOnWriteArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        long deadline = System.nanoTime() + LOAD_DEADLINE_NANOS;
        ExecutorService clients = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                int client = c;
                running.add(clients.submit(() -> {
                    int i = client;
                    while (!done.get() && System.nanoTime() < deadline) {
                        List<Curl.Request> batch = new ArrayList<>();
                        for (int k = 0; k < 10; k++) {
                            batch.add(chat(PROMPTS.get(i++ % PROMPTS.size())));
                        }
                        replies.addAll(curl.postAll(batch));
                    }
                    return null;
                }));
            }
            while (System.nanoTime() < deadline && recalibrations() == 0) {
                Thread.sleep(100);
            }
            done.set(true);
            for (Future<?> f : running) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            done.set(true);
            clients.shutdownNow();
        }
        assertTrue(recalibrations() >= 1, "no recalibration within " + LOAD_DEADLINE_NANOS / 1_000_000_000
                + " s of slow nano traffic (" + replies.size() + " requests): " + control.get("/adaptive").body());
        return replies;
    }

    private long recalibrations() {
        return control.get("/adaptive").json().getJsonObject("status").getLong("recalibrations");
    }

    private static Curl.Request chat(String prompt) {
        JsonObject body = new JsonObject().put("model", "auto").put("messages",
                new JsonArray().add(new JsonObject().put("role", "user").put("content", prompt)));
        return new Curl.Request("/v1/chat/completions", body.encode());
    }

    private double metric(String name) {
        for (String line : control.get("/metrics").body().split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " is not on /metrics");
    }
}
