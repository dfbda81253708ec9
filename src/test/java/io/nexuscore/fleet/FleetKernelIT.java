package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.VethNetns;
import io.nexuscore.testing.ExternalProcess;
import io.nexuscore.testing.FreePort;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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

/**
 * A mixed fleet: two routers in user-space mode on the host and one in kernel mode inside a network
 * namespace of its own, reached over a veth pair (its XDP/TC programs on the namespace's end of the
 * pair, its pinned maps in its own bpffs). The fleet's policy reaches the kernel router's pinned maps,
 * and its changes reach the others. Needs eBPF privileges (root); in CI it runs or fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FleetKernelIT {

    private VethNetns veth;
    private Path work;
    private final List<RouterProcess> routers = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        KernelTestSupport.requireKernel();
        veth = VethNetns.create();
        work = Files.createTempDirectory("nexuscore-fleet-kernel-");
        String hostAddress = veth.hostAddress.getHostAddress();
        String peerAddress = veth.peerAddress.getHostAddress();
        int[] hz = {FreePort.pick(), FreePort.pick(), FreePort.pick()};
        JsonArray members = new JsonArray().add(hostAddress + ":" + hz[0]).add(hostAddress + ":" + hz[1])
                .add(peerAddress + ":" + hz[2]);
        Path jar = RouterProcess.builtJar();
        for (int i = 0; i < 2; i++) {
            String node = "u" + (i + 1);
            Path dir = work.resolve(node);
            int data = FreePort.pick();
            int control = FreePort.pick();
            routers.add(new RouterProcess(node, jar, dir, data, control,
                    RouterProcess.smallKernelRouter(dir, "127.0.0.1", data, "127.0.0.1", control)
                    .put("kernel", new JsonObject().put("mode", "user"))
                    .put("cluster", RouterProcess.clusterSection(node, hostAddress, hz[i], members))));
        }
        Path dir = work.resolve("k1");
        int data = FreePort.pick();
        int control = FreePort.pick();
        routers.add(new RouterProcess("k1", List.of("ip", "netns", "exec", veth.namespace), peerAddress, jar, dir, data,
                control, RouterProcess.smallKernelRouter(dir, "0.0.0.0", data, peerAddress, control)
                .put("kernel", new JsonObject().put("mode", "kernel").put("pinDir", "/sys/fs/bpf/" + veth.namespace)
                        .put("interfaces", new JsonArray().add(veth.peerInterface).add("lo")).put("xdpMode", "generic"))
                .put("cluster", RouterProcess.clusterSection("k1", peerAddress, hz[2], members))));
        for (RouterProcess r : routers) {
            r.start();
        }
        for (RouterProcess r : routers) {
            r.await("serving in a fleet of three", 240, () -> r.serving() && members(r) == 3);
        }
    }

    @AfterAll
    void stop() throws Exception {
        try {
            for (RouterProcess r : routers) {
                r.close();
            }
        } finally {
            if (veth != null) {
                veth.close();
            }
            if (work != null) {
                try (Stream<Path> files = Files.walk(work)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    @Test
    @Order(1)
    void theFleetShowsTheKernelRouterAndItsMode() throws Exception {
        RouterProcess u1 = routers.get(0);
        u1.await("k1 listed in kernel mode", 30, () -> {
            JsonObject fleet = u1.tryJson("/fleet");
            return fleet != null && fleet.getJsonArray("members").stream().map(JsonObject.class::cast)
                    .anyMatch(m -> m.getString("node").equals("k1") && m.getString("mode").equals("kernel"));
        });
        assertEquals("kernel", routers.get(2).get("/healthz").json().getString("mode"));
    }

    @Test
    @Order(2)
    void aChangeOnAUserRouterReachesTheKernelRoutersPinnedMaps() throws Exception {
        RouterProcess u1 = routers.get(0);
        RouterProcess k1 = routers.get(2);
        assertEquals(200, u1.send("PATCH", "/thresholds", new JsonObject().put("nano_max", 44)).status());
        // GET /thresholds in kernel mode reads the pinned score_thresholds map.
        k1.await("k1's score_thresholds map says 44", 30, () -> nanoMax(k1) == 44);
        RouterProcess.Response put = routers.get(1).send("PUT", "/tenants/edge",
                new JsonObject().put("prefix", "10.9.0.0/16").put("floor", "large"));
        assertEquals(201, put.status(), put.body());
        k1.await("k1's tenant_policy map has edge", 30, () -> {
            JsonObject t = k1.tryJson("/tenants");
            return t != null && t.encode().contains("\"prefix\":\"10.9.0.0/16\"");
        });
    }

    @Test
    @Order(3)
    void aChangeOnTheKernelRouterReachesTheOthers() throws Exception {
        RouterProcess k1 = routers.get(2);
        RouterProcess.Response patched = k1.send("PATCH", "/thresholds", new JsonObject().put("small_max", 140));
        assertEquals(200, patched.status(), patched.body());
        for (RouterProcess r : routers.subList(0, 2)) {
            r.await(r.node + " has small_max 140 from k1", 30, () -> {
                JsonObject t = r.tryJson("/thresholds");
                return t != null && t.getInteger("small_max") == 140 && t.getInteger("nano_max") == 44;
            });
            assertTrue(r.events("fleet").stream().anyMatch(e -> e.getString("origin").equals("k1")),
                    r.node + " announced k1's change");
        }
    }

    @Test
    @Order(4)
    void aBpftoolWriteOnTheKernelRoutersMapReachesTheFleetAsExternal() throws Exception {
        RouterProcess k1 = routers.get(2);
        // bpftool in k1's own mount namespace (its private bpffs holds the pins) writes the map directly.
        // Under a deadline, its output read while it runs (testing/ExternalProcess): a hung bpftool fails the test.
        ExternalProcess.Result bpftool = ExternalProcess.run(Duration.ofSeconds(30),
                "nsenter", "-t", String.valueOf(k1.pid()), "-m", "-n",
                "bpftool", "map", "update", "pinned", "/sys/fs/bpf/" + veth.namespace + "/score_thresholds",
                "key", "0", "0", "0", "0", "value", "33", "140", "0", "0", "0", "0", "0", "0");
        assertEquals(0, bpftool.exitCode(), "bpftool: " + bpftool.output());
        for (RouterProcess r : routers.subList(0, 2)) {
            r.await(r.node + " has nano_max 33 from k1's bpftool write", 30, () -> nanoMax(r) == 33);
            assertTrue(r.events("fleet").stream().anyMatch(e -> e.getString("origin").equals("k1")
                    && e.getString("cause").equals("external")), r.node + " announced it as external");
        }
    }

    private static int nanoMax(RouterProcess r) {
        JsonObject t = r.tryJson("/thresholds");
        return t == null ? -1 : t.getInteger("nano_max");
    }

    private static int members(RouterProcess r) {
        JsonObject fleet = r.tryJson("/fleet");
        return fleet == null || !fleet.containsKey("cluster_members") ? -1 : fleet.getInteger("cluster_members");
    }



}
