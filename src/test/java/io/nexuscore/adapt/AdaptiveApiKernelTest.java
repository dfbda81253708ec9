package io.nexuscore.adapt;

import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.kernel.maps.AdaptiveSettings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelDataPathControl;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.ControlConfig;
import io.nexuscore.control.ControlPorts;
import io.nexuscore.control.ControlVerticle;
import io.nexuscore.events.EventHub;
import io.nexuscore.control.TierStateView;
import io.nexuscore.tenants.KernelPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The adaptive loop through the whole router stack, in the real kernel: PATCH /adaptive sets a short
 * period, the data plane's latency hook writes slow nano samples, the kernel lowers nano_max, and the
 * change arrives as a {@code recalibration} event, as a {@code threshold} event with source
 * {@code kernel} (not "external"), in {@code nexus_recalibrations_total} and in GET /adaptive.
 */
class AdaptiveApiKernelTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private KernelDataPath kernel;
    private AutoCloseable reporting;
    private Vertx vertx;
    private WebClient client;
    private int port;
    private EventHub hub;
    private PrometheusMeterRegistry registry;
    private Path stateDir;
    private ControlPorts control;

    @BeforeEach
    void start() throws Exception {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        control = new ControlPorts(kernel.thresholds(), kernel.thresholdsFromConfig(),
                new PrefixTenantPolicies(new KernelPrefixFloors(kernel.tenantPolicy())), kernel.adaptive(),
                new KernelDataPathControl(kernel));
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        hub = new EventHub(1000, 1000, registry);
        reporting = AdaptiveReporting.start(kernel, hub, registry);
        stateDir = Files.createTempDirectory("nexus-adaptive-test");
        vertx = Vertx.vertx();
        ControlVerticle verticle = new ControlVerticle(ControlConfig.withoutAuth("127.0.0.1", 0,
                stateDir.resolve("state.json"), 1000, 1000), control, TierStateView.NONE, hub, registry,
                new ControlVerticle.Timings(Duration.ofMillis(50), Duration.ofSeconds(30)));
        vertx.deployVerticle(verticle).await(30, TimeUnit.SECONDS);
        port = verticle.actualPort();
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() throws Exception {
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
        if (reporting != null) {
            reporting.close();
        }
        KernelTestSupport.dispose(kernel);
        if (stateDir != null) {
            try (var files = Files.walk(stateDir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        if (registry != null) {
            registry.close();
        }
    }

    @Test
    void patchThenSlowNanoTrafficLowersNanoMaxAndReportsIt() throws Exception {
        HttpResponse<Buffer> initial = client.get(port, "127.0.0.1", "/adaptive").send().await(10, TimeUnit.SECONDS);
        assertEquals(200, initial.statusCode(), initial.bodyAsString());
        assertEquals(10_000, initial.bodyAsJsonObject().getInteger("period_ms"));
        assertEquals(50, initial.bodyAsJsonObject().getInteger("nano_target_p95_ms"));

        HttpResponse<Buffer> bad = patch(new JsonObject().put("floor", 300));
        assertEquals(422, bad.statusCode());
        assertEquals("floor", bad.bodyAsJsonObject().getString("field"));
        HttpResponse<Buffer> wrongType = patch(new JsonObject().put("enabled", "yes"));
        assertEquals(400, wrongType.statusCode());
        assertEquals("enabled", wrongType.bodyAsJsonObject().getString("field"));

        HttpResponse<Buffer> patched = patch(new JsonObject().put("period_ms", 200).put("step", 10));
        assertEquals(200, patched.statusCode(), patched.bodyAsString());
        assertEquals(200, kernel.adaptive().settings().periodMs(), "written to the pinned settings map");
        assertEquals(10, kernel.adaptive().settings().step());

        EventHub.Subscription events = hub.subscribe(Set.of("recalibration", "threshold"), OptionalLong.empty(), () -> { });
        LatencyRecorder recorder = kernel.latencyRing().recorder();
        // 54 ms: bucket floor 53,248 us; 10 * 53,248 / 50,000 rounds down to one step of the patched 10.
        for (int i = 0; i < 1000; i++) {
            recorder.record(Tier.NANO, null, "tenant-a", 54_000_000L);
        }

        List<EventHub.Event> seen = new ArrayList<>();
        await("a recalibration and a threshold event", () -> {
            for (EventHub.Item item = events.poll(); item != null; item = events.poll()) {
                if (item instanceof EventHub.Event e) {
                    seen.add(e);
                }
            }
            return seen.stream().anyMatch(e -> e.type().equals("recalibration"))
                    && seen.stream().anyMatch(e -> e.type().equals("threshold"));
        });
        JsonObject recalibration = new JsonObject(seen.stream().filter(e -> e.type().equals("recalibration"))
                .findFirst().orElseThrow().json());
        assertEquals(60, recalibration.getInteger("old_nano_max"));
        assertEquals(50, recalibration.getInteger("new_nano_max"));
        assertEquals(1000, recalibration.getInteger("samples"));
        JsonObject threshold = new JsonObject(seen.stream().filter(e -> e.type().equals("threshold"))
                .findFirst().orElseThrow().json());
        assertEquals("kernel", threshold.getString("source"), threshold.encode());
        assertEquals(50, threshold.getJsonObject("new").getInteger("nano_max"));

        assertEquals(1.0, registry.get("nexus.recalibrations").counter().count());
        assertEquals(1000.0, registry.get("nexus.latency.events").functionCounter().count());
        assertTrue(registry.scrape().contains("nexus_latency_events_dropped_total 0.0"), "dropped counter exported");

        JsonObject after = client.get(port, "127.0.0.1", "/adaptive").send().await(10, TimeUnit.SECONDS).bodyAsJsonObject();
        JsonObject status = after.getJsonObject("status");
        assertEquals(1, status.getInteger("recalibrations"));
        assertEquals(50, status.getJsonObject("last_recalibration").getInteger("new_nano_max"));
        assertEquals(1000, status.getJsonObject("last_samples").getInteger("nano"));
    }

    /**
     * The API and the timer write score_thresholds at the same time: the timer lowers nano_max by 1
     * every period while PATCHes of small_max arrive as fast as the API serves them. With a plain
     * read-modify-write either side would sometimes put back a stale value; with the compare-and-set
     * every timer change that counted (adaptive_stats.recalibrations) is still in the map at the end,
     * and so is the last PATCH.
     */
    @Test
    void concurrentPatchesAndTimerWritesLoseNoUpdate() throws Exception {
        kernel.thresholds().write(new io.nexuscore.classify.Thresholds(250, 254));
        HttpResponse<Buffer> fast = patch(new JsonObject().put("period_ms", AdaptiveSettings.MIN_PERIOD_MS)
                .put("step", 1).put("floor", 0).put("min_samples", 1).put("ceiling", 0));
        assertEquals(200, fast.statusCode(), fast.bodyAsString());
        LatencyRecorder recorder = kernel.latencyRing().recorder();
        long before = kernel.adaptive().status().recalibrations();
        int last = 0;
        int patches = 0;
        long deadline = System.nanoTime() + WAIT.toNanos();
        while ((kernel.adaptive().status().recalibrations() - before < 20 || patches < 200) && System.nanoTime() < deadline) {
            // Every period over target: the timer keeps writing, one step (1 * 73,728 / 50,000 rounds down to 1).
            recorder.record(Tier.NANO, null, "tenant-a", 80_000_000L);
            last = 254 + (patches % 2);
            HttpResponse<Buffer> r = client.patch(port, "127.0.0.1", "/thresholds")
                    .putHeader("Content-Type", "application/merge-patch+json")
                    .sendBuffer(new JsonObject().put("small_max", last).toBuffer()).await(10, TimeUnit.SECONDS);
            assertEquals(200, r.statusCode(), r.bodyAsString());
            patches++;
        }
        HttpResponse<Buffer> stop = patch(new JsonObject().put("enabled", false));
        assertEquals(200, stop.statusCode(), stop.bodyAsString());
        long ticks = kernel.adaptive().status().ticks();
        await("two periods after disabling", () -> kernel.adaptive().status().ticks() >= ticks + 2);

        long recalibrations = kernel.adaptive().status().recalibrations() - before;
        assertTrue(recalibrations >= 20, "the timer wrote while the API did: " + recalibrations);
        io.nexuscore.classify.Thresholds end = kernel.thresholds().read();
        assertEquals(250 - recalibrations, end.nanoMax(), "every counted timer write is in the map");
        assertEquals(last, end.smallMax(), "the last PATCH is in the map");
    }

    @Test
    void theRaiseBackCeilingFollowsTheLatestPatchOfNanoMax() throws Exception {
        assertEquals(60, kernel.adaptive().settings().ceiling(), "the configured nano_max");
        HttpResponse<Buffer> r = client.patch(port, "127.0.0.1", "/thresholds")
                .putHeader("Content-Type", "application/merge-patch+json")
                .sendBuffer(new JsonObject().put("nano_max", 45).toBuffer()).await(10, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode(), r.bodyAsString());
        assertEquals(45, kernel.adaptive().settings().ceiling(), "the loop raises back to the operator's latest value");
        JsonObject adaptive = client.get(port, "127.0.0.1", "/adaptive").send().await(10, TimeUnit.SECONDS).bodyAsJsonObject();
        assertEquals(45, adaptive.getInteger("ceiling"));
    }

    @Test
    void calibrationSettingsAreReadPatchedAndValidatedAndTheGainIsReadOnly() throws Exception {
        JsonObject initial = client.get(port, "127.0.0.1", "/adaptive").send().await(10, TimeUnit.SECONDS).bodyAsJsonObject();
        assertEquals(true, initial.getBoolean("calibrate"));
        assertEquals(512, initial.getInteger("gain_min"));
        assertEquals(2048, initial.getInteger("gain_max"));
        assertEquals(64, initial.getInteger("gain_step_max"));
        assertEquals(50, initial.getInteger("calibration_min_samples"));
        JsonObject status = initial.getJsonObject("status");
        assertEquals(1.0, status.getDouble("token_gain"));
        assertEquals(0, status.getInteger("calibrations"));
        assertTrue(status.containsKey("last_calibration") && status.getValue("last_calibration") == null, status.encode());

        // gain_min above the gain_max in force names the field the patch moved; both moved: gain_max.
        HttpResponse<Buffer> crossed = patch(new JsonObject().put("gain_min", 3000));
        assertEquals(422, crossed.statusCode(), crossed.bodyAsString());
        assertEquals("gain_min", crossed.bodyAsJsonObject().getString("field"));
        HttpResponse<Buffer> both = patch(new JsonObject().put("gain_min", 3000).put("gain_max", 2500));
        assertEquals(422, both.statusCode(), both.bodyAsString());
        assertEquals("gain_max", both.bodyAsJsonObject().getString("field"));
        HttpResponse<Buffer> readOnly = patch(new JsonObject().put("token_gain", 2.0));
        assertEquals(400, readOnly.statusCode(), readOnly.bodyAsString());
        assertEquals("token_gain", readOnly.bodyAsJsonObject().getString("field"));
        assertEquals(512, kernel.adaptive().settings().gainMinQ10(), "a rejected patch changes nothing");

        HttpResponse<Buffer> patched = patch(new JsonObject().put("calibrate", false).put("gain_min", 256)
                .put("gain_max", 4096).put("gain_step_max", 128).put("calibration_min_samples", 10));
        assertEquals(200, patched.statusCode(), patched.bodyAsString());
        AdaptiveSettings s = kernel.adaptive().settings();
        assertEquals(false, s.calibrate(), "written to the pinned settings map");
        assertEquals(256, s.gainMinQ10());
        assertEquals(4096, s.gainMaxQ10());
        assertEquals(128, s.gainStepMaxQ10());
        assertEquals(10, s.calibrationMinSamples());
        assertEquals(50, s.nanoTargetP95Us() / 1000, "the latency loop's settings are untouched");
        assertEquals(false, patched.bodyAsJsonObject().getBoolean("calibrate"));
    }

    @Test
    void aCalibrationShowsInGetAdaptiveAndAsAnEvent() throws Exception {
        assertEquals(200, patch(new JsonObject().put("period_ms", 200).put("calibration_min_samples", 10)).statusCode());
        EventHub.Subscription events = hub.subscribe(Set.of("calibration"), OptionalLong.empty(), () -> { });
        LatencyRecorder recorder = kernel.latencyRing().recorder();
        for (int i = 0; i < 20; i++) {
            recorder.record(Tier.SMALL, null, "tenant-a", 5_000_000L, 150, 100 * 16); // the guests count 1.5x the estimate
        }
        List<EventHub.Event> seen = new ArrayList<>();
        await("a calibration event", () -> {
            for (EventHub.Item item = events.poll(); item != null; item = events.poll()) {
                if (item instanceof EventHub.Event e) {
                    seen.add(e);
                }
            }
            return !seen.isEmpty();
        });
        JsonObject event = new JsonObject(seen.get(0).json());
        assertEquals(1.0, event.getDouble("old_gain"));
        assertEquals(1.0625, event.getDouble("new_gain"));
        assertEquals(20, event.getInteger("samples"));
        JsonObject status = client.get(port, "127.0.0.1", "/adaptive").send().await(10, TimeUnit.SECONDS)
                .bodyAsJsonObject().getJsonObject("status");
        assertEquals(1.0625, status.getDouble("token_gain"));
        assertEquals(1, status.getInteger("calibrations"));
        assertEquals(1.0625, status.getJsonObject("last_calibration").getDouble("new_gain"));
        assertEquals(3000, status.getJsonObject("last_calibration").getInteger("true_tokens"));
    }

    @Test
    void nonFiniteFractionalAndHugeSettingsAre400NamingTheField() throws Exception {
        for (String body : List.of("{\"step\": 1e400}", "{\"step\": 1.5}", "{\"period_ms\": 1e30}",
                "{\"gain_step_max\": 64.5}", "{\"gain_max\": 1e400}",
                "{\"floor\": -1e400}", "{\"raise_after\": 123456789012345678901234567890}")) {
            HttpResponse<Buffer> r = client.patch(port, "127.0.0.1", "/adaptive")
                    .putHeader("Content-Type", "application/merge-patch+json")
                    .sendBuffer(Buffer.buffer(body)).await(10, TimeUnit.SECONDS);
            String field = new JsonObject(body).fieldNames().iterator().next();
            assertEquals(400, r.statusCode(), body + " -> " + r.bodyAsString());
            assertEquals(field, r.bodyAsJsonObject().getString("field"), body);
        }
    }

    /**
     * adaptive_settings is pinned: a tool writing a period of 0 into it made every read of the
     * settings throw, so GET /adaptive, PATCH /adaptive and even PATCH /thresholds (which moves the
     * raise-back ceiling) answered 500. Now the view says invalid (showing the defaults), thresholds
     * still patch, and a PATCH of /adaptive writes valid settings again.
     */
    @Test
    void settingsAnotherToolWroteInvalidAreReportedAndRepairedByAPatch() throws Exception {
        byte[] foreign = io.nexuscore.kernel.maps.SharedStructs.adaptiveSettings(AdaptiveSettings.DEFAULT.withPeriodMs(30_000));
        java.nio.ByteBuffer.wrap(foreign).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putInt(io.nexuscore.kernel.maps.SharedStructs.ADAPTIVE_SETTINGS.offset("period_ms"), 0);
        StringBuilder hex = new StringBuilder();
        for (byte b : foreign) {
            hex.append(String.format("%02x ", b & 0xff));
        }
        List<String> command = new ArrayList<>(List.of("bpftool", "map", "update", "pinned",
                kernel.pinDir().resolve("adaptive_settings").toString(), "key", "hex", "00", "00", "00", "00", "value", "hex"));
        command.addAll(List.of(hex.toString().trim().split(" ")));
        io.nexuscore.testing.ExternalProcess.Result bpftool =
                io.nexuscore.testing.ExternalProcess.run(java.time.Duration.ofSeconds(30), command);
        assertEquals(0, bpftool.exitCode(), bpftool.output());

        JsonObject view = client.get(port, "127.0.0.1", "/adaptive").send().await(10, TimeUnit.SECONDS).bodyAsJsonObject();
        assertEquals(false, view.getBoolean("valid"), view.encode());
        assertTrue(view.getString("problem").contains("period_ms"), view.encode());
        assertEquals(AdaptiveSettings.DEFAULT.periodMs(), view.getInteger("period_ms"), "the defaults are shown");
        assertTrue(metrics().contains("nexus_adaptive_settings_valid 0.0"), "the gauge says so");
        HttpResponse<Buffer> thresholds = client.patch(port, "127.0.0.1", "/thresholds")
                .putHeader("Content-Type", "application/merge-patch+json")
                .sendBuffer(new JsonObject().put("nano_max", 50).toBuffer()).await(10, TimeUnit.SECONDS);
        assertEquals(200, thresholds.statusCode(), thresholds.bodyAsString());

        HttpResponse<Buffer> repaired = patch(new JsonObject().put("period_ms", 20_000));
        assertEquals(200, repaired.statusCode(), repaired.bodyAsString());
        assertEquals(true, repaired.bodyAsJsonObject().getBoolean("valid"), repaired.bodyAsString());
        assertEquals(20_000, kernel.adaptive().settings().periodMs(), "valid settings are in the map again");
        assertTrue(!repaired.bodyAsJsonObject().containsKey("problem"));
        assertTrue(metrics().contains("nexus_adaptive_settings_valid 1.0"));
    }

    private String metrics() throws Exception {
        return client.get(port, "127.0.0.1", "/metrics").send().await(10, TimeUnit.SECONDS).bodyAsString();
    }

    private HttpResponse<Buffer> patch(JsonObject body) throws Exception {
        return client.patch(port, "127.0.0.1", "/adaptive")
                .putHeader("Content-Type", "application/merge-patch+json")
                .sendBuffer(body.toBuffer()).await(10, TimeUnit.SECONDS);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + WAIT + " waiting for " + what);
            }
            Thread.sleep(20);
        }
    }
}
