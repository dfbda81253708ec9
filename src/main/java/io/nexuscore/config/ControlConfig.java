package io.nexuscore.config;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The operator listener (REST, SSE, metrics).
 *
 * @param host             bind address; off-loopback requires token auth
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
 *                         otherwise open enough to slow the data plane down)
 */
public record ControlConfig(String host, int port, Auth auth, Optional<String> bearerToken, Path tokenFile,
                            List<String> allowedHosts, Path stateFile, int eventHistory, int subscriberBuffer,
                            int maxSubscribers) {

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
        if (bearerToken.isPresent() && bearerToken.get().length() < 16) {
            throw new ConfigException("control.bearerToken must be at least 16 characters");
        }
    }

    /** Token auth, a token file beside the state file, no extra host names: what tests and tools start from. */
    public static ControlConfig withToken(String host, int port, Optional<String> bearerToken, Path stateFile,
                                          int eventHistory, int subscriberBuffer) {
        return new ControlConfig(host, port, Auth.TOKEN, bearerToken, defaultTokenFile(stateFile), List.of(), stateFile,
                eventHistory, subscriberBuffer, DEFAULT_MAX_SUBSCRIBERS);
    }

    /** The explicit opt-out (loopback only). */
    public static ControlConfig withoutAuth(String host, int port, Path stateFile, int eventHistory, int subscriberBuffer) {
        return new ControlConfig(host, port, Auth.NONE, Optional.empty(), defaultTokenFile(stateFile), List.of(), stateFile,
                eventHistory, subscriberBuffer, DEFAULT_MAX_SUBSCRIBERS);
    }

    public boolean loopbackOnly() {
        return isLoopback(host);
    }

    static boolean isLoopback(String host) {
        return LOOPBACK_NAMES.contains(host.toLowerCase(Locale.ROOT)) || host.startsWith("127.");
    }

    static Path defaultTokenFile(Path stateFile) {
        Path dir = stateFile.toAbsolutePath().getParent();
        return dir.resolve("control.token");
    }

    static ControlConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "auth", "bearerToken", "tokenFile", "allowedHosts", "stateFile",
                "eventHistory", "subscriberBuffer", "maxSubscribers"));
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
                json.integer("maxSubscribers", DEFAULT_MAX_SUBSCRIBERS, 1, 100_000));
    }
}
