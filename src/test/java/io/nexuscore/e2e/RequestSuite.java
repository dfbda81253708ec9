package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.testing.GrafanaDashboard;
import io.nexuscore.testing.HandScoredRequests;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.TempDirs;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
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

    private static final Encoding CL100K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

    /**
     * One request: a real question from the shared corpus on a task endpoint, whose score and tier
     * were worked out by hand from the documented formula ({@link HandScoredRequests}), never by the
     * scorer under test. {@code tier} is what the router assigns (score against the default
     * thresholds 60/130) and what the guest observes from its own cl100k_base count plus the same
     * keyword bonus; the two counts differ, as they do on real text, and both are clear of every
     * threshold the suites set (HandScoredRequestsTest).
     */
    record Case(HandScoredRequests.Request row) {
        String path() {
            return row.path();
        }

        String body() {
            return row.body();
        }

        Tier tier() {
            return row.tier();
        }

        /** The router's score, hand-worked (the kernel's equals the Java scorer's: the parity tests). */
        int score() {
            return row.score();
        }

        /** The prompt's cl100k_base count by jtokkit: what the guest reports in X-NX-Tokens. */
        int tokens() {
            return CL100K.countTokensOrdinary(row.promptText());
        }

        Curl.Request request() {
            return new Curl.Request(path(), body());
        }

        @Override
        public String toString() {
            return row.name() + " -> " + tier().label();
        }
    }

    // Scores: the router's (hand-worked) / the guest's (cl100k_base count + the same keyword bonus).
    static final Case NANO = new Case(HandScoredRequests.NANO_QUESTION);    // 25 / 26
    static final Case SMALL = new Case(HandScoredRequests.SMALL_QUESTION);  // 66 + 10 (sum) = 76 / 64 + 10 = 74
    static final Case LARGE = new Case(HandScoredRequests.LARGE_QUESTION);  // 158 + 25 (ana) = 183 / 156 + 25 = 181

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
        assertEquals(Integer.toString(c.tokens()), reply.tokens(), c + ": X-NX-Tokens (the guest's count, jtokkit's)");
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
        // Score 76 is now at or below nano_max: the very next request is nano, and the guest, judging
        // its true score 74 against the same thresholds, agrees.
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
