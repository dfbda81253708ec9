package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Timer;
import io.nexuscore.classify.Thresholds;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VertxExtension.class)
class MetricsAndHealthTest {

    /** Parses Prometheus text with the reference Python client's parser; prints one JSON object per sample. */
    private static final String PARSE = String.join("\n",
            "import sys, json, math",
            "from prometheus_client.parser import text_string_to_metric_families",
            "for family in text_string_to_metric_families(sys.stdin.read()):",
            "    for s in family.samples:",
            "        v = None if math.isnan(s.value) else s.value",
            "        print(json.dumps({'family': family.name, 'type': family.type, 'name': s.name, 'labels': s.labels, 'value': v}))");

    private ControlFixture fx;

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    private void deploy(Vertx vertx, VertxTestContext ctx, ControlPorts kernel, Runnable then) {
        fx = new ControlFixture(kernel, 16, 16);
        fx.deploy(vertx).onComplete(ctx.succeeding(f -> then.run()));
    }

    @Test
    void metricsAreValidPrometheusTextAndCarryTheControlPlanesNames(Vertx vertx, VertxTestContext ctx) {
        ExternalTool.require("/usr/bin/promtool", "prometheus");
        ExternalTool.require("/usr/bin/python3", "python3");
        ExternalTool.requireFile("/usr/lib/python3/dist-packages/prometheus_client/parser.py", "python3-prometheus-client");
        deploy(vertx, ctx, TestKernel.ports(Thresholds.DEFAULT, true), () -> fx.get("/metrics").send()
                .compose(r -> vertx.executeBlocking(() -> {
                    assertEquals(200, r.statusCode());
                    assertTrue(r.getHeader("Content-Type").startsWith("text/plain; version=0.0.4"));
                    String text = r.bodyAsString();
                    ExternalTool.Result lint = ExternalTool.run(text, "/usr/bin/promtool", "check", "metrics");
                    ExternalTool.Result parsed = ExternalTool.run(text, "/usr/bin/python3", "-c", PARSE);
                    return List.of(lint, parsed, text);
                }))
                .onComplete(ctx.succeeding(results -> ctx.verify(() -> {
                    ExternalTool.Result lint = (ExternalTool.Result) results.get(0);
                    ExternalTool.Result parsed = (ExternalTool.Result) results.get(1);
                    assertEquals(0, lint.exitCode(), "promtool check metrics:\n" + lint.output() + "\n" + results.get(2));
                    assertEquals(0, parsed.exitCode(), parsed.output());
                    List<JsonObject> samples = parsed.output().lines().map(JsonObject::new).toList();
                    assertEquals(60.0, sample(samples, "nexus_threshold", "bound", "nano_max").getDouble("value"));
                    assertEquals(130.0, sample(samples, "nexus_threshold", "bound", "small_max").getDouble("value"));
                    assertEquals(7.0, sample(samples, "nexus_kernel_classified_total", "tier", "nano").getDouble("value"));
                    assertEquals(1000.0, sample(samples, "nexus_bpf_runs_total", "program", "xdp").getDouble("value"));
                    assertEquals(130e-9, sample(samples, "nexus_bpf_run_per_packet_seconds", "program", "xdp").getDouble("value"), 1e-15);
                    assertEquals(1.3e-4, sample(samples, "nexus_bpf_run_seconds_total", "program", "xdp").getDouble("value"), 1e-12);
                    assertEquals(0.0, sample(samples, "nexus_sse_subscribers", null, null).getDouble("value"));
                    assertEquals("counter", sample(samples, "nexus_sse_dropped_total", null, null).getString("type"));
                    ctx.completeNow();
                }))));
    }

    /**
     * What Main does: Vert.x's own HTTP metrics (vertx-micrometer-metrics) share the registry, so one
     * scrape carries both. The combined text must still lint clean.
     */
    @Test
    void vertxMetricsInTheSameRegistryStillLintClean(VertxTestContext ctx) {
        ExternalTool.require("/usr/bin/promtool", "prometheus");
        fx = new ControlFixture(TestKernel.ports(Thresholds.DEFAULT, true), 16, 16);
        Vertx vertx = Vertx.builder()
                .with(new io.vertx.core.VertxOptions().setMetricsOptions(
                        new io.vertx.micrometer.MicrometerMetricsOptions().setEnabled(true)))
                .withMetrics(new io.vertx.micrometer.MicrometerMetricsFactory(fx.registry))
                .build();
        fx.deploy(vertx)
                .compose(f -> fx.get("/thresholds").send())
                .compose(r -> fx.get("/metrics").send())
                .compose(r -> vertx.executeBlocking(() -> List.of(
                        ExternalTool.run(r.bodyAsString(), "/usr/bin/promtool", "check", "metrics"), r.bodyAsString())))
                .onComplete(ar -> vertx.close())
                .onComplete(ctx.succeeding(results -> ctx.verify(() -> {
                    ExternalTool.Result lint = (ExternalTool.Result) results.get(0);
                    String text = (String) results.get(1);
                    assertTrue(text.contains("vertx_http_server_requests_total"), text);
                    assertTrue(text.contains("nexus_threshold"), text);
                    assertEquals(0, lint.exitCode(), "promtool check metrics:\n" + lint.output());
                    ctx.completeNow();
                })));
    }

    private static JsonObject sample(List<JsonObject> samples, String name, String label, String value) {
        return samples.stream()
                .filter(s -> s.getString("name").equals(name))
                .filter(s -> label == null || value.equals(s.getJsonObject("labels").getString(label)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no sample " + name + (label == null ? "" : "{" + label + "=" + value + "}")
                        + " in " + samples));
    }

    @Test
    void tiersShowKernelCountersAndTheDataPlanesLatencyPercentiles(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, TestKernel.ports(Thresholds.DEFAULT, true), () -> {
            // What the data plane registers per tier (its name and tag are the contract).
            Timer nano = Timer.builder("nexus_request_latency").tag("tier", "nano")
                    .publishPercentiles(0.5, 0.95, 0.99).register(fx.registry);
            for (int ms = 1; ms <= 100; ms++) {
                nano.record(Duration.ofMillis(ms));
            }
            fx.get("/tiers").send().onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                assertEquals(200, r.statusCode());
                JsonObject body = r.bodyAsJsonObject();
                assertEquals("kernel", body.getString("mode"));
                JsonArray tiers = body.getJsonArray("tiers");
                assertEquals(List.of("nano", "small", "large"), tiers.stream().map(t -> ((JsonObject) t).getString("tier")).toList());
                JsonObject n = tiers.getJsonObject(0);
                assertEquals(7L, n.getLong("kernel_classified"));
                JsonObject latency = n.getJsonObject("latency");
                assertEquals(100L, latency.getLong("count"));
                double p95 = latency.getDouble("p95_ms");
                assertTrue(p95 >= 90 && p95 <= 100, "p95 of 1..100 ms: " + p95);
                JsonObject large = tiers.getJsonObject(2).getJsonObject("latency");
                assertNull(large.getValue("count"), "no timer for large: nulls");
                assertNull(large.getValue("p95_ms"));
                ctx.completeNow();
            })));
        });
    }

    /** The shape of a pool's snapshot record (the Wasm pools' TierPoolState is one). */
    record PoolSnapshot(io.nexuscore.classify.Tier tier, String engine, int queueDepth, long memoryLimitPages) {
    }

    @Test
    void tiersShowPoolStateFromSnapshotRecords(Vertx vertx, VertxTestContext ctx) {
        TierStateView pools = TierStateView.ofRecords(() -> java.util.Map.of(
                io.nexuscore.classify.Tier.SMALL, new PoolSnapshot(io.nexuscore.classify.Tier.SMALL, "chicory", 3, 4096)));
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test"), 4, 4, ControlFixture.tempDir(), pools);
        fx.deploy(vertx).compose(f -> fx.get("/tiers").send()).onComplete(ctx.succeeding(r -> ctx.verify(() -> {
            JsonArray tiers = r.bodyAsJsonObject().getJsonArray("tiers");
            assertNull(tiers.getJsonObject(0).getValue("pool"));
            assertEquals(new JsonObject().put("tier", "small").put("engine", "chicory").put("queue_depth", 3)
                    .put("memory_limit_pages", 4096), tiers.getJsonObject(1).getJsonObject("pool"));
            assertNull(tiers.getJsonObject(1).getValue("kernel_classified"), "no kernel counters in user space");
            ctx.completeNow();
        })));
    }

    @Test
    void healthzReportsModeAndAttachment(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, ControlPorts.userSpace(Thresholds.DEFAULT, "kernel.mode is user"), () ->
                fx.get("/healthz").send().onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(200, r.statusCode());
                    JsonObject body = r.bodyAsJsonObject();
                    assertEquals("ok", body.getString("status"));
                    assertEquals("user", body.getString("mode"));
                    assertEquals(false, body.getJsonObject("attachment").getBoolean("attached"));
                    assertEquals(Set.of("attached", "reason"), body.getJsonObject("attachment").fieldNames());
                    ctx.completeNow();
                }))));
    }
}
