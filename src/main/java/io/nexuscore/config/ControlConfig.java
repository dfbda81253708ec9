package io.nexuscore.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The operator listener (REST, SSE, metrics).
 *
 * @param host             bind address; off loopback (anything but an IP literal in 127/8 or ::1)
 *                         every route needs the token, and TLS unless {@code plaintextOffLoopback}
 * @param port             TCP port
 * @param auth             {@link Auth#TOKEN} (default): mutating calls need {@code Authorization: Bearer};
 *                         {@link Auth#NONE}: an explicit, logged opt-out, on a loopback address only
 * @param bearerToken      the token when configured; else one is generated at first start into tokenFile
 * @param tokenFile        where a generated token lives (mode 0600, default beside the state file)
 * @param allowedHosts     names besides the loopback names that Host and Origin headers may carry
 * @param stateFile        where thresholds are saved so a reboot (which empties bpffs) keeps them
 * @param eventHistory     events kept for Last-Event-ID resume
 * @param subscriberBuffer events buffered per SSE subscriber before it starts losing them
 * @param maxSubscribers   open {@code GET /events} streams at most; one more is 503 (each costs a
 *                         buffer and a share of every event's fan-out, so any local user could
 *                         otherwise open enough to slow the data plane down); a token holder's
 *                         stream past it closes the oldest one instead of being refused
 * @param maxSubscribersPerClient open {@code GET /events} streams per client address at most; past
 *                         it a token holder's new stream closes that client's oldest
 * @param tls              the listener speaks HTTPS with these PEM files; required off loopback
 * @param plaintextOffLoopback the operator's explicit choice to listen off loopback without TLS
 *                         (behind a TLS-terminating proxy, say): the token then crosses the network in clear
 */
public record ControlConfig(String host, int port, Auth auth, Optional<String> bearerToken, Path tokenFile,
                            List<String> allowedHosts, Path stateFile, int eventHistory, int subscriberBuffer,
                            int maxSubscribers, int maxSubscribersPerClient, Optional<Tls> tls,
                            boolean plaintextOffLoopback) {

    /** The default of {@link #maxSubscribersPerClient}. */
    public static final int DEFAULT_MAX_SUBSCRIBERS_PER_CLIENT = 8;

    /**
     * HTTPS for the control listener.
     *
     * @param certFile PEM certificate chain
     * @param keyFile  PEM private key: root's own, mode 0600, not a symlink (checked at start)
     */
    public record Tls(Path certFile, Path keyFile) {
        public Tls {
            java.util.Objects.requireNonNull(certFile, "control.tls.certFile");
            java.util.Objects.requireNonNull(keyFile, "control.tls.keyFile");
        }

        static Optional<Tls> from(Json json) {
            if (json.keys().isEmpty()) {
                return Optional.empty();
            }
            json.allowOnly(Set.of("certFile", "keyFile"));
            String cert = json.string("certFile", null);
            String key = json.string("keyFile", null);
            if (cert == null || key == null) {
                throw new ConfigException("control.tls needs both certFile and keyFile (PEM)");
            }
            return Optional.of(new Tls(Path.of(cert), Path.of(key)));
        }
    }

    /** Without TLS and per-client settings (loopback listeners in tests and tools). */
    public ControlConfig(String host, int port, Auth auth, Optional<String> bearerToken, Path tokenFile,
                         List<String> allowedHosts, Path stateFile, int eventHistory, int subscriberBuffer,
                         int maxSubscribers) {
        this(host, port, auth, bearerToken, tokenFile, allowedHosts, stateFile, eventHistory, subscriberBuffer,
                maxSubscribers, DEFAULT_MAX_SUBSCRIBERS_PER_CLIENT, Optional.empty(), false);
    }

    /** The default of {@link #maxSubscribers}: dashboards, tails and scrapers, with room to spare. */
    public static final int DEFAULT_MAX_SUBSCRIBERS = 64;

    /** How mutating control calls are authenticated. */
    public enum Auth { TOKEN, NONE }

    /** Names a request from this machine carries in Host and Origin. */
    public static final Set<String> LOOPBACK_NAMES = Set.of("127.0.0.1", "::1", "localhost");

    public ControlConfig {
        allowedHosts = allowedHosts.stream().map(h -> h.toLowerCase(Locale.ROOT)).toList();
        if (!isLoopback(host) && auth == Auth.NONE) {
            throw new ConfigException("control.host is " + host
                    + ": control.auth \"none\" is only allowed on a loopback address");
        }
        if (!isLoopback(host) && tls.isEmpty() && !plaintextOffLoopback) {
            throw new ConfigException("control.host is " + host + ", not a loopback address: set control.tls "
                    + "(certFile, keyFile) so the token does not cross the network in clear, or "
                    + "control.plaintextOffLoopback: true to accept that");
        }
        if (maxSubscribersPerClient < 1) {
            throw new ConfigException("control.maxSubscribersPerClient must be at least 1");
        }
        if (bearerToken.isPresent() && bearerToken.get().length() < 16) {
            throw new ConfigException("control.bearerToken must be at least 16 characters");
        }
    }

    /** Token auth, a token file beside the state file, no extra host names: what tests and tools start from. */
    public static ControlConfig withToken(String host, int port, Optional<String> bearerToken, Path stateFile,
                                          int eventHistory, int subscriberBuffer) {
        return new ControlConfig(host, port, Auth.TOKEN, bearerToken, defaultTokenFile(stateFile), List.of(), stateFile,
                eventHistory, subscriberBuffer, DEFAULT_MAX_SUBSCRIBERS, DEFAULT_MAX_SUBSCRIBERS_PER_CLIENT, Optional.empty(),
                false);
    }

    /** The explicit opt-out (loopback only). */
    public static ControlConfig withoutAuth(String host, int port, Path stateFile, int eventHistory, int subscriberBuffer) {
        return new ControlConfig(host, port, Auth.NONE, Optional.empty(), defaultTokenFile(stateFile), List.of(), stateFile,
                eventHistory, subscriberBuffer, DEFAULT_MAX_SUBSCRIBERS);
    }

    public boolean loopbackOnly() {
        return isLoopback(host);
    }

    /**
     * True for an IP literal in 127.0.0.0/8 or ::1 only. A name is never loopback here, "localhost"
     * included: what it resolves to is up to DNS and /etc/hosts, not to this config ("127.evil.example"
     * once passed a prefix check).
     */
    public static boolean isLoopback(String host) {
        String literal = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        byte[] address = io.netty.util.NetUtil.createByteArrayFromIpAddressString(literal);
        if (address == null) {
            return false;
        }
        try {
            return java.net.InetAddress.getByAddress(address).isLoopbackAddress(); // no lookup: bytes given
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    static Path defaultTokenFile(Path stateFile) {
        Path dir = stateFile.toAbsolutePath().getParent();
        return dir.resolve("control.token");
    }

    static ControlConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "auth", "bearerToken", "tokenFile", "allowedHosts", "stateFile",
                "eventHistory", "subscriberBuffer", "maxSubscribers", "maxSubscribersPerClient", "tls",
                "plaintextOffLoopback"));
        Path stateFile = json.has("stateFile") ? Path.of(json.string("stateFile", null)) : StateDir.resolve().resolve("state.json");
        return new ControlConfig(
                json.string("host", "127.0.0.1"),
                json.integer("port", 8081, 1, 65_535),
                json.choice(Auth.class, "auth", "token"),
                Optional.ofNullable(json.string("bearerToken", null)).filter(s -> !s.isBlank()),
                json.has("tokenFile") ? Path.of(json.string("tokenFile", null)) : defaultTokenFile(stateFile),
                json.strings("allowedHosts", List.of()),
                stateFile,
                json.integer("eventHistory", 1024, 0, 1_000_000),
                json.integer("subscriberBuffer", 256, 1, 1_000_000),
                json.integer("maxSubscribers", DEFAULT_MAX_SUBSCRIBERS, 1, 100_000),
                json.integer("maxSubscribersPerClient", DEFAULT_MAX_SUBSCRIBERS_PER_CLIENT, 1, 100_000),
                Tls.from(json.section("tls")),
                json.bool("plaintextOffLoopback", false));
    }
}
