package io.nexuscore.tenants.limits;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Java counting of tenant limits (docs/tenant-limits.md, "The algorithm"): per tenant an anchored
 * 60 s window for requests and one for tokens ({@link AnchoredWindow}), the requests in flight, and
 * the tokens of the current UTC day. A tenant's counters are changed under its own lock (a handful of
 * arithmetic operations), so event loops serving different tenants never wait on each other.
 *
 * <p>Tenant names may come from a header (client input): counters of tenants idle for a window are
 * dropped once more than {@link #SWEEP_ABOVE} tenants are held, so rotating names costs bounded memory.
 */
public final class WindowLimiter implements LimitCounter {

    static final long DAY_MILLIS = Duration.ofDays(1).toMillis();
    /** Tenants held before idle ones are swept. */
    static final int SWEEP_ABOVE = 10_000;

    private final LimitClock clock;
    private final Map<String, Counters> tenants = new ConcurrentHashMap<>();

    public WindowLimiter(LimitClock clock) {
        this.clock = clock;
    }

    public WindowLimiter() {
        this(LimitClock.SYSTEM);
    }

    /** One tenant's counters; guarded by itself. */
    private static final class Counters {
        final AnchoredWindow requests = new AnchoredWindow();
        final AnchoredWindow tokens = new AnchoredWindow();
        long inFlight;
        /** The UTC day (days since the epoch) {@link #dayTokens} belongs to. */
        long day = Long.MIN_VALUE;
        long dayTokens;

        long dayTokens(long today) {
            return day == today ? dayTokens : 0;
        }

        boolean idle(long now, long today) {
            return inFlight == 0 && !requests.current(now) && !tokens.current(now) && dayTokens(today) == 0;
        }
    }

    @Override
    public Verdict admit(String tenant, TenantLimits whole, TenantLimits share, long charge) {
        if (share.none()) {
            return new Admitted(Admission.NONE, RateState.NONE);
        }
        long now = clock.monotonicNanos();
        long wallMillis = clock.epochMillis();
        long today = Math.floorDiv(wallMillis, DAY_MILLIS);
        Counters c = counters(tenant, now, today);
        synchronized (c) {
            Refused refused = check(c, whole, share, charge, now, wallMillis, today);
            if (refused != null) {
                return refused;
            }
            c.inFlight++;
            if (share.requestsPerMinute() != TenantLimits.UNLIMITED) {
                c.requests.add(now, 1);
            }
            long tokensStart = share.tokensPerMinute() != TenantLimits.UNLIMITED ? c.tokens.add(now, charge) : 0;
            if (share.tokensPerDay() != TenantLimits.UNLIMITED) {
                if (c.day != today) {
                    c.day = today;
                    c.dayTokens = 0;
                }
                c.dayTokens += charge;
            }
            return new Admitted(new Held(c, charge, tokensStart, today), state(c, share, now));
        }
    }

    /** The first limit the request would break, in the order concurrency, requests, tokens, day; null when none. */
    private static Refused check(Counters c, TenantLimits whole, TenantLimits share, long charge, long now,
                                 long wallMillis, long today) {
        if (share.maxConcurrent() != TenantLimits.UNLIMITED && c.inFlight + 1 > share.maxConcurrent()) {
            // No window to wait for: a slot frees when a request in flight ends.
            return new Refused(Reason.MAX_CONCURRENT, 1, true, c.inFlight + " requests of this tenant are in flight, "
                    + "its max_concurrent is " + share.maxConcurrent(), state(c, share, now));
        }
        if (share.requestsPerMinute() != TenantLimits.UNLIMITED
                && c.requests.count(now) + 1 > share.requestsPerMinute()) {
            return new Refused(Reason.REQUESTS_PER_MINUTE, seconds(c.requests.resetNanos(now)), true,
                    "this tenant's requests_per_minute is " + share.requestsPerMinute() + ", all used in the current window",
                    state(c, share, now));
        }
        if (share.tokensPerMinute() != TenantLimits.UNLIMITED) {
            if (charge > whole.tokensPerMinute()) {
                return tooLarge(Reason.TOKENS_PER_MINUTE, charge, whole.tokensPerMinute(), state(c, share, now));
            }
            long used = c.tokens.count(now);
            // A fleet share smaller than this one request still lets it into an empty window.
            if (used + charge > share.tokensPerMinute() && used != 0) {
                return new Refused(Reason.TOKENS_PER_MINUTE, seconds(c.tokens.resetNanos(now)), true,
                        "this request is charged " + charge + " tokens (prompt estimate + output cap); the tenant's "
                                + "tokens_per_minute is " + share.tokensPerMinute() + ", " + used + " used in the current window",
                        state(c, share, now));
            }
        }
        if (share.tokensPerDay() != TenantLimits.UNLIMITED) {
            if (charge > whole.tokensPerDay()) {
                return tooLarge(Reason.TOKENS_PER_DAY, charge, whole.tokensPerDay(), state(c, share, now));
            }
            long used = c.dayTokens(today);
            if (used + charge > share.tokensPerDay() && used != 0) {
                long toMidnight = (today + 1) * DAY_MILLIS - wallMillis;
                return new Refused(Reason.TOKENS_PER_DAY, Math.max(1, (toMidnight + 999) / 1000), true,
                        "this request is charged " + charge + " tokens; the tenant's tokens_per_day is "
                                + share.tokensPerDay() + ", " + used + " used today (UTC)", state(c, share, now));
            }
        }
        return null;
    }

    private static Refused tooLarge(Reason reason, long charge, long limit, RateState state) {
        return new Refused(reason, 1, false, "this request alone is charged " + charge + " tokens (prompt estimate + "
                + "output cap: max_tokens, max_completion_tokens or max_output_tokens), above the tenant's whole "
                + reason.label() + " of " + limit + ": it can never be admitted; ask for fewer output tokens", state);
    }

    /** Whole seconds until a window ends, rounded up, at least 1 (Retry-After: 0 would invite a busy loop). */
    static long seconds(long nanos) {
        return Math.max(1, (nanos + 999_999_999L) / 1_000_000_000L);
    }

    private static RateState state(Counters c, TenantLimits share, long now) {
        long rpm = share.requestsPerMinute();
        long tpm = share.tokensPerMinute();
        return new RateState(rpm, Math.max(0, rpm - c.requests.count(now)), c.requests.resetNanos(now),
                tpm, Math.max(0, tpm - c.tokens.count(now)), c.tokens.resetNanos(now));
    }

    private Counters counters(String tenant, long now, long today) {
        Counters c = tenants.get(tenant);
        if (c != null) {
            return c;
        }
        if (tenants.size() >= SWEEP_ABOVE) {
            sweep(now, today);
        }
        return tenants.computeIfAbsent(tenant, t -> new Counters());
    }

    /** Drops idle tenants' counters: an idle tenant's next request finds what a new one would. */
    private void sweep(long now, long today) {
        tenants.entrySet().removeIf(e -> {
            synchronized (e.getValue()) {
                return e.getValue().idle(now, today);
            }
        });
    }

    /** Tenants with counters (tests: the sweep). */
    int tenantsHeld() {
        return tenants.size();
    }

    /** One admission's hold: its charge to settle and its slot to release, each once. */
    private final class Held implements Admission {
        private final Counters counters;
        private final long charge;
        private final long tokensStart;
        private final long day;
        private final AtomicBoolean settled = new AtomicBoolean();
        private final AtomicBoolean released = new AtomicBoolean();

        Held(Counters counters, long charge, long tokensStart, long day) {
            this.counters = counters;
            this.charge = charge;
            this.tokensStart = tokensStart;
            this.day = day;
        }

        @Override
        public void settle(long realTokens) {
            if (!settled.compareAndSet(false, true)) {
                return;
            }
            long delta = realTokens - charge;
            long now = clock.monotonicNanos();
            synchronized (counters) {
                counters.tokens.settle(now, tokensStart, delta);
                if (counters.day == day) {
                    counters.dayTokens = Math.max(0, counters.dayTokens + delta);
                }
            }
        }

        @Override
        public void release() {
            if (released.compareAndSet(false, true)) {
                synchronized (counters) {
                    counters.inFlight--;
                }
            }
        }
    }
}
