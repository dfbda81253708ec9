package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.bpf.KernelDataPath;
import io.nexuscore.bpf.KernelTestSupport;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.io.IOException;
import java.io.UncheckedIOException;
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
        BpftoolStore store = new BpftoolStore(map);
        assertEquals(Thresholds.DEFAULT, store.read(), "the loader wrote the configured thresholds into the fresh map");
        fx = new ControlFixture(TestKernel.ports(kernel.thresholds(), Thresholds.DEFAULT, false), 16, 16);
        JsonObject expected = new JsonObject().put("source", "external")
                .put("old", new JsonObject().put("nano_max", 60).put("small_max", 130))
                .put("new", new JsonObject().put("nano_max", 25).put("small_max", 90));
        fx.deploy(vertx)
                .compose(f -> SseClient.connect(vertx, fx.port, "/events?types=threshold", Optional.empty()))
                .compose(sse -> vertx.executeBlocking(() -> bpftool("map", "update", "pinned", map.toString(),
                                "key", "0", "0", "0", "0", "value", "25", "0", "0", "0", "90", "0", "0", "0"))
                        .compose(updated -> sse.awaitEvent("threshold", expected)))
                .compose(events -> fx.get("/thresholds").send())
                .compose(got -> {
                    ctx.verify(() -> assertEquals(new JsonObject().put("nano_max", 25).put("small_max", 90), got.bodyAsJsonObject()));
                    return fx.patchThresholds("{\"nano_max\": 30}");
                })
                .compose(patched -> vertx.executeBlocking(store::read))
                .onComplete(ctx.succeeding(inMap -> ctx.verify(() -> {
                    assertEquals(new Thresholds(30, 90), inMap, "PATCH wrote the pinned map");
                    ctx.completeNow();
                })));
    }

    private static String bpftool(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/sbin/bpftool"));
        command.addAll(List.of(args));
        ExternalTool.Result r = ExternalTool.run("", command.toArray(String[]::new));
        if (r.exitCode() != 0) {
            throw new IllegalStateException(String.join(" ", command) + ": " + r.output());
        }
        return r.output();
    }

    /** The pinned map read and written with bpftool, independently of the Java binding: two little-endian u32. */
    static final class BpftoolStore implements ThresholdStore {
        private final Path map;

        BpftoolStore(Path map) {
            this.map = map;
        }

        @Override
        public Thresholds read() {
            try {
                JsonArray bytes = new JsonObject(bpftool("-j", "map", "lookup", "pinned", map.toString(),
                        "key", "0", "0", "0", "0")).getJsonArray("value");
                return new Thresholds(u32(bytes, 0), u32(bytes, 4));
            } catch (Exception e) {
                throw new IllegalStateException("bpftool map lookup " + map + ": " + e.getMessage(), e);
            }
        }

        @Override
        public void write(Thresholds t) {
            try {
                List<String> args = new ArrayList<>(List.of("map", "update", "pinned", map.toString(), "key", "0", "0", "0", "0", "value"));
                for (int v : new int[] {t.nanoMax(), t.smallMax()}) {
                    for (int i = 0; i < 4; i++) {
                        args.add(Integer.toString((v >>> (8 * i)) & 0xff));
                    }
                }
                bpftool(args.toArray(String[]::new));
            } catch (Exception e) {
                throw new UncheckedIOException(new IOException("bpftool map update " + map + ": " + e.getMessage(), e));
            }
        }

        private static int u32(JsonArray bytes, int offset) {
            int v = 0;
            for (int i = 3; i >= 0; i--) {
                v = (v << 8) | Integer.decode(bytes.getString(offset + i));
            }
            return v;
        }
    }
}
