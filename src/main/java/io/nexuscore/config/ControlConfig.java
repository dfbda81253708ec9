package io.nexuscore.config;

import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/**
 * The operator listener (REST, SSE, metrics).
 *
 * @param host             bind address; off-loopback requires a bearer token
 * @param port             TCP port
 * @param bearerToken      required on mutating endpoints when present
 * @param stateFile        where thresholds are saved so a reboot (which empties bpffs) keeps them
 * @param eventHistory     events kept for Last-Event-ID resume
 * @param subscriberBuffer events buffered per SSE subscriber before it starts losing them
 */
public record ControlConfig(String host, int port, Optional<String> bearerToken, Path stateFile,
                            int eventHistory, int subscriberBuffer) {

    public ControlConfig {
        boolean loopback = host.equals("127.0.0.1") || host.equals("::1") || host.equals("localhost");
        if (!loopback && bearerToken.isEmpty()) {
            throw new ConfigException("control.host is " + host
                    + ": binding the control plane off-loopback requires control.bearerToken");
        }
    }

    static ControlConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "bearerToken", "stateFile", "eventHistory", "subscriberBuffer"));
        return new ControlConfig(
                json.string("host", "127.0.0.1"),
                json.integer("port", 8081, 1, 65_535),
                Optional.ofNullable(json.string("bearerToken", null)).filter(s -> !s.isBlank()),
                Path.of(json.string("stateFile", "/var/lib/nexuscore/state.json")),
                json.integer("eventHistory", 1024, 0, 1_000_000),
                json.integer("subscriberBuffer", 256, 1, 1_000_000));
    }
}
