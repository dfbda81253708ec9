package io.nexuscore.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The cluster and adaptive sections: off by default, and every bad value named in the message. */
class ClusterConfigTest {

    @Test
    void offByDefaultWithNodeScope() {
        RouterConfig config = RouterConfig.load(Optional.empty());
        assertFalse(config.cluster().enabled());
        assertEquals(AdaptiveConfig.Scope.NODE, config.adaptive().scope());
        assertEquals(5701, config.cluster().port());
    }

    @Test
    void membersParseAndTheNodeNameDefaultsToHostAndPort() {
        RouterConfig config = parse("""
                {"cluster": {"enabled": true, "host": "10.0.0.2", "port": 5702, "secretFile": "/etc/nexuscore/fleet.secret",
                             "members": ["10.0.0.1:5701", "[::1]:5703", "router-c:5701"]},
                 "adaptive": {"scope": "fleet"}}
                """);
        ClusterConfig cluster = config.cluster();
        assertTrue(cluster.enabled());
        assertEquals(List.of(new ClusterConfig.Member("10.0.0.1", 5701), new ClusterConfig.Member("::1", 5703),
                new ClusterConfig.Member("router-c", 5701)), cluster.members());
        assertEquals("[::1]:5703", cluster.members().get(1).toString());
        assertEquals("10.0.0.2:5702", cluster.node());
        assertEquals(AdaptiveConfig.Scope.FLEET, config.adaptive().scope());
        assertEquals(Optional.of(java.nio.file.Path.of("/etc/nexuscore/fleet.secret")), cluster.secretFile());
    }

    /** The cluster name is not a credential: no fleet without a secret, off loopback or on it (any local user). */
    @Test
    void aFleetWithoutASecretFileDoesNotStart() {
        for (String host : List.of("10.0.0.2", "127.0.0.1")) {
            ConfigException e = assertThrows(ConfigException.class, () -> parse("{\"cluster\": {\"enabled\": true,"
                    + " \"host\": \"" + host + "\", \"members\": [\"10.0.0.1:5701\"]}}"));
            assertTrue(e.getMessage().startsWith("cluster.enabled needs cluster.secretFile")
                    && e.getMessage().contains(host + ":5701"), e.getMessage());
        }
        assertMessage("cluster.secretFile must not be empty",
                "{\"cluster\": {\"enabled\": true, \"secretFile\": \"\", \"members\": [\"10.0.0.1:5701\"]}}");
    }

    @Test
    void kubernetesDiscoveryNeedsNoMembers() {
        ClusterConfig cluster = parse("""
                {"cluster": {"enabled": true, "secretFile": "/run/secrets/fleet",
                             "kubernetes": {"namespace": "llm", "serviceName": "nexuscore-hz"}}}
                """).cluster();
        assertEquals(Optional.of(new ClusterConfig.Kubernetes("llm", "nexuscore-hz")), cluster.kubernetes());
    }

    /** docker/compose-fleet.yml's router configs stay valid: three members, each router its own name and address. */
    @Test
    void theComposeFleetConfigsLoad() {
        java.util.Set<String> nodes = new java.util.HashSet<>();
        for (int i = 1; i <= 3; i++) {
            ClusterConfig cluster = RouterConfig.load(Optional.of(java.nio.file.Path.of("docker/fleet/router-" + i + ".json")))
                    .cluster();
            assertTrue(cluster.enabled());
            assertEquals(3, cluster.members().size());
            assertTrue(cluster.members().contains(new ClusterConfig.Member(cluster.host(), cluster.port())),
                    "router-" + i + " is among the members");
            assertEquals(Optional.of(java.nio.file.Path.of("/run/nexuscore-fleet/fleet.secret")), cluster.secretFile(),
                    "router-" + i + " reads the secret the compose file's fleet-secret service writes");
            nodes.add(cluster.node());
        }
        assertEquals(3, nodes.size());
    }

    @Test
    void badValuesAreNamed() {
        assertMessage("cluster.port must be in 1..65535, got 0", "{\"cluster\": {\"port\": 0}}");
        assertMessage("cluster.members: \"10.0.0.1\" is not host:port", "{\"cluster\": {\"members\": [\"10.0.0.1\"]}}");
        assertMessage("cluster.members: \"a:b\" has no numeric port", "{\"cluster\": {\"members\": [\"a:b\"]}}");
        assertMessage("cluster.members: port must be in 1..65535, got 70000",
                "{\"cluster\": {\"members\": [\"a:70000\"]}}");
        assertMessage("cluster.members: \"::1:5701\" is not host:port (write IPv6 as [addr]:port)",
                "{\"cluster\": {\"members\": [\"::1:5701\"]}}");
        assertMessage("cluster.enabled needs cluster.members", "{\"cluster\": {\"enabled\": true}}");
        assertMessage("cluster.members and cluster.kubernetes are two discovery methods",
                "{\"cluster\": {\"members\": [\"a:1\"], \"kubernetes\": {\"serviceName\": \"s\"}}}");
        assertMessage("cluster.name must be 1-64 letters", "{\"cluster\": {\"name\": \"no spaces\"}}");
        assertMessage("cluster.memebers is not a known setting", "{\"cluster\": {\"memebers\": []}}");
        assertMessage("adaptive.scope must be one of [node, fleet], got 'world'", "{\"adaptive\": {\"scope\": \"world\"}}");
        assertMessage("adaptive.scope \"fleet\" needs cluster.enabled", "{\"adaptive\": {\"scope\": \"fleet\"}}");
    }

    private static RouterConfig parse(String override) {
        return RouterConfig.fromJson(RouterConfig.embeddedDefaults().mergeIn(new JsonObject(override), true));
    }

    private static void assertMessage(String expectedPrefix, String override) {
        ConfigException e = assertThrows(ConfigException.class, () -> parse(override));
        assertTrue(e.getMessage().startsWith(expectedPrefix), () -> "message was: " + e.getMessage());
    }
}
