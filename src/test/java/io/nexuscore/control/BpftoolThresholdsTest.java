package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real pinned BPF map, changed with {@code bpftool map update pinned ...} behind the control plane's
 * back: the change shows in GET /thresholds and as a {@code threshold} event, and PATCH writes the map.
 * The map has the layout of {@code struct score_thresholds} (two host-order u32); the store here talks
 * to it through bpftool so this test needs no loader. Needs root and bpffs: outside CI it skips with the
 * reason, with CI=true it fails.
 */
@ExtendWith(VertxExtension.class)
class BpftoolThresholdsTest {

    private Path pinDir;
    private Path map;
    private ControlFixture fx;

    @BeforeEach
    void createPinnedMap() throws Exception {
        ExternalTool.require("/usr/sbin/bpftool", "bpftool");
        pinDir = Path.of("/sys/fs/bpf/nexus-control-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        try {
            Files.createDirectories(pinDir);
        } catch (IOException e) {
            unavailable("cannot create " + pinDir + " (" + e + "): needs root and bpffs mounted on /sys/fs/bpf");
        }
        map = pinDir.resolve("score_thresholds");
        ExternalTool.Result created = ExternalTool.run("", "/usr/sbin/bpftool", "map", "create", map.toString(),
                "type", "array", "key", "4", "value", "8", "entries", "1", "name", "score_thresholds");
        if (created.exitCode() != 0) {
            unavailable("bpftool map create failed: " + created.output());
        }
        new BpftoolStore(map).write(Thresholds.DEFAULT);
    }

    @AfterEach
    void removePins() throws IOException {
        if (fx != null) {
            fx.deleteStateDir();
        }
        if (map != null) {
            Files.deleteIfExists(map);
        }
        if (pinDir != null) {
            Files.deleteIfExists(pinDir);
        }
    }

    private static void unavailable(String reason) {
        if ("true".equals(System.getenv("CI"))) {
            fail(reason);
        }
        assumeTrue(false, reason);
    }

    @Test
    void aBpftoolUpdateShowsInGetAndAsAnEventAndPatchWritesTheMap(Vertx vertx, VertxTestContext ctx) {
        BpftoolStore store = new BpftoolStore(map);
        fx = new ControlFixture(new TestKernel(store, Thresholds.DEFAULT, false), 16, 16);
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

    /** The pinned map read and written with bpftool: two little-endian u32 (this host's order). */
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
