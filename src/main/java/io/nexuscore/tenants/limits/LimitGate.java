package io.nexuscore.tenants.limits;

import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The data plane's door for tenant limits: which limits apply to a request's tenant (its own, else
 * {@code dataPlane.defaultLimits}), this router's share of them ({@link FleetShare}), the charge
 * (prompt estimate + output cap), the counting ({@link LimitCounter}), the 429 and the headers, the
 * usage and the metrics. One per router, shared by every event loop.
 */
public final class LimitGate {

    /** The header that tells the OpenAI SDKs not to retry (a request above a whole limit never passes). */
    static final String SHOULD_RETRY = "x-should-retry";

    private final TenantLimitStore store;
    private final TenantLimits defaults;
    private final long assumedOutputTokens;
    private final LimitCounter counter;
    private final FleetShare share;
    private final LimitClock clock;
    private final TenantUsage usage;
    private final LimitMetrics metrics;

    /**
     * @param defaults            limits of tenants without their own ({@code dataPlane.defaultLimits})
     * @param assumedOutputTokens the output cap charged when a request names none ({@code dataPlane.assumedOutputTokens})
     * @param tenantSeries        unproven tenant names with a series and a usage record of their own
     * @param knownTenants        tenants the operator named elsewhere (API keys): always their own series
     */
    public LimitGate(TenantLimitStore store, TenantLimits defaults, long assumedOutputTokens, LimitCounter counter,
                     FleetShare share, LimitClock clock, MeterRegistry registry, int tenantSeries,
                     Predicate<String> knownTenants) {
        this.store = store;
        this.defaults = defaults;
        this.assumedOutputTokens = assumedOutputTokens;
        this.counter = counter;
        this.share = share;
        this.clock = clock;
        BoundedTenants names = new BoundedTenants(tenantSeries,
                name -> store.of(name).isPresent() || knownTenants.test(name));
        this.usage = new TenantUsage(names);
        this.metrics = new LimitMetrics(registry, names);
    }

    /**
     * The router's gate: limits saved beside the control plane's state file, {@code dataPlane.defaultLimits},
     * the Java counter on the system clocks.
     */
    public static LimitGate start(io.nexuscore.config.RouterConfig config, MeterRegistry registry, FleetShare share,
                                  Predicate<String> knownTenants) {
        io.nexuscore.config.DefaultLimitsConfig d = config.dataPlane().defaultLimits();
        return new LimitGate(TenantLimitStore.load(TenantLimitStore.besideStateFile(config.control().stateFile())),
                new TenantLimits(d.requestsPerMinute(), d.tokensPerMinute(), d.maxConcurrent(), d.tokensPerDay()),
                config.dataPlane().assumedOutputTokens(), new WindowLimiter(LimitClock.SYSTEM), share, LimitClock.SYSTEM,
                registry, config.metrics().tenantSeries(), knownTenants);
    }

    /**
     * A gate without limits and without meters (tests and tools that build a data plane or a control
     * plane by hand): it admits everything and keeps usage in memory only.
     */
    public static LimitGate none() {
        return new LimitGate(TenantLimitStore.inMemory(), TenantLimits.NONE, 256, new WindowLimiter(), FleetShare.ALONE,
                LimitClock.SYSTEM, new io.micrometer.core.instrument.composite.CompositeMeterRegistry(), 0, name -> false);
    }

    public TenantUsage usage() {
        return usage;
    }

    public TenantLimitStore store() {
        return store;
    }

    public FleetShare share() {
        return share;
    }

    /** The limits {@code tenant}'s requests are held to: its own, else the default. */
    public TenantLimits limitsOf(String tenant) {
        return store.of(tenant).orElse(defaults);
    }

    /**
     * Counts the request against its tenant's limits.
     *
     * @param promptTokens the router's estimate of the prompt's tokens
     * @param outputCap    the request's max_tokens / max_completion_tokens / max_output_tokens, 0 when absent
     * @param choices      n / best_of, 0 when absent
     * @return the request's ticket: its headers, and the settle and release every path must reach
     * @throws ProblemException 429 {@code rate-limited} with Retry-After and the headers, counted
     */
    public Ticket admit(String tenant, long promptTokens, long outputCap, long choices) {
        TenantLimits whole = limitsOf(tenant);
        if (whole.none()) {
            return new Ticket(this, tenant, LimitCounter.Admission.NONE, Map.of());
        }
        long charge = charge(promptTokens, outputCap, choices);
        LimitCounter.Verdict verdict = counter.admit(tenant, whole, share.of(whole), charge);
        Map<String, String> headers = RateLimitHeaders.of(verdict.state());
        if (verdict instanceof LimitCounter.Refused refused) {
            usage.refused(tenant, refused.reason());
            metrics.refused(tenant, refused.reason());
            Problem problem = ProblemType.RATE_LIMITED.problem(refused.detail()).withField(refused.reason().label());
            for (Map.Entry<String, String> h : headers.entrySet()) {
                problem = problem.withHeader(h.getKey(), h.getValue());
            }
            problem = refused.retryable() ? problem.withHeader("Retry-After", Long.toString(refused.retryAfterSeconds()))
                    : problem.withHeader(SHOULD_RETRY, "false");
            throw new ProblemException(problem);
        }
        return new Ticket(this, tenant, ((LimitCounter.Admitted) verdict).admission(), headers);
    }

    /** Prompt estimate + output cap (the assumed one when absent) for each choice asked. */
    long charge(long promptTokens, long outputCap, long choices) {
        long output = outputCap > 0 ? outputCap : assumedOutputTokens;
        return Math.max(0, promptTokens) + output * Math.max(1, choices);
    }

    void finished(String tenant, String tier, long promptTokens, long completionTokens) {
        usage.served(tenant, tier, promptTokens, completionTokens, clock.epochMillis());
        metrics.tokens(tenant, promptTokens, completionTokens);
    }
}
