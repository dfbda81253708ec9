package io.nexuscore.dataplane.apis;

import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.TempDirs;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Routers for the SDK tests: user-space mode on free ports, every tier on Wasm guests or every tier on
 * one local upstream; the state directory removed on {@link #close}.
 */
final class SdkRouters implements AutoCloseable {

    final RouterRuntime router;
    private final Path stateDir;

    private SdkRouters(JsonObject config, Path stateDir) {
        this.stateDir = stateDir;
        this.router = RouterRuntime.start(RouterConfig.fromJson(config));
    }

    /** Every tier a pool of Wasm guests (the embedded default modules). */
    static SdkRouters wasm() {
        return wasm(new JsonObject());
    }

    /** Every tier on Wasm guests, {@code extra} merged into the top-level config. */
    static SdkRouters wasm(JsonObject extra) {
        JsonObject tiers = new JsonObject();
        for (Tier tier : Tier.values()) {
            tiers.put(tier.label(), new JsonObject().put("instances", 1).put("queueCapacity", 16).put("cpus", List.of()));
        }
        Path dir = tempDir();
        return new SdkRouters(base(dir).put("tiers", tiers).mergeIn(extra), dir);
    }

    /** Every tier forwarding to {@code upstream} (model "upstream-TIER"), {@code upstreamExtra} merged into each upstream. */
    static SdkRouters upstream(LocalOpenAiServer upstream, JsonObject upstreamExtra, JsonObject extra) {
        JsonObject tiers = new JsonObject();
        for (Tier tier : Tier.values()) {
            tiers.put(tier.label(), new JsonObject()
                    .put("model", "nexus-" + tier.label())
                    .put("instances", 4)
                    .put("queueCapacity", 16)
                    .put("upstream", new JsonObject()
                            .put("baseUrl", upstream.baseUrl(tier.label()))
                            .put("model", "upstream-" + tier.label())
                            .put("timeoutMs", 10_000)
                            .mergeIn(upstreamExtra)));
        }
        Path dir = tempDir();
        return new SdkRouters(base(dir).put("tiers", tiers).mergeIn(extra), dir);
    }

    private static JsonObject base(Path dir) {
        return new JsonObject()
                .put("dataPlane", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick()).put("instances", 1))
                .put("control", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick())
                        .put("stateFile", dir.resolve("state.json").toString()))
                .put("kernel", new JsonObject().put("mode", "user"));
    }

    /** The OpenAI SDKs' base URL (they add /chat/completions, /responses, ...). */
    String openAiBaseUrl() {
        return "http://127.0.0.1:" + router.dataPlanePort() + "/v1";
    }

    /** The Anthropic SDKs' base URL (they add /v1/messages). */
    String anthropicBaseUrl() {
        return "http://127.0.0.1:" + router.dataPlanePort();
    }

    /** The environment the SDK scripts read. */
    Map<String, String> env() {
        return Map.of("OPENAI_BASE_URL", openAiBaseUrl(), "OPENAI_API_KEY", "sk-test-unused",
                "ANTHROPIC_BASE_URL", anthropicBaseUrl(), "ANTHROPIC_API_KEY", "sk-ant-test-unused");
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("nexus-sdk-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            router.close();
        } finally {
            TempDirs.deleteRecursively(stateDir);
        }
    }
}
