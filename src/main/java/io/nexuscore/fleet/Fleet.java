package io.nexuscore.fleet;

import com.hazelcast.config.AdvancedNetworkConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.JavaSerializationFilterConfig;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MultiMapConfig;
import com.hazelcast.config.ServerSocketEndpointConfig;
import io.nexuscore.config.ClusterConfig;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.transport.Transport;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.concurrent.TimeUnit;

/**
 * A clustered Vert.x on Vert.x's cluster manager SPI with an embedded Hazelcast member: TCP-IP
 * discovery from {@code cluster.members} (or Kubernetes), failure detection and split-brain healing
 * in seconds rather than Hazelcast's minutes, so a killed router leaves the fleet and a cut-off one
 * merges back quickly.
 *
 * <p>Open-source Hazelcast authenticates no one: whoever reaches the member port can join. So the
 * router uses it as a transport it does not trust (see docs/fleet-security.md): only the member
 * endpoint listens (no client protocol), nothing a peer sends is Java-deserialized beyond Hazelcast's
 * and the JDK's own classes, Vert.x's event bus is bound to loopback and carries nothing, and every
 * value the router takes from the maps is verified under the fleet's secret ({@link FleetKeys}).
 */
public final class Fleet {

    /**
     * Hazelcast's heartbeat; a member silent for {@link #NO_HEARTBEAT_SECONDS} is dropped from the fleet.
     * Not less: a healthy router on a loaded 2-core CI machine once went 6.5 s without a heartbeat
     * reaching the master while another member was being dropped, and the eviction split the fleet in
     * three (FleetIT, 2026-12-05). A drop costs a split-brain merge later; 10 s still finds a dead router
     * in seconds, not Hazelcast's default minute.
     */
    static final int HEARTBEAT_SECONDS = 1;
    static final int NO_HEARTBEAT_SECONDS = 10;
    /** How soon after a partition heals the two sides merge (Hazelcast's default: 300 s, then 120 s). */
    static final int MERGE_DELAY_SECONDS = 5;

    private static final long JOIN_TIMEOUT_SECONDS = 120;
    private static final String LOOPBACK = "127.0.0.1";

    private Fleet() {
    }

    /** Starts Vert.x clustered; blocks until this router has joined (or formed) the fleet. */
    public static Vertx startVertx(ClusterConfig config, VertxOptions options, Transport transport) {
        // Clustered Vert.x always runs an event bus server; its TCP transport is unauthenticated, the
        // router sends nothing over it, so it listens where no peer reaches it.
        options.getEventBusOptions().setHost(LOOPBACK).setClusterPublicHost(LOOPBACK).setPort(0);
        HazelcastClusterManager manager = new HazelcastClusterManager(hazelcastConfig(config));
        try {
            return Vertx.builder().with(options).withTransport(transport).withClusterManager(manager)
                    .buildClustered().await(JOIN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("cluster " + config.name() + ": Hazelcast did not start within "
                    + JOIN_TIMEOUT_SECONDS + " s on " + config.host() + ":" + config.port(), e);
        }
    }

    /** Programmatic, so the router needs no cluster.xml; the maps Vert.x itself needs are declared as its default file does. */
    static Config hazelcastConfig(ClusterConfig c) {
        Config hz = new Config();
        hz.setClusterName(c.name());
        hz.setProperty("hazelcast.logging.type", "jdk");
        hz.setProperty("hazelcast.phone.home.enabled", "false");
        // RouterRuntime.close() leaves the fleet after the data plane stopped: not Hazelcast's own hook.
        hz.setProperty("hazelcast.shutdownhook.enabled", "false");
        hz.setProperty("hazelcast.heartbeat.interval.seconds", String.valueOf(HEARTBEAT_SECONDS));
        hz.setProperty("hazelcast.max.no.heartbeat.seconds", String.valueOf(NO_HEARTBEAT_SECONDS));
        hz.setProperty("hazelcast.merge.first.run.delay.seconds", String.valueOf(MERGE_DELAY_SECONDS));
        hz.setProperty("hazelcast.merge.next.run.delay.seconds", String.valueOf(MERGE_DELAY_SECONDS));
        hz.setProperty("hazelcast.wait.seconds.before.join", "1");
        hz.setProperty("hazelcast.health.monitoring.level", "OFF"); // the router's own metrics cover the JVM
        hz.setProperty("hazelcast.local.localAddress", c.host());
        hz.setProperty("hazelcast.socket.bind.any", "false");

        // The advanced network with a member endpoint only: no client endpoint exists, so a Hazelcast
        // client (which would read and write every map without joining) cannot connect at all.
        AdvancedNetworkConfig network = hz.getAdvancedNetworkConfig().setEnabled(true);
        network.setMemberEndpointConfig(new ServerSocketEndpointConfig().setPort(c.port()).setPortAutoIncrement(false));
        // Peers' values are Java-deserialized only for Hazelcast's and the JDK's classes (the filter's
        // default allowlist, with its blocklist of known gadgets): a class of the router's classpath
        // named in a stranger's stream is refused before it is loaded. The fleet's own values are strings.
        hz.getSerializationConfig().setJavaSerializationFilterConfig(new JavaSerializationFilterConfig()
                .setDefaultsDisabled(false));
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        if (c.kubernetes().isPresent()) {
            join.getKubernetesConfig().setEnabled(true)
                    .setProperty("namespace", c.kubernetes().get().namespace())
                    .setProperty("service-name", c.kubernetes().get().serviceName());
        } else {
            join.getTcpIpConfig().setEnabled(true).setConnectionTimeoutSeconds(2)
                    .setMembers(c.members().stream().map(ClusterConfig.Member::toString).toList());
        }

        hz.addMultiMapConfig(new MultiMapConfig("__vertx.subs").setBackupCount(1)
                .setValueCollectionType(MultiMapConfig.ValueCollectionType.SET));
        hz.addMapConfig(new MapConfig("__vertx.haInfo").setBackupCount(1));
        hz.addMapConfig(new MapConfig("__vertx.nodeInfo").setBackupCount(1));
        // Every router of a three-router fleet holds the policy: two may fail without losing it.
        hz.addMapConfig(new MapConfig(SharedMapPolicy.MAP).setBackupCount(2));
        return hz;
    }
}
