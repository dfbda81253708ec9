package io.nexuscore.tenants.limits;

import static io.nexuscore.kernel.maps.SharedStructs.LIMIT_WINDOW_NS;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_COUNTED;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_FOR_GOOD;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_REQUESTS;

import io.nexuscore.kernel.maps.TenantWindows;
import java.util.Optional;

/**
 * Tenant limits in kernel mode: a tenant XDP counts ({@link KernelLimitSlots}) has its minute windows
 * in the kernel's {@code tenant_windows}, one counter for the requests XDP counted and for those the
 * data plane counts (blind, IPv6, TLS, another tenant's prefix); max_concurrent and tokens_per_day
 * stay in {@link WindowLimiter}. Every other tenant is the WindowLimiter's alone.
 *
 * <p>The checks run concurrency and the day first, then the minute windows; a refusal by the minute
 * windows gives back what the first checks took, so a refusal still changes nothing.
 */
public final class KernelWindowLimiter implements LimitCounter {

    private final WindowLimiter inner;
    private final KernelLimitSlots slots;
    private final LimitClock clock;

    public KernelWindowLimiter(WindowLimiter inner, KernelLimitSlots slots, LimitClock clock) {
        this.inner = inner;
        this.slots = slots;
        this.clock = clock;
    }

    public KernelLimitSlots slots() {
        return slots;
    }

    @Override
    public Verdict admit(String tenant, TenantLimits whole, TenantLimits share, long charge) {
        Optional<Integer> slot = slots.slotOf(tenant);
        if (slot.isEmpty()) {
            return inner.admit(tenant, whole, share, charge);
        }
        return decide(tenant, whole, share, charge, slot.get(), 0);
    }

    /**
     * The data plane's decision for a request XDP already decided ({@code flags}: its verdict's
     * VERDICT_F_COUNTED or OVER_* bits) for {@code tenant}'s slot: an OVER_* verdict is refused
     * as XDP refused it; a counted one passes the user-space checks or is taken back out of the
     * window. {@code charge} must be XDP's (prompt estimate + the assumed output cap).
     */
    public Verdict admitCounted(String tenant, TenantLimits whole, TenantLimits share, long charge, int flags) {
        Optional<Integer> slot = slots.slotOf(tenant);
        if (slot.isEmpty()) {
            return inner.admit(tenant, whole, share, charge);
        }
        return decide(tenant, whole, share, charge, slot.get(), flags);
    }

    /** Takes a request XDP counted for the prefix's tenant back out (it turned out to be another tenant's). */
    public void uncount(String prefixTenant, long charge) {
        slots.slotOf(prefixTenant).ifPresent(slot -> giveBack(slots.windows(), slot, charge));
    }

    private Verdict decide(String tenant, TenantLimits whole, TenantLimits share, long charge, int slot, int kernelFlags) {
        TenantWindows windows = slots.windows();
        TenantLimits minuteFree = new TenantLimits(TenantLimits.UNLIMITED, TenantLimits.UNLIMITED,
                share.maxConcurrent(), share.tokensPerDay());
        TenantLimits wholeMinuteFree = new TenantLimits(TenantLimits.UNLIMITED, TenantLimits.UNLIMITED,
                whole.maxConcurrent(), whole.tokensPerDay());
        Verdict rest = inner.admit(tenant, wholeMinuteFree, minuteFree, charge);
        if (rest instanceof Refused refused) {
            if ((kernelFlags & VERDICT_F_COUNTED) != 0) {
                giveBack(windows, slot, charge);
            }
            return new Refused(refused.reason(), refused.retryAfterSeconds(), refused.retryable(), refused.detail(),
                    state(windows, slot, share));
        }
        Admission held = ((Admitted) rest).admission();
        TenantWindows.Limit limit = new TenantWindows.Limit(slot, (int) Math.min(Integer.MAX_VALUE, share.requestsPerMinute()),
                share.tokensPerMinute(), whole.tokensPerMinute(), 0);
        int flags = kernelFlags != 0 ? kernelFlags : windows.admit(limit, clock.monotonicNanos(), charge);
        if ((flags & VERDICT_F_COUNTED) == 0) {
            held.settle(0);
            held.release();
            return refusal(windows, slot, share, whole, charge, flags);
        }
        long tokensStart = windows.tokensStart(slot);
        return new Admitted(new Admission() {
            @Override
            public void settle(long realTokens) {
                if (share.tokensPerMinute() != TenantLimits.UNLIMITED) {
                    windows.settleTokens(slot, tokensStart, realTokens - charge);
                }
                held.settle(realTokens);
            }

            @Override
            public void release() {
                held.release();
            }
        }, state(windows, slot, share));
    }

    private Refused refusal(TenantWindows windows, int slot, TenantLimits share, TenantLimits whole, long charge, int flags) {
        long now = clock.monotonicNanos();
        RateState state = state(windows, slot, share);
        if ((flags & VERDICT_F_OVER_REQUESTS) != 0) {
            return new Refused(Reason.REQUESTS_PER_MINUTE, WindowLimiter.seconds(reset(windows.requestsStart(slot), now)), true,
                    "this tenant's requests_per_minute is " + share.requestsPerMinute() + ", all used in the current window",
                    state);
        }
        if ((flags & VERDICT_F_OVER_FOR_GOOD) != 0) {
            return new Refused(Reason.TOKENS_PER_MINUTE, 1, false, "this request alone is charged " + charge
                    + " tokens (prompt estimate + output cap), above the tenant's whole tokens_per_minute of "
                    + whole.tokensPerMinute() + ": it can never be admitted; ask for fewer output tokens", state);
        }
        return new Refused(Reason.TOKENS_PER_MINUTE, WindowLimiter.seconds(reset(windows.tokensStart(slot), now)), true,
                "this request is charged " + charge + " tokens (prompt estimate + output cap); the tenant's "
                        + "tokens_per_minute is " + share.tokensPerMinute() + ", " + windows.tokens(slot, now)
                        + " used in the current window", state);
    }

    private void giveBack(TenantWindows windows, int slot, long charge) {
        windows.uncountRequest(slot, windows.requestsStart(slot));
        windows.settleTokens(slot, windows.tokensStart(slot), -charge);
    }

    private RateState state(TenantWindows windows, int slot, TenantLimits share) {
        long now = clock.monotonicNanos();
        long rpm = share.requestsPerMinute();
        long tpm = share.tokensPerMinute();
        return new RateState(rpm, Math.max(0, rpm - windows.requests(slot, now)), reset(windows.requestsStart(slot), now),
                tpm, Math.max(0, tpm - windows.tokens(slot, now)), reset(windows.tokensStart(slot), now));
    }

    /** Nanoseconds until a window that started at {@code start} ends; 0 when none is open. */
    private static long reset(long start, long now) {
        if (start == 0 || now - start >= LIMIT_WINDOW_NS) {
            return 0;
        }
        return start + LIMIT_WINDOW_NS - now;
    }
}
