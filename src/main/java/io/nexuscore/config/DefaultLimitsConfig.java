package io.nexuscore.config;

import java.util.Set;

/**
 * {@code dataPlane.defaultLimits}: the limits of a tenant without limits of its own (anonymous
 * requests, tenants named only by the header), each 0 or absent for unlimited. The same four limits
 * as {@code PUT /tenants/{id}/limits} (docs/tenant-limits.md).
 */
public record DefaultLimitsConfig(long requestsPerMinute, long tokensPerMinute, long maxConcurrent, long tokensPerDay) {

    public static final DefaultLimitsConfig NONE = new DefaultLimitsConfig(0, 0, 0, 0);
    private static final long MAX = 1_000_000_000_000L;

    static DefaultLimitsConfig from(Json json) {
        json.allowOnly(Set.of("requestsPerMinute", "tokensPerMinute", "maxConcurrent", "tokensPerDay"));
        return new DefaultLimitsConfig(json.number("requestsPerMinute", 0, 0, MAX), json.number("tokensPerMinute", 0, 0, MAX),
                json.number("maxConcurrent", 0, 0, MAX), json.number("tokensPerDay", 0, 0, MAX));
    }
}
