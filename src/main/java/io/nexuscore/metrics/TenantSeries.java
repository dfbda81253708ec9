package io.nexuscore.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.kernel.maps.LatencyRecorder;
import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Per-tenant latency ({@code nexus_tenant_request_latency_seconds{tenant}}, a histogram) and
 * misroutes ({@code nexus_tenant_misroutes_total{tenant}}: banded misroutes, the truthful signal
 * the misroute alert uses, see io.nexuscore.misroute.Misroute), with the cardinality bounded by configuration: the first
 * {@code maxTenants} tenants seen get their own series, every later one is counted as
 * {@value #OTHER}. The tenant header is client input, so the bound is what keeps a client from
 * growing the scrape without limit. Tenants proven by an API key ({@link #knownTenants}) always get
 * their own series, outside the bound: names sent only in the header could otherwise take every
 * slot for good (the control plane bounds how many tenants hold keys).
 */
public final class TenantSeries implements LatencyRecorder, AutoCloseable {

    /** The series every tenant beyond the bound lands in. */
    public static final String OTHER = "other";
    /** Tenant names longer than this are cut (label values are client input). */
    static final int MAX_NAME = 64;
    private static final Duration[] BUCKETS = {
        Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(20),
        Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60)};

    private record Series(Timer latency, Counter misroutes) {
    }

    private final MeterRegistry registry;
    private final int maxTenants;
    private final Map<String, Series> byTenant = new ConcurrentHashMap<>();
    private final List<Meter> meters = new ArrayList<>();
    private final Series other;
    /** Names that hold a slot of the bound (header-only names). */
    private int bounded;
    private volatile Predicate<String> known = name -> false;

    /** @param maxTenants tenants with their own series (0: only {@value #OTHER}) */
    public TenantSeries(MeterRegistry registry, int maxTenants) {
        this.registry = registry;
        this.maxTenants = maxTenants;
        this.other = create(OTHER);
    }

    @Override
    public void record(Tier assigned, Misroute misroute, String tenant, long latencyNanos, int trueTokens, int estimateQ4) {
        Series s = seriesOf(tenant);
        s.latency().record(latencyNanos, TimeUnit.NANOSECONDS);
        if (misroute != null && misroute.banded()) {
            s.misroutes().increment();
        }
    }

    /** Which tenants get a series of their own whatever the bound: those the router can authenticate. */
    public void knownTenants(Predicate<String> known) {
        this.known = known;
    }

    /** Tenants with their own series now (header-only names never more than the bound). */
    public int tenants() {
        return byTenant.size();
    }

    private Series seriesOf(String tenant) {
        String name = tenant == null ? OTHER : tenant.length() > MAX_NAME ? tenant.substring(0, MAX_NAME) : tenant;
        Series s = byTenant.get(name);
        if (s != null) {
            return s;
        }
        if (name.equals(OTHER)) {
            return other;
        }
        synchronized (this) {
            s = byTenant.get(name);
            if (s == null) {
                boolean proven = known.test(name);
                if (!proven && bounded >= maxTenants) {
                    return other;
                }
                s = create(name);
                byTenant.put(name, s);
                if (!proven) {
                    bounded++;
                }
            }
            return s;
        }
    }

    private Series create(String tenant) {
        Timer latency = Timer.builder("nexus.tenant.request.latency")
                .description("Latency of a tenant's completed requests (tenants past metrics.tenantSeries: \"other\")")
                .tag("tenant", tenant).serviceLevelObjectives(BUCKETS).register(registry);
        Counter misroutes = Counter.builder("nexus.tenant.misroutes")
                .description("A tenant's banded misroutes: the true score lies outside the assigned tier's range by more than the band")
                .tag("tenant", tenant).register(registry);
        synchronized (meters) {
            meters.add(latency);
            meters.add(misroutes);
        }
        return new Series(latency, misroutes);
    }

    @Override
    public void close() {
        synchronized (meters) {
            meters.forEach(registry::remove);
            meters.clear();
        }
    }
}
