package io.nexuscore.tenants.limits;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.TenantLimitMaps;
import io.nexuscore.tenants.TenantPolicies;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Optional;

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
    /** Tenants by source prefix, and in kernel mode XDP's counting; null for a gate without prefixes. */
    private final KernelLimitSlots prefixTenants;

    /**
     * @param defaults            limits of tenants without their own ({@code dataPlane.defaultLimits})
     * @param assumedOutputTokens the output cap charged when a request names none ({@code dataPlane.assumedOutputTokens})
     * @param tenantSeries        unproven tenant names with a series and a usage record of their own
     * @param knownTenants        tenants the operator named elsewhere (API keys): always their own series
     */
    public LimitGate(TenantLimitStore store, TenantLimits defaults, long assumedOutputTokens, LimitCounter counter,
                     FleetShare share, LimitClock clock, MeterRegistry registry, int tenantSeries,
                     Predicate<String> knownTenants) {
        this(store, defaults, assumedOutputTokens, counter, share, clock, registry, tenantSeries, knownTenants, null);
    }

    /** @param prefixTenants tenants by source prefix (and XDP's counting in kernel mode), or null */
    LimitGate(TenantLimitStore store, TenantLimits defaults, long assumedOutputTokens, LimitCounter counter,
              FleetShare share, LimitClock clock, MeterRegistry registry, int tenantSeries,
              Predicate<String> knownTenants, KernelLimitSlots prefixTenants) {
        this.prefixTenants = prefixTenants;
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
        return start(config, registry, share, knownTenants, Optional.empty(), null);
    }

    /**
     * The router's gate, with tenants by source prefix ({@code prefixes}, the tenant floors' store)
     * and, when {@code kernelMaps} is present (kernel mode), the minute windows of those tenants in
     * the kernel, where XDP counts the requests it scores ({@link KernelWindowLimiter}).
     * Call {@link #syncPrefixes} every second: it brings the kernel's map in line with the limits.
     */
    public static LimitGate start(io.nexuscore.config.RouterConfig config, MeterRegistry registry, FleetShare share,
                                  Predicate<String> knownTenants, Optional<TenantLimitMaps> kernelMaps,
                                  TenantPolicies prefixes) {
        io.nexuscore.config.DefaultLimitsConfig d = config.dataPlane().defaultLimits();
        TenantLimitStore store = TenantLimitStore.load(TenantLimitStore.besideStateFile(config.control().stateFile()));
        KernelLimitSlots slots = prefixes == null ? null
                : new KernelLimitSlots(kernelMaps, prefixes, store, share, config.dataPlane().assumedOutputTokens());
        WindowLimiter java = new WindowLimiter(LimitClock.SYSTEM);
        LimitCounter counter = kernelMaps.isPresent() && slots != null
                ? new KernelWindowLimiter(java, slots, LimitClock.SYSTEM) : java;
        LimitGate gate = new LimitGate(store,
                new TenantLimits(d.requestsPerMinute(), d.tokensPerMinute(), d.maxConcurrent(), d.tokensPerDay()),
                config.dataPlane().assumedOutputTokens(), counter, share, LimitClock.SYSTEM,
                registry, config.metrics().tenantSeries(), knownTenants, slots);
        gate.syncPrefixes();
        return gate;
    }

    /** Brings tenants by prefix, and the kernel's tenant_limits, in line with the limits (blocking: syscalls). */
    public void syncPrefixes() {
        if (prefixTenants != null) {
            prefixTenants.sync();
        }
    }

    /**
     * The tenant a request's limits and usage go to: the tenant it names, or, when it names none,
     * the tenant with limits whose source prefix holds its address (as tier floors are by prefix).
     */
    public String limitsTenant(String named, boolean anonymous, Optional<InetAddress> source) {
        if (!anonymous || prefixTenants == null || !(source.orElse(null) instanceof Inet4Address v4)) {
            return named;
        }
        return prefixTenants.tenantAt(v4).orElse(named);
    }

    /**
     * True when XDP counts the requests from {@code source} (its prefix's tenant has a kernel slot):
     * only then does the data plane read its verdict's flags, so other traffic pays no verdict read
     * and no syscall for limits.
     */
    public boolean countedInKernel(Optional<InetAddress> source) {
        return counter instanceof KernelWindowLimiter && source.orElse(null) instanceof Inet4Address v4
                && prefixTenants.tenantAt(v4).flatMap(prefixTenants::slotOf).isPresent();
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
        return admit(tenant, promptTokens, outputCap, choices, 0, Optional.empty());
    }

    /**
     * Counts the request, taking XDP's decision when XDP counted it ({@code kernelFlags}, its verdict's
     * VERDICT_F_COUNTED / OVER_*): for the tenant of the source's prefix it stands (an OVER_* verdict
     * is refused as XDP refused it); a request that turns out to be another tenant's is taken back out
     * of the prefix tenant's window and counted for its own.
     *
     * @param source the client's address (which prefix XDP counted the request for)
     */
    public Ticket admit(String tenant, long promptTokens, long outputCap, long choices, int kernelFlags,
                        Optional<InetAddress> source) {
        TenantLimits whole = limitsOf(tenant);
        if (kernelFlags != 0 && counter instanceof KernelWindowLimiter kernel
                && source.orElse(null) instanceof Inet4Address v4) {
            Optional<String> owner = prefixTenants.tenantAt(v4);
            long kernelCharge = Math.max(0, promptTokens) + assumedOutputTokens; // XDP cannot read max_tokens
            if (owner.isPresent() && owner.get().equals(tenant) && !whole.none()) {
                return decided(tenant, kernel.admitCounted(tenant, whole, share.of(whole), kernelCharge, kernelFlags), KERNEL);
            }
            if (owner.isPresent() && (kernelFlags & SharedStructs.VERDICT_F_COUNTED) != 0) {
                kernel.uncount(owner.get(), kernelCharge);
            }
        }
        if (whole.none()) {
            return new Ticket(this, tenant, LimitCounter.Admission.NONE, Map.of());
        }
        long charge = charge(promptTokens, outputCap, choices);
        return decided(tenant, counter.admit(tenant, whole, share.of(whole), charge), USER);
    }

    /** X-NX-Limit-Source: who counted a limited tenant's request, XDP ("kernel") or the data plane ("user"). */
    static final String LIMIT_SOURCE = "X-NX-Limit-Source";
    private static final String KERNEL = "kernel";
    private static final String USER = "user";

    private Ticket decided(String tenant, LimitCounter.Verdict verdict, String source) {
        Map<String, String> headers = RateLimitHeaders.of(verdict.state()); // a fresh map of its own
        headers.put(LIMIT_SOURCE, source);
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
