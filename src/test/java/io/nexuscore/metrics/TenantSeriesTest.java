package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.kernel.maps.LatencyRing;
import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Per-tenant series move with each tenant's requests, and never grow past the configured bound. */
class TenantSeriesTest {

    private static final Misroute BANDED = new Misroute(true, true, false);

    @Test
    void eachTenantsLatencyAndMisroutesMoveUpToTheBoundThenOther() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TenantSeries series = new TenantSeries(registry, 2)) {
            series.record(Tier.NANO, Misroute.NONE, "acme", 1_000_000);
            series.record(Tier.NANO, BANDED, "acme", 2_000_000);
            series.record(Tier.LARGE, new Misroute(true, false, false), "globex", 3_000_000);
            for (int i = 0; i < 100; i++) {
                series.record(Tier.NANO, BANDED, "tenant-" + i, 1_000);
            }
            assertEquals(2, series.tenants(), "bounded");
            assertEquals(2, registry.get("nexus.tenant.request.latency").tag("tenant", "acme").timer().count());
            assertEquals(1, registry.get("nexus.tenant.misroutes").tag("tenant", "acme").counter().count());
            assertEquals(0, registry.get("nexus.tenant.misroutes").tag("tenant", "globex").counter().count());
            assertEquals(100, registry.get("nexus.tenant.request.latency").tag("tenant", TenantSeries.OTHER).timer().count());
            assertEquals(100, registry.get("nexus.tenant.misroutes").tag("tenant", TenantSeries.OTHER).counter().count());
            assertEquals(3, registry.find("nexus.tenant.request.latency").timers().size(), "acme, globex, other");
        }
        assertEquals(0, registry.getMeters().size(), "close removes every series");
    }

    /**
     * Header names are client input: a client sending many can take every slot of the bound, but not
     * from a tenant the router can authenticate, which gets its own series whenever it comes.
     */
    @Test
    void headerNamesCannotCrowdOutATenantWithKeys() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TenantSeries series = new TenantSeries(registry, 2)) {
            series.knownTenants(name -> name.equals("acme") || name.equals("globex"));
            for (int i = 0; i < 100; i++) {
                series.record(Tier.NANO, null, "junk-" + i, 1_000);
            }
            series.record(Tier.NANO, null, "acme", 1_000);
            series.record(Tier.NANO, null, "globex", 1_000);
            series.record(Tier.NANO, null, "initech", 1_000);
            assertEquals(1, registry.get("nexus.tenant.request.latency").tag("tenant", "acme").timer().count());
            assertEquals(1, registry.get("nexus.tenant.request.latency").tag("tenant", "globex").timer().count());
            assertEquals(99, registry.get("nexus.tenant.request.latency").tag("tenant", TenantSeries.OTHER).timer().count(),
                    "98 junk names past the bound and initech, which has no key");
            assertEquals(4, series.tenants(), "two header names in the bound, two tenants with keys outside it");
        }
    }

    @Test
    void zeroMeansOnlyOtherAndLongNamesAreCut() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TenantSeries none = new TenantSeries(registry, 0)) {
            none.record(Tier.NANO, null, "acme", 1_000);
            assertEquals(0, none.tenants());
            assertEquals(1, registry.get("nexus.tenant.request.latency").tag("tenant", TenantSeries.OTHER).timer().count());
        }
        try (TenantSeries one = new TenantSeries(registry, 1)) {
            one.record(Tier.NANO, null, "x".repeat(500), 1_000);
            assertEquals(1, registry.get("nexus.tenant.request.latency").tag("tenant", "x".repeat(TenantSeries.MAX_NAME))
                    .timer().count());
        }
    }

    @Test
    void kernelSamplesCarryTheTenantsStableId() {
        // The id LatencyRing writes into latency_event.tenant_id: FNV-1a of the name, 0 for none.
        assertEquals(0, LatencyRing.tenantId(null));
        assertEquals(0xe40c292c, LatencyRing.tenantId("a"));
        assertEquals(LatencyRing.tenantId("acme"), LatencyRing.tenantId("acme"));
        // FNV-1a 32 over the UTF-8 bytes, ASCII or not (reference values from the byte-wise definition).
        for (String name : List.of("anonymous", "acme-prod", "zürich", "東京", "a\uD83D\uDE00b", "x\u007f\u0080")) {
            int expected = 0x811c9dc5;
            for (byte b : name.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                expected = (expected ^ (b & 0xff)) * 0x01000193;
            }
            assertEquals(expected, LatencyRing.tenantId(name), name);
        }
    }
}
