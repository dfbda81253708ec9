package io.nexuscore.dataplane;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.classify.Tier;
import io.nexuscore.http.ByteBudget;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.misroute.MisrouteMeters;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The data plane's meters (all {@code nexus_} prefixed in Prometheus). Hot-path meters are looked
 * up once and kept, so a request does not pay a registry lookup per counter.
 */
public final class DataPlaneMetrics {

    private final MeterRegistry registry;
    private final Map<Tier, Timer> latency = new EnumMap<>(Tier.class);
    private final Map<RouteSource, Counter> routeSources = new EnumMap<>(RouteSource.class);
    /** nexus_requests by assigned tier, then by status - 100 (100..599): no key built per request. */
    private final Map<Tier, AtomicReferenceArray<Counter>> requests = new EnumMap<>(Tier.class);
    private final Map<String, Counter> fallbacks = new ConcurrentHashMap<>();
    private final Map<String, Counter> httpErrors = new ConcurrentHashMap<>();
    private final Map<String, Counter> tierFallbacks = new ConcurrentHashMap<>();
    private final Counter disagreements;
    private final MisrouteMeters misroutes;

    public DataPlaneMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.misroutes = new MisrouteMeters(registry);
        for (Tier tier : Tier.values()) {
            latency.put(tier, Timer.builder("nexus_request_latency")
                    .description("Time from request arrival to the end of the response, by assigned tier")
                    .tag("tier", tier.label())
                    .publishPercentiles(0.5, 0.95, 0.99)
                    .register(registry));
        }
        for (Tier tier : Tier.values()) {
            requests.put(tier, new AtomicReferenceArray<>(500));
        }
        for (RouteSource source : RouteSource.values()) {
            routeSources.put(source, Counter.builder("nexus_route_source")
                    .description("Requests by who decided the tier: kernel verdict or Java scorer")
                    .tag("source", source.label())
                    .register(registry));
        }
        disagreements = Counter.builder("nexus_kernel_user_disagreements")
                .description("Verified kernel verdicts whose score differs from the Java scorer's")
                .register(registry);
    }

    /** The bytes of request bodies held while they arrive, and their bound. */
    void heldBodyBytes(ByteBudget held) {
        Gauge.builder("nexus_dataplane_body_bytes_held", held, ByteBudget::held)
                .description("Request body bytes held while bodies arrive, over all connections").register(registry);
        Gauge.builder("nexus_dataplane_body_bytes_held_max", held, ByteBudget::limit)
                .description("dataPlane.maxHeldBodyBytes: a request whose body would pass it gets 503 body-budget")
                .register(registry);
    }

    void request(Tier assigned, int status, long latencyNanos) {
        latency.get(assigned).record(latencyNanos, TimeUnit.NANOSECONDS);
        boolean cached = status >= 100 && status <= 599;
        AtomicReferenceArray<Counter> byStatus = requests.get(assigned);
        Counter counter = cached ? byStatus.get(status - 100) : null;
        if (counter == null) {
            // Two loops racing here register the same meter: the registry returns it to both.
            counter = Counter.builder("nexus_requests")
                    .description("Completed data-plane requests by assigned tier and HTTP status")
                    .tag("tier", assigned.label())
                    .tag("status", Integer.toString(status))
                    .register(registry);
            if (cached) {
                byStatus.set(status - 100, counter);
            }
        }
        counter.increment();
    }

    void routeSource(RouteSource source) {
        routeSources.get(source).increment();
    }

    void assessed(Tier assigned, Tier observed, Misroute misroute) {
        misroutes.record(assigned, observed, misroute);
    }

    void fallback(Tier from, Tier to, String reason) {
        tierFallbacks.computeIfAbsent(from.label() + '/' + to.label() + '/' + reason, key -> Counter.builder("nexus_tier_fallbacks")
                .description("Requests served by the assigned tier's fallback tier, by why the assigned tier could not take them")
                .tag("from", from.label())
                .tag("to", to.label())
                .tag("reason", reason)
                .register(registry)).increment();
    }

    void disagreement() {
        disagreements.increment();
    }

    void verdictFallback(String reason) {
        fallbacks.computeIfAbsent(reason, key -> Counter.builder("nexus_verdict_fallbacks")
                .description("Requests the Java scorer decided: no kernel verdict, another request's, a body holding more than its prompt, or a prompt the byte scan could not see")
                .tag("reason", reason)
                .register(registry)).increment();
    }

    /** One rejected or failed request, by problem type slug. */
    public void httpError(String type) {
        httpErrors.computeIfAbsent(type, key -> Counter.builder("nexus_http_errors")
                .description("Data-plane error responses by problem type")
                .tag("type", type)
                .register(registry)).increment();
    }
}
