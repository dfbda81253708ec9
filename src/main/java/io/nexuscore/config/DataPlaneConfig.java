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
 * @param misrouteBandPercent a misroute counts as banded when the true score lies more than this
 *                     percentage outside the assigned tier's score range (default 20)
 */
public record DataPlaneConfig(String host, int port, long maxBodyBytes, int instances, String tenantHeader,
                              int misrouteBandPercent) {

    static DataPlaneConfig from(Json json) {
        json.allowOnly(Set.of("host", "port", "maxBodyBytes", "instances", "tenantHeader", "misrouteBandPercent"));
        return new DataPlaneConfig(
                json.string("host", "0.0.0.0"),
                json.integer("port", 8080, 1, 65_535),
                json.number("maxBodyBytes", 1L << 20, 1, 1L << 30),
                json.integer("instances", 0, 0, 256),
                json.string("tenantHeader", "X-NX-Tenant"),
                json.integer("misrouteBandPercent", 20, 0, 1000));
    }

    /** {@link #misrouteBandPercent} as a fraction. */
    public double misrouteBand() {
        return misrouteBandPercent / 100.0;
    }

    public int effectiveInstances() {
        return instances > 0 ? instances : Runtime.getRuntime().availableProcessors();
    }
}
