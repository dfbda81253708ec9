package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.FreePort;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Three routers as separate processes (the built jar, user-space mode, loopback, distinct ports) in
 * one fleet: a change on any router reaches all three; concurrent changes on two routers end on one
 * version everywhere; a killed router catches up before its data plane listens; a router paused past
 * the fleet's failure detection (SIGSTOP: cut off) keeps its policy and takes the fleet's newer one when back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FleetIT {

    private Path work;
    private final List<RouterProcess> routers = new ArrayList<>();

    /** A fleet failure is rarely in the router that noticed it: on a failure every router's log is shown. */
    @RegisterExtension
    final TestWatcher allLogsOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            for (RouterProcess r : routers) {
                System.out.println("---- " + r.node + " (" + context.getDisplayName() + " failed) ----\n" + r.log(300));
            }
        }
    };

    @BeforeAll
    void startThreeRouters() throws Exception {
        work = Files.createTempDirectory("nexuscore-fleet-");
        Path jar = routerJar();
        int[] hz = {FreePort.pick(), FreePort.pick(), FreePort.pick()};
        JsonArray members = new JsonArray();
        for (int port : hz) {
            members.add("127.0.0.1:" + port);
        }
        for (int i = 0; i < 3; i++) {
            String node = "n" + (i + 1);
            int data = FreePort.pick();
            int control = FreePort.pick();
            Path dir = work.resolve(node);
            JsonObject config = new JsonObject()
                    .put("dataPlane", new JsonObject().put("host", "127.0.0.1").put("port", data).put("instances", 1))
                    .put("control", new JsonObject().put("port", control).put("stateFile", dir.resolve("state.json").toString()))
                    .put("kernel", new JsonObject().put("mode", "user"))
                    .put("metrics", new JsonObject().put("kernelTiming", false).put("tlbFlushes", false))
                    .put("tiers", new JsonObject()
                            .put("nano", new JsonObject().put("instances", 1))
                            .put("small", new JsonObject().put("instances", 1))
                            .put("large", new JsonObject().put("instances", 1)))
                    .put("cluster", new JsonObject().put("enabled", true).put("host", "127.0.0.1").put("port", hz[i])
                            .put("node", node).put("members", members)
                            .put("secretFile", RouterProcess.fleetSecret().toString()));
            routers.add(new RouterProcess(node, jar, dir, data, control, config));
        }
        for (RouterProcess r : routers) {
            r.start();
        }
        for (RouterProcess r : routers) {
            r.await("serving in a fleet of three", 240, () -> r.serving() && clusterMembers(r) == 3);
        }
    }

    @AfterAll
    void stop() throws Exception {
        for (RouterProcess r : routers) {
            r.close();
        }
        if (work != null) {
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    @Order(1)
    void aChangeOnAnyRouterReachesAllThreeWithItsOrigin() throws Exception {
        int value = 40;
        for (RouterProcess origin : routers) {
            value++;
            RouterProcess.Response patched = origin.send("PATCH", "/thresholds", new JsonObject().put("nano_max", value));
            assertEquals(200, patched.status(), patched.body());
            awaitEverywhere("nano_max " + value + " from " + origin.node, nanoMax(value));
        }
        RouterProcess.Response put = routers.get(1).send("PUT", "/tenants/acme",
                new JsonObject().put("prefix", "10.7.0.0/16").put("floor", "small"));
        assertEquals(201, put.status(), put.body());
        awaitEverywhere("tenant acme from n2", r -> {
            JsonObject t = r.tryJson("/tenants");
            return t != null && t.getJsonArray("tenants").encode().contains("\"prefix\":\"10.7.0.0/16\"");
        });

        // Every router announced the last threshold change with the router it came from.
        for (RouterProcess r : routers) {
            List<JsonObject> events = r.events("fleet");
            assertTrue(events.stream().anyMatch(e -> e.getString("origin").equals("n3")
                            && e.getJsonObject("thresholds").getInteger("nano_max") == 43),
                    r.node + " /events: " + events);
        }
        String metrics = routers.get(0).get("/metrics").body();
        assertTrue(metrics.contains("nexus_fleet_policy_version{node=\"n1\"}"), "node label on metrics");
    }

    @Test
    @Order(2)
    void concurrentChangesOnTwoRoutersEndOnOneVersionEverywhere() throws Exception {
        // Different fields: both survive.
        CompletableFuture<RouterProcess.Response> a = CompletableFuture.supplyAsync(() ->
                routers.get(0).send("PATCH", "/thresholds", new JsonObject().put("nano_max", 51)));
        CompletableFuture<RouterProcess.Response> b = CompletableFuture.supplyAsync(() ->
                routers.get(1).send("PATCH", "/thresholds", new JsonObject().put("small_max", 151)));
        assertEquals(200, a.get(30, TimeUnit.SECONDS).status());
        assertEquals(200, b.get(30, TimeUnit.SECONDS).status());
        awaitEverywhere("51/151 merged", r -> {
            JsonObject t = r.tryJson("/thresholds");
            return t != null && t.getInteger("nano_max") == 51 && t.getInteger("small_max") == 151;
        });
        long before = awaitOneVersion(0);

        // The same field: one value wins, the same on all three.
        a = CompletableFuture.supplyAsync(() -> routers.get(0).send("PATCH", "/thresholds", new JsonObject().put("nano_max", 55)));
        b = CompletableFuture.supplyAsync(() -> routers.get(1).send("PATCH", "/thresholds", new JsonObject().put("nano_max", 56)));
        assertEquals(200, a.get(30, TimeUnit.SECONDS).status());
        assertEquals(200, b.get(30, TimeUnit.SECONDS).status());
        long version = awaitOneVersion(before + 2); // two writes: two versions
        JsonObject policy = routers.get(2).get("/fleet").json().getJsonObject("policy");
        int winner = policy.getJsonObject("thresholds").getInteger("nano_max");
        assertTrue(winner == 55 || winner == 56, policy.encode());
        awaitEverywhere("nano_max " + winner + " everywhere at version " + version, nanoMax(winner));
    }

    @Test
    @Order(3)
    void aKilledRouterCatchesUpBeforeItServes() throws Exception {
        RouterProcess n3 = routers.get(2);
        n3.kill();
        RouterProcess n1 = routers.get(0);
        n1.await("n3 gone from the fleet", 60, () -> clusterMembers(n1) == 2);
        assertEquals(200, n1.send("PATCH", "/thresholds", new JsonObject().put("nano_max", 47)).status());
        routers.get(1).await("n2 has 47", 20, () -> nanoMax(47).test(routers.get(1)));

        n3.start();
        n3.await("n3's data plane listening", 240, n3::serving);
        // The data plane listens only after the fleet's policy went over the state file's (which says 55 or 56).
        JsonObject first = n3.get("/thresholds").json();
        assertEquals(47, first.getInteger("nano_max"), "the first answer once serving: " + first);
        assertTrue(n3.events("fleet").stream().anyMatch(e -> e.getString("action").equals("joined")
                && e.getJsonObject("thresholds").getInteger("nano_max") == 47));
        awaitOneVersion(0);
    }

    @Test
    @Order(4)
    void aCutOffRouterKeepsServingAndReconcilesWhenBack() throws Exception {
        RouterProcess n1 = routers.get(0);
        RouterProcess n2 = routers.get(1);
        RouterProcess n3 = routers.get(2);
        n3.signal("STOP");
        try {
            n1.await("n3 evicted", 60, () -> clusterMembers(n1) == 2);
            assertEquals(200, n2.send("PATCH", "/thresholds", new JsonObject().put("nano_max", 49)).status());
            // Not the steady-state second: right after an eviction the shared map's partitions that n3
            // owned are promoted from their backups first (tens of seconds on a loaded CI machine).
            n1.await("n1 has 49", 90, () -> nanoMax(49).test(n1));
        } finally {
            n3.signal("CONT");
        }
        // Back, n3 answers at once with the policy it had (47) or, once merged, the fleet's.
        JsonObject during = n3.get("/thresholds").json();
        assertTrue(during.getInteger("nano_max") == 47 || during.getInteger("nano_max") == 49, during.encode());
        n3.await("n3 reconciled to 49", 120, () -> nanoMax(49).test(n3));
        n3.await("n3 back in a fleet of three", 120, () -> clusterMembers(n3) == 3);
        long version = awaitOneVersion(0);
        assertTrue(n3.events("fleet").stream().anyMatch(e -> e.getLong("version") == version), "n3 announced " + version);
    }

    @Test
    @Order(5)
    void aChangeMadeWhileTwoRoutersAreCutOffReachesTheFleetWhenTheyAreBack() throws Exception {
        RouterProcess n1 = routers.get(0);
        RouterProcess n2 = routers.get(1);
        RouterProcess n3 = routers.get(2);
        n3.signal("STOP");
        try {
            // n2 takes a change and stalls before the fleet has dropped n3 (its write may not have gone
            // out: a partition or backup on n3 holds it), long enough for n1 to drop n2 as well: three
            // one-router fleets.
            assertEquals(200, n2.send("PATCH", "/thresholds", new JsonObject().put("nano_max", 38)).status());
            n2.signal("STOP");
            try {
                n1.await("n2 and n3 evicted", 60, () -> clusterMembers(n1) == 1);
                assertEquals(200, n1.get("/thresholds").status(), "alone, n1 still answers");
            } finally {
                n2.signal("CONT");
            }
        } finally {
            n3.signal("CONT");
        }
        // Not asserted while n3 is still stopped: Hazelcast 5.3.8 may then leave n1 and n2 apart (the
        // connection n2 opened before its pause goes stale, each side's merge check to the other fails
        // until a membership change; docs/fleet.md, "Partitions").
        n1.await("n1 has 38", 120, () -> nanoMax(38).test(n1));
        n3.await("n3 reconciled to 38", 120, () -> nanoMax(38).test(n3));
        n1.await("a fleet of three again", 120, () -> clusterMembers(n1) == 3 && clusterMembers(n2) == 3
                && clusterMembers(n3) == 3);
        awaitOneVersion(0);
    }

    // --- helpers -----------------------------------------------------------------------------------

    private static java.util.function.Predicate<RouterProcess> nanoMax(int value) {
        return r -> {
            JsonObject t = r.tryJson("/thresholds");
            return t != null && t.getInteger("nano_max") == value;
        };
    }

    private void awaitEverywhere(String what, java.util.function.Predicate<RouterProcess> condition) throws Exception {
        for (RouterProcess r : routers) {
            r.await(what, 30, () -> condition.test(r));
        }
    }

    /**
     * Waits until all three hold one policy version, at least {@code atLeast} (GET /fleet, refreshed
     * every second); returns it.
     */
    private long awaitOneVersion(long atLeast) throws Exception {
        long[] seen = new long[1];
        routers.get(0).await("one policy version on all three", 60, () -> {
            List<Long> versions = new ArrayList<>();
            for (RouterProcess r : routers) {
                JsonObject fleet = r.tryJson("/fleet");
                if (fleet == null || fleet.getJsonObject("policy") == null) {
                    return false;
                }
                versions.add(fleet.getJsonObject("policy").getLong("version"));
            }
            seen[0] = versions.get(0);
            return versions.stream().distinct().count() == 1 && seen[0] >= atLeast;
        });
        assertNotNull(seen[0]);
        return seen[0];
    }

    private static int clusterMembers(RouterProcess r) {
        JsonObject fleet = r.tryJson("/fleet");
        return fleet == null || !fleet.containsKey("cluster_members") ? -1 : fleet.getInteger("cluster_members");
    }

    private static Path routerJar() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            return files.filter(p -> p.getFileName().toString().matches("nexuscore-.*\\.jar"))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no target/nexuscore-*.jar: run after `mvn package`"))
                    .toAbsolutePath();
        }
    }
}
