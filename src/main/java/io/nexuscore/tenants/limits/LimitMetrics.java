package io.nexuscore.tenants.limits;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Prometheus counters per tenant: {@code nexus_tenant_limit_refusals_total{tenant,reason}} and
 * {@code nexus_tenant_tokens_total{tenant,kind="prompt"|"completion"}}, the tenant label bounded as the
 * other tenant series are ({@code metrics.tenantSeries}; tenants with limits or keys always get theirs).
 */
final class LimitMetrics {

    private final MeterRegistry registry;
    private final BoundedTenants names;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    /** Each name's prompt and completion token counters, found with one lookup a request. */
    private final Map<String, Counter[]> tokenCounters = new ConcurrentHashMap<>();

    LimitMetrics(MeterRegistry registry, BoundedTenants names) {
        this.registry = registry;
        this.names = names;
    }

    void refused(String tenant, LimitCounter.Reason reason) {
        String name = names.nameOf(tenant);
        counters.computeIfAbsent("r\0" + name + '\0' + reason.label(), k -> Counter.builder("nexus.tenant.limit.refusals")
                .description("Requests refused 429 by a tenant limit, by the limit")
                .tag("tenant", name).tag("reason", reason.label()).register(registry)).increment();
    }

    void tokens(String tenant, long prompt, long completion) {
        String name = names.nameOf(tenant);
        Counter[] pair = tokenCounters.computeIfAbsent(name, n -> new Counter[] {tokenCounter(n, "prompt"),
                tokenCounter(n, "completion")});
        if (prompt > 0) {
            pair[0].increment(prompt);
        }
        if (completion > 0) {
            pair[1].increment(completion);
        }
    }

    private Counter tokenCounter(String name, String kind) {
        return counters.computeIfAbsent("t\0" + name + '\0' + kind, k -> Counter.builder("nexus.tenant.tokens")
                .description("Tokens of a tenant's answers (their usage), prompt and completion")
                .tag("tenant", name).tag("kind", kind).register(registry));
    }
}
