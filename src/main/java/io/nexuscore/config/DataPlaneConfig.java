package io.nexuscore.config;

import io.nexuscore.http.IoTransport;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The inference listener.
 *
 * @param host                bind address
 * @param port                TCP port; the kernel programs classify packets to this port
 * @param maxBodyBytes        request bodies above this get 413 before they are read in full
 * @param maxHeldBodyBytes    request body bytes held at once over all connections while bodies arrive
 *                            (default 256 MiB or maxBodyBytes if larger; at least maxBodyBytes); the request whose next
 *                            chunk would pass it gets 503 {@code body-budget} and its connection is
 *                            closed, so many clients each sending most of a large body and then
 *                            nothing cannot fill the heap of a process that runs as root
 * @param instances           verticle instances (event loops serving the port); 0 means one per core
 * @param tenantHeader        header naming the tenant of a request
 * @param misrouteBandPercent a misroute counts as banded when the true score lies more than this
 *                            percentage outside the assigned tier's score range (default 20)
 * @param testHooks           accept the {@code simulate_*} request fields (latency and failure
 *                            experiments); off by default, so no client can hold a worker on purpose
 * @param headerTimeoutMs     a keep-alive connection that has not sent its next complete request head
 *                            this long after its previous answer is closed
 * @param bodyTimeoutMs       a request body not received in full this long after its head gets 408
 * @param idleTimeoutMs       a connection with no traffic either way for this long is closed
 * @param tenantKeys          whether a request must name its tenant with a known API key
 *                            ({@code Authorization: Bearer <key>}): {@code optional} (default) falls back
 *                            to {@link #tenantHeader} without one, {@code required} answers 401
 * @param allowedOrigins      browser origins ({@code scheme://host[:port]}, lower case) whose pages may
 *                            send requests; a request with any other {@code Origin} header is 403
 *                            (a web page must not spend this router's models through a visitor's
 *                            browser); {@code "*"} lets every origin through. Default: none
 * @param transport           the socket I/O engine of every listener and upstream connection:
 *                            {@code auto} (default: io_uring where allowed, else epoll), {@code io_uring},
 *                            {@code epoll} or {@code nio}; a named engine the machine refuses stops the start
 * @param requestLimits       per-tier caps on max_tokens and n, and the unknown-field policy ({@link RequestLimits})
 * @param defaultLimits       tenant limits of tenants without their own ({@link DefaultLimitsConfig}; default none)
 * @param assumedOutputTokens the output cap a token limit charges for a request that names none
 *                            (no max_tokens, max_completion_tokens or max_output_tokens); default 256
 */
public record DataPlaneConfig(String host, int port, long maxBodyBytes, long maxHeldBodyBytes, int instances, String tenantHeader,
                              int misrouteBandPercent, boolean testHooks, long headerTimeoutMs, long bodyTimeoutMs,
                              long idleTimeoutMs, TenantKeys tenantKeys, List<String> allowedOrigins,
                              IoTransport transport, RequestLimits requestLimits, DefaultLimitsConfig defaultLimits,
                              long assumedOutputTokens) {

    public DataPlaneConfig {
        if (maxHeldBodyBytes < maxBodyBytes) {
            throw new ConfigException("dataPlane.maxHeldBodyBytes (" + maxHeldBodyBytes
                    + ") must be at least dataPlane.maxBodyBytes (" + maxBodyBytes + "): one whole body must fit");
        }
        allowedOrigins = allowedOrigins.stream().map(o -> o.strip().toLowerCase(Locale.ROOT)).toList();
    }

    public enum TenantKeys { OPTIONAL, REQUIRED }

    static DataPlaneConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "maxBodyBytes", "maxHeldBodyBytes", "instances", "tenantHeader", "misrouteBandPercent",
                "testHooks", "headerTimeoutMs", "bodyTimeoutMs", "idleTimeoutMs", "tenantKeys", "allowedOrigins",
                "transport", "requestLimits", "defaultLimits", "assumedOutputTokens"));
        long maxBodyBytes = json.number("maxBodyBytes", 1L << 20, 1, 1L << 30);
        return new DataPlaneConfig(
                json.string("host", "0.0.0.0"),
                json.integer("port", 8080, 1, 65_535),
                maxBodyBytes,
                json.number("maxHeldBodyBytes", Math.max(256L << 20, maxBodyBytes), 1, 1L << 40),
                json.integer("instances", 0, 0, 256),
                json.string("tenantHeader", "X-NX-Tenant"),
                json.integer("misrouteBandPercent", 20, 0, 1000),
                json.bool("testHooks", false),
                json.number("headerTimeoutMs", 10_000, 1, 3_600_000),
                json.number("bodyTimeoutMs", 30_000, 1, 3_600_000),
                json.number("idleTimeoutMs", 120_000, 1, 3_600_000),
                json.choice(TenantKeys.class, "tenantKeys", "optional"),
                json.strings("allowedOrigins", List.of()),
                json.choice(IoTransport.class, "transport", "auto"),
                RequestLimits.from(json.section("requestLimits")),
                DefaultLimitsConfig.from(json.section("defaultLimits")),
                json.number("assumedOutputTokens", 256, 1, 1_000_000));
    }

    /** Whether a request carrying this {@code Origin} header may be served (none: not a browser's request). */
    public boolean originAllowed(String origin) {
        return origin == null || allowedOrigins.contains("*")
                || allowedOrigins.contains(origin.strip().toLowerCase(Locale.ROOT));
    }

    /** {@link #misrouteBandPercent} as a fraction. */
    public double misrouteBand() {
        return misrouteBandPercent / 100.0;
    }

    public int effectiveInstances() {
        return instances > 0 ? instances : Runtime.getRuntime().availableProcessors();
    }
}
