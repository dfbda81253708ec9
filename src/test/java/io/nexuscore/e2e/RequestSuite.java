package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.testing.GrafanaDashboard;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.TempDirs;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One list of request cases, run against a whole router ({@link RouterRuntime}: real Wasm guests,
 * the data plane, the control plane) by two suites that differ only in where the verdict comes from:
 * {@link KernelEndToEndTest} (XDP/TC on a veth, curl in a network namespace) and
 * {@link UserSpaceEndToEndTest} (loopback, Java scorer). Both assert the same tiers for the same cases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class RequestSuite {

    static final Scorer SCORER = new Scorer(ScoreWeights.DEFAULT);

    /**
     * One request: a task endpoint and a prompt of {@code words} words. {@code tier} is what both the
     * router assigns (score against the default thresholds 60/130) and the guest observes ("word"
     * repeated is one cl100k token per word, plus the task's keyword bonus).
     */
    record Case(String task, int words, Tier tier) {
        String path() {
            return "/v1/tasks/" + task;
        }

        String body() {
            return new JsonObject().put("prompt", String.join(" ", java.util.Collections.nCopies(words, "word"))).encode();
        }

        /**
         * The Java scorer's score for the request curl sends (the kernel must agree in kernel mode): the
         * whole body fits in the head's segment, so the estimate sees all of it.
         */
        int score() {
            byte[] line = ("POST " + path() + " HTTP/1.1").getBytes(StandardCharsets.ISO_8859_1);
            byte[] body = body().getBytes(StandardCharsets.UTF_8);
            return SCORER.score(line, PromptEstimate.scan(body, 0, body.length, body.length));
        }

        Curl.Request request() {
            return new Curl.Request(path(), body());
        }

        @Override
        public String toString() {
            return task + " x" + words + " -> " + tier.label();
        }
    }

    // Scores: the router's estimate (N words of 4 letters: (537 + 4 * 129) / 1024 per word) / the guest's cl100k count.
    static final Case NANO = new Case("echo", 8, Tier.NANO);            // 8 / 8
    static final Case SMALL = new Case("summarize", 60, Tier.SMALL);    // 62 + 10 (sum) = 72 / 60 + 10 = 70
    static final Case LARGE = new Case("analyze", 150, Tier.LARGE);     // 154 + 25 (ana) = 179 / 150 + 25 = 175

    static Stream<Case> cases() {
        return Stream.of(NANO, SMALL, LARGE);
    }

    /** The data-plane client (curl, where the suite runs it). */
    abstract Curl dataPlane();

    abstract ControlClient control();

    /** "kernel" or "user": who decided each request's tier. */
    abstract String expectedRouteSource();

    /** False once a test closed the router. */
    abstract boolean running();

    /** Tests that change thresholds put the defaults back through the API. */
    @AfterEach
    void restoreThresholds() {
        if (running()) {
            ControlClient.Response r = control().send("PATCH", "/thresholds",
                    new JsonObject().put("nano_max", Thresholds.DEFAULT.nanoMax()).put("small_max", Thresholds.DEFAULT.smallMax()));
            assertEquals(200, r.status(), r.body());
        }
    }

    void assertServedAs(Case c, Tier assigned, Curl.Reply reply) {
        assertServedAs(c, assigned, c.tier(), reply);
    }

    void assertServedAs(Case c, Tier assigned, Tier observed, Curl.Reply reply) {
        assertEquals(200, reply.status(), c + ": status");
        assertEquals(assigned.label(), reply.assignedTier(), c + ": X-NX-Assigned-Tier");
        assertEquals(observed.label(), reply.tier(), c + ": X-NX-Tier (what the guest observed)");
        assertEquals(Integer.toString(c.score()), reply.score(), c + ": X-NX-Score");
        assertEquals(expectedRouteSource(), reply.routeSource(), c + ": X-NX-Route-Source");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    @Order(1)
    void oneRequestPerTierGetsItsTier(Case c) {
        assertServedAs(c, c.tier(), dataPlane().post(c.path(), c.body()));
    }

    @Test
    @Order(2)
    void keepAliveRequestsAlternatingSmallAndLargeEachGetTheirOwnTier() {
        List<Case> sequence = List.of(SMALL, LARGE, SMALL, LARGE, NANO, LARGE, SMALL);
        List<Curl.Reply> replies = dataPlane().postAll(sequence.stream().map(Case::request).toList());
        assertEquals(1, replies.get(0).newConnections(), "the first request opens the connection");
        for (int i = 0; i < sequence.size(); i++) {
            Curl.Reply reply = replies.get(i);
            assertServedAs(sequence.get(i), sequence.get(i).tier(), reply);
            if (i > 0) {
                assertEquals(0, reply.newConnections(), "request " + i + " reuses the connection");
                assertEquals(replies.get(0).localPort(), reply.localPort(), "request " + i + " on the same connection");
            }
        }
    }

    @Test
    @Order(3)
    void patchThresholdsChangesTheNextRequestsTier() {
        assertServedAs(SMALL, Tier.SMALL, dataPlane().post(SMALL.path(), SMALL.body()));
        ControlClient.Response patched = control().send("PATCH", "/thresholds", new JsonObject().put("nano_max", 100));
        assertEquals(200, patched.status(), patched.body());
        assertEquals(new JsonObject().put("nano_max", 100).put("small_max", 130).put("valid", true), patched.json());
        // Score 72 is now at or below nano_max: the very next request is nano, and the guest, judging
        // its true score 70 against the same thresholds, agrees.
        assertServedAs(SMALL, Tier.NANO, Tier.NANO, dataPlane().post(SMALL.path(), SMALL.body()));
    }

    /**
     * Every series docker/grafana-dashboard.json reads is on this router's /metrics, after a request
     * per tier: all of them in kernel mode, all but the kernel-only ones in user space. The misroute
     * counters appear with the first misroute of their kind.
     */
    @Test
    @Order(15)
    void everySeriesTheGrafanaDashboardReadsIsExported() throws Exception {
        dataPlane().postAll(List.of(NANO.request(), SMALL.request(), LARGE.request()));
        boolean kernel = expectedRouteSource().equals("kernel");
        String scrape = control().get("/metrics").body();
        Set<String> names = GrafanaDashboard.seriesNames(GrafanaDashboard.load());
        assertTrue(names.size() >= 15, names.toString());
        for (String name : names) {
            if (GrafanaDashboard.ON_FIRST_MISROUTE.contains(name) || !kernel && GrafanaDashboard.KERNEL_ONLY.contains(name)) {
                continue;
            }
            assertTrue(GrafanaDashboard.exposes(scrape, name), name + " is on /metrics (" + expectedRouteSource() + " mode)");
        }
    }

    // --- shared set-up -------------------------------------------------------------------------------

    /** Router config: small Wasm pools, the control plane on a free loopback port, a throw-away state file. */
    static JsonObject config(String dataHost, int dataPort, JsonObject kernel, Path stateDir) {
        return new JsonObject()
                .put("dataPlane", new JsonObject().put("host", dataHost).put("port", dataPort).put("instances", 1))
                .put("control", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick())
                        .put("stateFile", stateDir.resolve("state.json").toString()))
                .put("kernel", kernel)
                .put("tiers", new JsonObject()
                        .put("nano", new JsonObject().put("instances", 2).put("queueCapacity", 32).put("cpus", List.of()))
                        .put("small", new JsonObject().put("instances", 1).put("queueCapacity", 32).put("cpus", List.of()))
                        .put("large", new JsonObject().put("instances", 1).put("queueCapacity", 32).put("cpus", List.of())
                                .put("memoryLimitBytes", 256L << 20)));
    }

    static Path tempDir() {
        try {
            return Files.createTempDirectory("nexus-e2e");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void deleteRecursively(Path dir) {
        TempDirs.deleteRecursively(dir);
    }

    static void assertContains(String haystack, String needle, String message) {
        assertTrue(haystack.contains(needle), message + ": " + haystack);
    }
}
