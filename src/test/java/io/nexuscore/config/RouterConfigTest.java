package io.nexuscore.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.http.IoTransport;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RouterConfigTest {

    @Test
    void embeddedDefaultsMatchTheDesign() {
        RouterConfig config = RouterConfig.load(Optional.empty());
        assertEquals(8080, config.dataPlane().port());
        assertEquals("127.0.0.1", config.control().host());
        assertEquals(8081, config.control().port());
        assertEquals(Thresholds.DEFAULT, config.scoring().thresholds());
        assertEquals(Path.of("/sys/fs/bpf/nexuscore"), config.kernel().pinDir());
        assertEquals(64L << 20, config.tier(Tier.NANO).memoryLimitBytes());
        assertEquals(256L << 20, config.tier(Tier.SMALL).memoryLimitBytes());
        assertEquals(4L << 30, config.tier(Tier.LARGE).memoryLimitBytes());
        assertEquals(TierConfig.Engine.WASMTIME, config.tier(Tier.LARGE).engine());
        assertEquals(8, config.tier(Tier.NANO).instances());
        assertEquals(IoTransport.AUTO, config.dataPlane().transport());
        assertEquals(20, config.tier(Tier.NANO).eventLoopBudgetMs(), "nano's guest calls run on the event loops");
        assertEquals(0, config.tier(Tier.SMALL).eventLoopBudgetMs());
        assertEquals(0, config.tier(Tier.LARGE).eventLoopBudgetMs());
    }

    /** The event-loop budget's default goes with the engine: a tier moved to wasmtime calls on its workers. */
    @Test
    void theEventLoopBudgetFollowsTheEngine() {
        JsonObject json = RouterConfig.embeddedDefaults().mergeIn(new JsonObject(
                "{\"tiers\": {\"nano\": {\"engine\": \"wasmtime\"}, \"small\": {\"eventLoopBudgetMs\": 20}}}"), true);
        RouterConfig config = RouterConfig.fromJson(json);
        assertEquals(0, config.tier(Tier.NANO).eventLoopBudgetMs());
        assertEquals(20, config.tier(Tier.SMALL).eventLoopBudgetMs());
    }

    @Test
    void fileOverridesMergeDeeply(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("router.json");
        Files.writeString(file, """
                {"dataPlane": {"port": 9090}, "tiers": {"small": {"instances": 2}}}
                """);
        RouterConfig config = RouterConfig.load(Optional.of(file));
        assertEquals(9090, config.dataPlane().port());
        assertEquals(2, config.tier(Tier.SMALL).instances());
        assertEquals(128, config.tier(Tier.SMALL).queueCapacity(), "untouched fields keep their defaults");
    }

    @Test
    void errorsNameTheField() {
        assertMessage("dataPlane.port must be in 1..65535, got 70000", "{\"dataPlane\": {\"port\": 70000}}");
        assertMessage("dataPlane.prot is not a known setting", "{\"dataPlane\": {\"prot\": 1}}");
        assertMessage("tiers.nano.engine must be one of [chicory, wasmtime], got 'v8'",
                "{\"tiers\": {\"nano\": {\"engine\": \"v8\"}}}");
        assertMessage("tiers.small.memoryLimitBytes must be a multiple of 65536", "{\"tiers\": {\"small\": {\"memoryLimitBytes\": 1000000}}}");
        assertMessage("scoring: nano_max (130) must be less than small_max (130)", "{\"scoring\": {\"nanoMax\": 130}}");
        assertMessage("kernel.pinDir must be an absolute path under /sys/fs/bpf", "{\"kernel\": {\"pinDir\": \"/tmp/x\"}}");
        assertMessage("control.host is 0.0.0.0: control.auth \"none\" is only allowed on a loopback address",
                "{\"control\": {\"host\": \"0.0.0.0\", \"auth\": \"none\"}}");
        assertMessage("control.bearerToken must be at least 16 characters", "{\"control\": {\"bearerToken\": \"short\"}}");
        assertMessage("dataPlane.transport must be one of [auto, io_uring, epoll, nio], got 'uring'",
                "{\"dataPlane\": {\"transport\": \"uring\"}}");
        assertMessage("tiers.nano.eventLoopBudgetMs must be in 0..100, got 101",
                "{\"tiers\": {\"nano\": {\"eventLoopBudgetMs\": 101}}}");
        assertMessage("tiers.large.eventLoopBudgetMs = 5 needs the chicory engine",
                "{\"tiers\": {\"large\": {\"eventLoopBudgetMs\": 5}}}");
        assertMessage("tiers.large.upstream.baseUrl must be an http(s) URL with a host",
                "{\"tiers\": {\"large\": {\"upstream\": {\"baseUrl\": \"ftp://x\"}}}}");
    }

    /** No browser origin may use the data plane by default; listed ones (any case) may, "*" lets all through. */
    @Test
    void dataPlaneOriginsAreRefusedUnlessListed() {
        DataPlaneConfig defaults = RouterConfig.load(Optional.empty()).dataPlane();
        assertEquals(List.of(), defaults.allowedOrigins());
        assertTrue(defaults.originAllowed(null), "API clients send no Origin");
        assertFalse(defaults.originAllowed("http://localhost:3000"));
        assertFalse(defaults.originAllowed("null"));
        DataPlaneConfig listed = RouterConfig.fromJson(RouterConfig.embeddedDefaults().mergeIn(new JsonObject(
                "{\"dataPlane\": {\"allowedOrigins\": [\"http://LocalHost:3000\"]}}"), true)).dataPlane();
        assertTrue(listed.originAllowed("http://localhost:3000"));
        assertTrue(listed.originAllowed("HTTP://LOCALHOST:3000"));
        assertFalse(listed.originAllowed("http://localhost:3001"));
        assertFalse(listed.originAllowed("http://localhost:3000.attacker.example"));
        DataPlaneConfig any = RouterConfig.fromJson(RouterConfig.embeddedDefaults().mergeIn(new JsonObject(
                "{\"dataPlane\": {\"allowedOrigins\": [\"*\"]}}"), true)).dataPlane();
        assertTrue(any.originAllowed("https://anything.example"));
    }

    @Test
    void kernelTimingSamplesOnePacketInAPowerOfTwo() {
        MetricsConfig defaults = RouterConfig.fromJson(RouterConfig.embeddedDefaults()).metrics();
        assertEquals(16, defaults.kernelTimingEvery(), "the embedded default: one packet in 16");
        for (String bad : new String[] {"0", "12", "2048", "-4"}) {
            JsonObject json = RouterConfig.embeddedDefaults()
                    .mergeIn(new JsonObject("{\"metrics\": {\"kernelTimingSample\": " + bad + "}}"), true);
            assertTrue(assertThrows(ConfigException.class, () -> RouterConfig.fromJson(json)).getMessage()
                    .contains("metrics.kernelTimingSample"), bad);
        }
        JsonObject every = RouterConfig.embeddedDefaults()
                .mergeIn(new JsonObject("{\"metrics\": {\"kernelTimingSample\": 1}}"), true);
        assertEquals(1, RouterConfig.fromJson(every).metrics().kernelTimingEvery());
        JsonObject off = RouterConfig.embeddedDefaults()
                .mergeIn(new JsonObject("{\"metrics\": {\"kernelTiming\": false}}"), true);
        assertEquals(0, RouterConfig.fromJson(off).metrics().kernelTimingEvery(), "timing off: nothing sampled");
    }

    @Test
    void controlPlaneOffLoopbackIsAllowedWithATokenAndTlsOrAnExplicitPlaintextChoice() {
        JsonObject json = RouterConfig.embeddedDefaults()
                .mergeIn(new JsonObject("{\"control\": {\"host\": \"0.0.0.0\", \"bearerToken\": \"s3cret-s3cret-s3cret\"}}"), true);
        assertTrue(assertThrows(ConfigException.class, () -> RouterConfig.fromJson(json)).getMessage()
                .contains("control.tls"));
        JsonObject tls = json.copy();
        tls.getJsonObject("control").put("tls", new JsonObject().put("certFile", "/etc/nx/c.pem").put("keyFile", "/etc/nx/k.pem"));
        assertEquals(Path.of("/etc/nx/k.pem"), RouterConfig.fromJson(tls).control().tls().orElseThrow().keyFile());
        json.getJsonObject("control").put("plaintextOffLoopback", true);
        assertEquals(Optional.of("s3cret-s3cret-s3cret"), RouterConfig.fromJson(json).control().bearerToken());
        assertEquals(ControlConfig.Auth.TOKEN, RouterConfig.fromJson(json).control().auth());
        JsonObject halfTls = RouterConfig.embeddedDefaults().mergeIn(new JsonObject(
                "{\"control\": {\"tls\": {\"certFile\": \"/etc/nx/c.pem\"}}}"), true);
        assertTrue(assertThrows(ConfigException.class, () -> RouterConfig.fromJson(halfTls)).getMessage().contains("keyFile"));
    }

    @Test
    void requestLimitsHaveSaneDefaultsAndAreValidated() {
        RequestLimits limits = RouterConfig.fromJson(RouterConfig.embeddedDefaults()).dataPlane().requestLimits();
        assertEquals(RequestLimits.UnknownFields.REFUSE, limits.unknownFields());
        assertEquals(1, limits.of(io.nexuscore.classify.Tier.NANO).n());
        assertEquals(1_024, limits.of(io.nexuscore.classify.Tier.NANO).maxTokens());
        JsonObject json = RouterConfig.embeddedDefaults().mergeIn(new JsonObject(
                "{\"dataPlane\": {\"requestLimits\": {\"large\": {\"n\": 0}}}}"), true);
        assertTrue(assertThrows(ConfigException.class, () -> RouterConfig.fromJson(json)).getMessage()
                .contains("dataPlane.requestLimits.large.n"));
        JsonObject typo = RouterConfig.embeddedDefaults().mergeIn(new JsonObject(
                "{\"dataPlane\": {\"requestLimits\": {\"unknownFields\": \"ignore\"}}}"), true);
        assertThrows(ConfigException.class, () -> RouterConfig.fromJson(typo));
    }

    @Test
    void unreadableOrInvalidFilesAreReported(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("absent.json");
        assertTrue(assertThrows(ConfigException.class, () -> RouterConfig.load(Optional.of(missing)))
                .getMessage().startsWith("cannot read config file " + missing));
        Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\"dataPlane\": ");
        assertTrue(assertThrows(ConfigException.class, () -> RouterConfig.load(Optional.of(broken)))
                .getMessage().startsWith("config file " + broken + " is not valid JSON"));
    }

    private static void assertMessage(String expectedPrefix, String override) {
        JsonObject json = RouterConfig.embeddedDefaults().mergeIn(new JsonObject(override), true);
        ConfigException e = assertThrows(ConfigException.class, () -> RouterConfig.fromJson(json));
        assertTrue(e.getMessage().startsWith(expectedPrefix), () -> "message was: " + e.getMessage());
    }
}
