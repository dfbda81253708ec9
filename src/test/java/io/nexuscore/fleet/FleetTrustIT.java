package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.nexuscore.testing.FreePort;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * Issue 46's attack on a real fleet: three routers (the built jar, loopback, one shared secret) and a
 * fourth party that knows the cluster name and a member's port but not the secret. Its Hazelcast client
 * cannot connect; its Hazelcast member joins and writes a forged policy (new thresholds, its own key
 * hash for tenant acme) and a forged heartbeat: no router applies or shows either, each counts and logs
 * them. Its Java-serialized gadget (a class the routers can load: the test classes are on their class
 * path) is refused by every router without running. Throughout, the three keep serving and keep
 * agreeing: a change made on one router afterwards still reaches the other two.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FleetTrustIT {

    private static final String LEGIT_HASH = "sha256:" + "11".repeat(32);
    private static final String ATTACKER_HASH = "sha256:" + "ee".repeat(32);
    private static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    private Path work;
    private int[] hz;
    private final List<RouterProcess> routers = new ArrayList<>();
    private HazelcastInstance stranger;
    private int nanoMax;

    @RegisterExtension
    final TestWatcher allLogsOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            for (RouterProcess r : routers) {
                System.out.println("---- " + r.node + " (" + context.getDisplayName() + " failed) ----\n" + r.log(200));
            }
        }
    };

    @BeforeAll
    void startThreeRoutersWithATenant() throws Exception {
        work = Files.createTempDirectory("nexuscore-fleet-trust-");
        Path jar = RouterProcess.builtJar();
        hz = new int[] {FreePort.pick(), FreePort.pick(), FreePort.pick()};
        JsonArray members = new JsonArray();
        for (int port : hz) {
            members.add("127.0.0.1:" + port);
        }
        for (int i = 0; i < 3; i++) {
            String node = "n" + (i + 1);
            Path dir = work.resolve(node);
            int data = FreePort.pick();
            JsonObject config = RouterProcess.smallKernelRouter(dir, "127.0.0.1", data, "127.0.0.1", FreePort.pick())
                    .put("kernel", new JsonObject().put("mode", "user"))
                    .put("cluster", RouterProcess.clusterSection(node, "127.0.0.1", hz[i], members));
            routers.add(new RouterProcess(node, jar, dir, data, config.getJsonObject("control").getInteger("port"), config)
                    .withClasspath(List.of(Path.of("target/test-classes"))));
        }
        for (RouterProcess r : routers) {
            r.start();
        }
        for (RouterProcess r : routers) {
            r.await("serving in a fleet of three", 240, () -> r.serving() && clusterMembers(r) == 3);
        }
        RouterProcess n1 = routers.get(0);
        assertEquals(201, n1.send("PUT", "/tenants/acme", new JsonObject().put("prefix", "10.7.0.0/16")
                .put("floor", "small")).status());
        assertEquals(200, n1.send("PUT", "/tenants/acme/keys", new JsonObject().put("keys", new JsonArray()
                .add(LEGIT_HASH))).status());
        nanoMax = n1.get("/thresholds").json().getInteger("nano_max");
        awaitEverywhere("tenant acme with its key", r -> acmeKeys(r).equals(List.of(LEGIT_HASH)));
    }

    @AfterAll
    void stop() throws Exception {
        if (stranger != null) {
            stranger.shutdown();
        }
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
    void aHazelcastClientCannotConnect() {
        ClientConfig client = new ClientConfig();
        client.setClusterName("nexuscore");
        client.getNetworkConfig().addAddress("127.0.0.1:" + hz[0]);
        client.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(5_000);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> HazelcastClient.newHazelcastClient(client).shutdown());
        assertTrue(e.getMessage().contains("Unable to connect"), e.getMessage());
    }

    @Test
    @Order(2)
    void aForgedPolicyAndHeartbeatFromAMemberWithoutTheSecretAreRefusedEverywhere() throws Exception {
        stranger = Hazelcast.newHazelcastInstance(strangerConfig());
        assertEquals(4, stranger.getCluster().getMembers().size(), "the stranger joined: only the data is protected");

        long version = routers.get(0).get("/fleet").json().getJsonObject("policy").getLong("version");
        JsonObject forged = new JsonObject()
                .put("version", version + 1).put("origin", "n1").put("cause", "api")
                .put("at_ms", System.currentTimeMillis()).put("adaptive_step_at_ms", 0)
                .put("thresholds", new JsonObject().put("nano_max", 7).put("small_max", 130))
                .put("tenants", new JsonObject().put("acme", new JsonObject().put("prefix", "10.7.0.0/16").put("floor", "large")))
                .put("keys", new JsonObject().put("acme", new JsonArray().add(ATTACKER_HASH)))
                .putNull("adaptive");
        stranger.getMap(FleetService.MEMBERS_MAP).put("ghost", new JsonObject().put("node", "ghost")
                .put("address", "203.0.113.9:5701").put("mode", "kernel").encode());
        // The first router to read the forged policy writes the fleet's back over it: the stranger keeps
        // writing it until every router has read (and counted) it.
        keepWriting("the forged policy and heartbeat counted by every router",
                () -> stranger.getMap(SharedMapPolicy.MAP).put(SharedMapPolicy.KEY, forged.encode()),
                r -> rejected(r, "unsigned") >= 2);
        for (RouterProcess r : routers) {
            assertEquals(nanoMax, r.get("/thresholds").json().getInteger("nano_max"), r.node + " took forged thresholds");
            assertEquals(List.of(LEGIT_HASH), acmeKeys(r), r.node + " took the stranger's key hash");
            assertFalse(r.get("/fleet").body().contains("ghost"), r.node + " shows the forged heartbeat");
            String log = r.log(400);
            assertTrue(log.contains("refused a value in nexuscore.fleet.policy (unsigned"), r.node + " log:\n" + log);
            assertTrue(log.contains("refused a value in nexuscore.fleet.members (unsigned"), r.node + " log:\n" + log);
        }
    }

    @Test
    @Order(3)
    void aJavaSerializedGadgetIsRefusedWithoutRunning() throws Exception {
        Path marker = work.resolve("gadget-ran");
        stranger.getMap(FleetService.MEMBERS_MAP).put("gadget", new FleetGadget(marker.toString()));
        keepWriting("the gadget refused by every router",
                () -> stranger.getMap(SharedMapPolicy.MAP).put(SharedMapPolicy.KEY, new FleetGadget(marker.toString())),
                r -> rejected(r, "java_serialized") >= 1);
        assertFalse(Files.exists(marker), () -> "a router ran the gadget: " + read(marker));
        for (RouterProcess r : routers) {
            assertTrue(r.log(400).contains("(java_serialized"), r.node + " log:\n" + r.log(100));
        }
    }

    @Test
    @Order(4)
    void theThreeKeepServingAndAgreeing() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
        for (RouterProcess r : routers) {
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + r.dataPort + "/v1/chat/completions"))
                    .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(CHAT)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, answer.statusCode(), r.node + ": " + answer.body());
        }
        int changed = nanoMax == 44 ? 45 : 44;
        assertEquals(200, routers.get(1).send("PATCH", "/thresholds", new JsonObject().put("nano_max", changed)).status());
        awaitEverywhere("nano_max " + changed + " from n2 over the stranger's values",
                r -> { JsonObject t = r.tryJson("/thresholds"); return t != null && t.getInteger("nano_max") == changed; });
        assertEquals(List.of(LEGIT_HASH), acmeKeys(routers.get(2)));
    }

    /** Repeats {@code write} every 200 ms until {@code done} holds on all three routers (60 s at most). */
    private void keepWriting(String what, Runnable write, java.util.function.Predicate<RouterProcess> done)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!routers.stream().allMatch(done)) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within 60 s: " + what);
            }
            write.run();
            Thread.sleep(200);
        }
    }

    private Config strangerConfig() {
        Config config = new Config();
        config.setClusterName("nexuscore");
        config.setInstanceName("stranger-" + hz[0]);
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.logging.type", "jdk");
        config.setProperty("hazelcast.local.localAddress", "127.0.0.1");
        config.getNetworkConfig().setPort(FreePort.pick()).setPortAutoIncrement(false);
        config.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
        config.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
        config.getNetworkConfig().getJoin().getTcpIpConfig().setEnabled(true).addMember("127.0.0.1:" + hz[0]);
        return config;
    }

    /** nexus_fleet_rejected_total{reason=…} on one router's /metrics; -1 while it does not answer. */
    private static double rejected(RouterProcess r, String reason) {
        RouterProcess.Response metrics;
        try {
            metrics = r.get("/metrics");
        } catch (RuntimeException e) {
            return -1;
        }
        Matcher m = Pattern.compile("(?m)^nexus_fleet_rejected_total\\{[^}]*reason=\"" + reason + "\"[^}]*} ([0-9.eE+]+)$")
                .matcher(metrics.body());
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }

    private static List<String> acmeKeys(RouterProcess r) {
        JsonObject tenants = r.tryJson("/tenants");
        if (tenants == null) {
            return List.of();
        }
        for (Object t : tenants.getJsonArray("tenants")) {
            JsonObject tenant = (JsonObject) t;
            if (tenant.getString("id").equals("acme")) {
                List<String> keys = new ArrayList<>();
                tenant.getJsonArray("keys").forEach(k -> keys.add((String) k));
                return keys;
            }
        }
        return List.of();
    }

    private void awaitEverywhere(String what, java.util.function.Predicate<RouterProcess> condition) throws Exception {
        for (RouterProcess r : routers) {
            r.await(what, 60, () -> condition.test(r));
        }
    }

    private static int clusterMembers(RouterProcess r) {
        JsonObject fleet = r.tryJson("/fleet");
        return fleet == null || !fleet.containsKey("cluster_members") ? -1 : fleet.getInteger("cluster_members");
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }
}
