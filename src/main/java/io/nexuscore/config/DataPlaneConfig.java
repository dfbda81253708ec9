package io.nexuscore.config;

import java.util.Set;

/**
 * The inference listener.
 *
 * @param host            bind address
 * @param port            TCP port; the kernel programs classify packets to this port
 * @param maxBodyBytes    request bodies above this get 413 before they are read in full
 * @param instances       verticle instances (event loops serving the port); 0 means one per core
 * @param tenantHeader    header naming the tenant of a request
 * @param testHooks       accept the {@code simulate_*} request fields (latency and failure
 *                        experiments); off by default, so no client can hold a worker on purpose
 * @param headerTimeoutMs a connection that has not sent a complete request head this long after
 *                        accept (or after its previous answer) is closed
 * @param bodyTimeoutMs   a request body not received in full this long after its head gets 408
 * @param idleTimeoutMs   a connection with no traffic either way for this long is closed
 */
public record DataPlaneConfig(String host, int port, long maxBodyBytes, int instances, String tenantHeader,
                              boolean testHooks, long headerTimeoutMs, long bodyTimeoutMs, long idleTimeoutMs) {

    static DataPlaneConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "maxBodyBytes", "instances", "tenantHeader", "testHooks",
                "headerTimeoutMs", "bodyTimeoutMs", "idleTimeoutMs"));
        return new DataPlaneConfig(
                json.string("host", "0.0.0.0"),
                json.integer("port", 8080, 1, 65_535),
                json.number("maxBodyBytes", 1L << 20, 1, 1L << 30),
                json.integer("instances", 0, 0, 256),
                json.string("tenantHeader", "X-NX-Tenant"),
                json.bool("testHooks", false),
                json.number("headerTimeoutMs", 10_000, 1, 3_600_000),
                json.number("bodyTimeoutMs", 30_000, 1, 3_600_000),
                json.number("idleTimeoutMs", 120_000, 1, 3_600_000));
    }

    public int effectiveInstances() {
        return instances > 0 ? instances : Runtime.getRuntime().availableProcessors();
    }
}
