package io.nexuscore.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Fleet mode (io.nexuscore.fleet): routers that share one versioned policy through Vert.x's
 * Hazelcast cluster manager, embedded in each router. Off by default: a router alone behaves as
 * without it.
 *
 * @param enabled    join a fleet at start
 * @param name       the Hazelcast cluster name: routers with another name never join this fleet
 * @param node       this router's name in the fleet (origin of its changes, the {@code node} metrics tag);
 *                   default host:port
 * @param host       address Hazelcast binds and announces (Vert.x's event bus, unused by the fleet, stays on loopback)
 * @param port       Hazelcast member port
 * @param members    TCP-IP discovery: "host:port" of the other routers (this one may be listed too)
 * @param kubernetes Kubernetes discovery (Hazelcast's built-in plugin) instead of members: a service's endpoints
 * @param syncMs     how often the local policy is compared with the last adopted one (a change made
 *                   here reaches the fleet within this, plus the cluster round trip)
 * @param secretFile the fleet's shared secret (one line; a second line is the previous secret during a
 *                   rotation): every policy document and heartbeat is signed and verified under it.
 *                   Required when enabled: the cluster name is not a credential (docs/fleet-security.md).
 *                   Checked when the router starts: a regular file owned by root, mode 0600 or 0400
 */
public record ClusterConfig(boolean enabled, String name, String node, String host, int port, List<Member> members,
                            Optional<Kubernetes> kubernetes, int syncMs, Optional<Path> secretFile) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");

    /** Off: a router on its own. */
    public static final ClusterConfig OFF = new ClusterConfig(false, "nexuscore", "127.0.0.1:5701", "127.0.0.1", 5701,
            List.of(), Optional.empty(), 100, Optional.empty());

    /** One TCP-IP discovery address. */
    public record Member(String host, int port) {
        public Member {
            if (host.isBlank()) {
                throw new ConfigException("cluster.members: empty host");
            }
            if (port < 1 || port > 65_535) {
                throw new ConfigException("cluster.members: port must be in 1..65535, got " + port);
            }
        }

        /** Parses "host:port" (IPv6 as "[::1]:5701"). */
        public static Member parse(String text) {
            int colon = text.lastIndexOf(':');
            if (colon <= 0 || colon == text.length() - 1) {
                throw new ConfigException("cluster.members: \"" + text + "\" is not host:port");
            }
            String host = text.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            } else if (host.contains(":")) {
                throw new ConfigException("cluster.members: \"" + text + "\" is not host:port (write IPv6 as [addr]:port)");
            }
            int port;
            try {
                port = Integer.parseInt(text.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new ConfigException("cluster.members: \"" + text + "\" has no numeric port");
            }
            return new Member(host, port);
        }

        @Override
        public String toString() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /**
     * Kubernetes discovery: Hazelcast asks the API server for the endpoints of {@code serviceName}.
     *
     * @param namespace   the service's namespace
     * @param serviceName a headless service selecting the router pods
     */
    public record Kubernetes(String namespace, String serviceName) {
        public Kubernetes {
            if (namespace.isBlank() || serviceName.isBlank()) {
                throw new ConfigException("cluster.kubernetes needs namespace and serviceName");
            }
        }
    }

    public ClusterConfig {
        members = List.copyOf(members);
        if (!NAME.matcher(name).matches()) {
            throw new ConfigException("cluster.name must be 1-64 letters, digits, '.', '_', ':' or '-', got \"" + name + "\"");
        }
        if (!NAME.matcher(node).matches()) {
            throw new ConfigException("cluster.node must be 1-64 letters, digits, '.', '_', ':' or '-', got \"" + node + "\"");
        }
        if (host.isBlank()) {
            throw new ConfigException("cluster.host must not be empty");
        }
        if (port < 1 || port > 65_535) {
            throw new ConfigException("cluster.port must be in 1..65535, got " + port);
        }
        if (syncMs < 10 || syncMs > 60_000) {
            throw new ConfigException("cluster.syncMs must be in 10..60000, got " + syncMs);
        }
        if (enabled && members.isEmpty() && kubernetes.isEmpty()) {
            throw new ConfigException("cluster.enabled needs cluster.members (\"host:port\" of the other routers)"
                    + " or cluster.kubernetes");
        }
        if (secretFile.isPresent() && secretFile.get().toString().isBlank()) {
            throw new ConfigException("cluster.secretFile must not be empty");
        }
        if (enabled && secretFile.isEmpty()) {
            // Anyone who reaches the member port (loopback included: any local user) could otherwise
            // write the policy every router applies.
            throw new ConfigException("cluster.enabled needs cluster.secretFile: the fleet's shared secret"
                    + " (e.g. `umask 077; openssl rand -hex 32 > /etc/nexuscore/fleet.secret`, the same file on every"
                    + " router); without it anyone who reaches " + host + ":" + port + " steers the fleet");
        }
        if (!members.isEmpty() && kubernetes.isPresent()) {
            throw new ConfigException("cluster.members and cluster.kubernetes are two discovery methods: set one");
        }
    }

    static ClusterConfig from(Json json) {
        json.allowOnly(Set.of("enabled", "name", "node", "host", "port", "members", "kubernetes", "syncMs", "secretFile"));
        String host = json.string("host", OFF.host());
        int port = json.integer("port", OFF.port(), 1, 65_535);
        List<Member> members = new ArrayList<>();
        for (String member : json.strings("members", List.of())) {
            members.add(Member.parse(member));
        }
        Optional<Kubernetes> kubernetes = Optional.empty();
        if (json.has("kubernetes")) {
            Json k = json.section("kubernetes");
            k.allowOnly(Set.of("namespace", "serviceName"));
            kubernetes = Optional.of(new Kubernetes(k.string("namespace", "default"), k.string("serviceName", "")));
        }
        return new ClusterConfig(
                json.bool("enabled", false),
                json.string("name", OFF.name()),
                json.string("node", host + ":" + port),
                host, port, members, kubernetes,
                json.integer("syncMs", OFF.syncMs(), 10, 60_000),
                json.has("secretFile") ? Optional.of(Path.of(json.string("secretFile", ""))) : Optional.empty());
    }
}
