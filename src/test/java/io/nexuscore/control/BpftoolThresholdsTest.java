package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.classify.Thresholds;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The real kernel map: the classifier object loaded (not attached) with its maps pinned in a fresh
 * directory, the control plane on the kernel's own {@code score_thresholds} store, and the map changed
 * with {@code bpftool map update pinned ...} behind the control plane's back: the change shows in
 * GET /thresholds and as a {@code threshold} event, and PATCH writes the map (read back with bpftool).
 * Outside CI it skips with the reason when it lacks the privileges; with CI=true it fails.
 */
@ExtendWith(VertxExtension.class)
class BpftoolThresholdsTest {

    private KernelDataPath kernel;
    private Path map;
    private ControlFixture fx;

    @BeforeEach
    void loadClassifier() {
        ExternalTool.require("/usr/sbin/bpftool", "bpftool");
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        map = kernel.pinDir().resolve("score_thresholds");
    }

    @AfterEach
    void removePins() {
        if (fx != null) {
            fx.deleteStateDir();
        }
        KernelTestSupport.dispose(kernel);
    }

    @Test
    void aBpftoolUpdateShowsInGetAndAsAnEventAndPatchWritesTheMap(Vertx vertx, VertxTestContext ctx) {
        BpftoolMap store = new BpftoolMap(map);
        assertEquals(Thresholds.DEFAULT, store.read(), "the loader wrote the configured thresholds into the fresh map");
        fx = new ControlFixture(TestKernel.ports(kernel.thresholds(), Thresholds.DEFAULT, false), 16, 16);
        JsonObject expected = new JsonObject().put("source", "external").put("valid", true)
                .put("old", new JsonObject().put("nano_max", 60).put("small_max", 130))
                .put("new", new JsonObject().put("nano_max", 25).put("small_max", 90));
        fx.deploy(vertx)
                .compose(f -> SseClient.connect(vertx, fx.port, "/events?types=threshold", Optional.empty()))
                .compose(sse -> vertx.executeBlocking(() -> bpftool("map", "update", "pinned", map.toString(),
                                "key", "0", "0", "0", "0", "value", "25", "90", "0", "0", "0", "0", "0", "0"))
                        .compose(updated -> sse.awaitEvent("threshold", expected)))
                .compose(events -> fx.get("/thresholds").send())
                .compose(got -> {
                    ctx.verify(() -> assertEquals(new JsonObject().put("nano_max", 25).put("small_max", 90).put("valid", true),
                            got.bodyAsJsonObject()));
                    return fx.patchThresholds("{\"nano_max\": 30}");
                })
                .compose(patched -> vertx.executeBlocking(store::read))
                .onComplete(ctx.succeeding(inMap -> ctx.verify(() -> {
                    assertEquals(new Thresholds(30, 90), inMap, "PATCH wrote the pinned map");
                    ctx.completeNow();
                })));
    }

    /** The seed's tuning command, verbatim: bytes 0 and 1 are nano_max and small_max. */
    @Test
    void theSeedsBpftoolCommandSetsFiftyAndOneThirty(Vertx vertx, VertxTestContext ctx) throws Exception {
        bpftool("map", "update", "pinned", map.toString(), "key", "0", "0", "0", "0",
                "value", "50", "130", "0", "0", "0", "0", "0", "0");
        assertEquals(new Thresholds(50, 130), kernel.thresholds().read());
        fx = new ControlFixture(TestKernel.ports(kernel.thresholds(), Thresholds.DEFAULT, false), 16, 16);
        fx.deploy(vertx).compose(f -> fx.get("/thresholds").send())
                .onComplete(ctx.succeeding(got -> ctx.verify(() -> {
                    assertEquals(200, got.statusCode(), got.bodyAsString());
                    assertEquals(new JsonObject().put("nano_max", 50).put("small_max", 130).put("valid", true),
                            got.bodyAsJsonObject());
                    ctx.completeNow();
                })));
    }

    /**
     * bpftool writes nano_max above small_max: GET /thresholds reports it invalid (200, the field, the
     * clamped values the kernel uses), a threshold event says valid:false, /metrics stays promtool-clean
     * with nexus_thresholds_valid 0, and the XDP program classifies with the clamped order.
     */
    @Test
    void anInvalidExternalWriteIsReportedAndNeverBreaksGetOrMetrics(Vertx vertx, VertxTestContext ctx) {
        ExternalTool.require("/usr/bin/promtool", "prometheus");
        fx = new ControlFixture(TestKernel.ports(kernel.thresholds(), Thresholds.DEFAULT, false), 16, 16);
        JsonObject expected = new JsonObject().put("source", "external").put("valid", false)
                .put("old", new JsonObject().put("nano_max", 60).put("small_max", 130))
                .put("new", new JsonObject().put("nano_max", 200).put("small_max", 130))
                .put("invalid", new JsonObject().put("field", "nano_max")
                        .put("detail", "nano_max (200) must be less than small_max (130)"))
                .put("effective", new JsonObject().put("nano_max", 129).put("small_max", 130));
        fx.deploy(vertx)
                .compose(f -> SseClient.connect(vertx, fx.port, "/events?types=threshold", Optional.empty()))
                .compose(sse -> vertx.executeBlocking(() -> bpftool("map", "update", "pinned", map.toString(),
                                "key", "0", "0", "0", "0", "value", "200", "130", "0", "0", "0", "0", "0", "0"))
                        .compose(updated -> sse.awaitEvent("threshold", expected)))
                .compose(events -> fx.get("/thresholds").send())
                .compose(got -> {
                    ctx.verify(() -> {
                        assertEquals(200, got.statusCode(), got.bodyAsString());
                        JsonObject body = got.bodyAsJsonObject();
                        assertEquals(false, body.getBoolean("valid"));
                        assertEquals("nano_max", body.getJsonObject("invalid").getString("field"));
                        assertEquals(new JsonObject().put("nano_max", 129).put("small_max", 130), body.getJsonObject("effective"));
                        assertEquals(new Thresholds(129, 130), kernel.thresholds().read(), "the Java reader clamps like the kernel");
                    });
                    return fx.get("/metrics").send();
                })
                .compose(metrics -> vertx.executeBlocking(() -> {
                    assertEquals(200, metrics.statusCode(), metrics.bodyAsString());
                    ExternalTool.Result lint = ExternalTool.run(metrics.bodyAsString(), "/usr/bin/promtool", "check", "metrics");
                    return List.of(lint, metrics.bodyAsString());
                }))
                .onComplete(ctx.succeeding(results -> ctx.verify(() -> {
                    ExternalTool.Result lint = (ExternalTool.Result) results.get(0);
                    String text = (String) results.get(1);
                    assertEquals(0, lint.exitCode(), "promtool check metrics:\n" + lint.output());
                    assertTrue(text.contains("nexus_thresholds_valid 0.0"), text);
                    assertTrue(text.contains("nexus_threshold{bound=\"nano_max\"} 200.0"), text);
                    ctx.completeNow();
                })));
    }

    static String bpftool(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/sbin/bpftool"));
        command.addAll(List.of(args));
        ExternalTool.Result r = ExternalTool.run("", command.toArray(String[]::new));
        if (r.exitCode() != 0) {
            throw new IllegalStateException(String.join(" ", command) + ": " + r.output());
        }
        return r.output();
    }

    /** The pinned map read with bpftool, independently of the Java binding: bytes 0 and 1 (the seed's layout). */
    static final class BpftoolMap {
        private final Path map;

        BpftoolMap(Path map) {
            this.map = map;
        }

        Thresholds read() {
            try {
                JsonArray bytes = new JsonObject(bpftool("-j", "map", "lookup", "pinned", map.toString(),
                        "key", "0", "0", "0", "0")).getJsonArray("value");
                return new Thresholds(Integer.decode(bytes.getString(0)), Integer.decode(bytes.getString(1)));
            } catch (Exception e) {
                throw new IllegalStateException("bpftool map lookup " + map + ": " + e.getMessage(), e);
            }
        }
    }
}
