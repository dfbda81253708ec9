package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.nexuscore.config.ClusterConfig;
import io.nexuscore.testing.FreePort;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The router's Hazelcast member as {@link Fleet#hazelcastConfig} sets it up, and a stranger that knows
 * the cluster name and the port: a Hazelcast client cannot connect at all (no client endpoint); a
 * Hazelcast member can join, but the Java-serialized object it stores is refused when the router reads
 * it, before its {@code readObject} runs, while the stranger's own JVM (no filter) does run it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FleetHazelcastTest {

    private int port;
    private HazelcastInstance router;

    @BeforeAll
    void startRouterMember() {
        port = FreePort.pick();
        ClusterConfig cluster = new ClusterConfig(true, "nexuscore", "n1", "127.0.0.1", port,
                List.of(new ClusterConfig.Member("127.0.0.1", port)), Optional.empty(), 100,
                Optional.of(Path.of("/unused")));
        Config config = Fleet.hazelcastConfig(cluster);
        config.setInstanceName("router-" + port);
        router = Hazelcast.newHazelcastInstance(config);
    }

    @AfterAll
    void stop() {
        if (router != null) {
            router.shutdown();
        }
    }

    @Test
    void aHazelcastClientThatKnowsTheNameAndPortCannotConnect() {
        ClientConfig client = new ClientConfig();
        client.setClusterName("nexuscore");
        client.getNetworkConfig().addAddress("127.0.0.1:" + port);
        client.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(5_000);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> {
            HazelcastInstance connected = HazelcastClient.newHazelcastClient(client);
            connected.shutdown(); // reached only when the client got in: the assertion then fails
        });
        assertTrue(e.getMessage().contains("Unable to connect"), e.getMessage());
    }

    @Test
    void aJavaSerializedObjectFromAStrangerIsRefusedBeforeItRuns() {
        Config strangerConfig = new Config();
        strangerConfig.setClusterName("nexuscore");
        strangerConfig.setInstanceName("stranger-" + port);
        strangerConfig.setProperty("hazelcast.phone.home.enabled", "false");
        strangerConfig.getNetworkConfig().setPort(FreePort.pick()).setPortAutoIncrement(false);
        strangerConfig.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
        strangerConfig.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
        strangerConfig.getNetworkConfig().getJoin().getTcpIpConfig().setEnabled(true).addMember("127.0.0.1:" + port);
        strangerConfig.setProperty("hazelcast.local.localAddress", "127.0.0.1");
        HazelcastInstance stranger = Hazelcast.newHazelcastInstance(strangerConfig);
        try {
            assertEquals(2, router.getCluster().getMembers().size(), "the stranger joined: only the data is protected");
            stranger.getMap(SharedMapPolicy.MAP).put(SharedMapPolicy.KEY, new FleetGadget(""));
            stranger.getMap(FleetService.MEMBERS_MAP).put("ghost", new FleetGadget(""));
            int before = FleetGadget.RAN.get();

            for (String map : List.of(SharedMapPolicy.MAP, FleetService.MEMBERS_MAP)) {
                Object key = map.equals(SharedMapPolicy.MAP) ? SharedMapPolicy.KEY : "ghost";
                RuntimeException refused = assertThrows(RuntimeException.class, () -> router.getMap(map).get(key));
                assertTrue(SharedMapPolicy.refusedByFilter(refused), "refused by the filter: " + refused);
            }
            assertEquals(before, FleetGadget.RAN.get(), "the gadget's readObject ran in the router");

            // The same bytes read where no filter is: the gadget runs, so the refusal above is the filter's doing.
            stranger.getMap(SharedMapPolicy.MAP).get(SharedMapPolicy.KEY);
            assertEquals(before + 1, FleetGadget.RAN.get());
        } finally {
            stranger.shutdown();
        }
    }
}
