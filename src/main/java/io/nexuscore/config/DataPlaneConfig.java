package io.nexuscore.config;

import java.util.Set;

/**
 * The inference listener.
 *
 * @param host         bind address
 * @param port         TCP port; the kernel programs classify packets to this port
 * @param maxBodyBytes request bodies above this get 413 before they are read in full
 * @param instances    verticle instances (event loops serving the port); 0 means one per core
 * @param tenantHeader header naming the tenant of a request
 */
public record DataPlaneConfig(String host, int port, long maxBodyBytes, int instances, String tenantHeader) {

    static DataPlaneConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "maxBodyBytes", "instances", "tenantHeader"));
        return new DataPlaneConfig(
                json.string("host", "0.0.0.0"),
                json.integer("port", 8080, 1, 65_535),
                json.number("maxBodyBytes", 1L << 20, 1, 1L << 30),
                json.integer("instances", 0, 0, 256),
                json.string("tenantHeader", "X-NX-Tenant"));
    }

    public int effectiveInstances() {
        return instances > 0 ? instances : Runtime.getRuntime().availableProcessors();
    }
}
