package io.nexuscore.kernel.maps;

import static io.nexuscore.kernel.maps.SharedStructs.LIMIT_WINDOW_NS;
import static io.nexuscore.kernel.maps.SharedStructs.TENANT_WINDOW;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_COUNTED;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_FOR_GOOD;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_REQUESTS;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_TOKENS;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The tenants' anchored minute windows in {@code tenant_windows}, mapped shared with the kernel:
 * the data plane counts the requests XDP did not count (blind, IPv6, TLS) here, with the rule of
 * nexus_limits.bpf.h, in the same memory and with the same atomic adds, so XDP's counts and these
 * are one counter per tenant. {@link #admit} is {@code count_tenant_request} line for line
 * (TenantLimitsParityTest holds them equal); the clock is {@link System#nanoTime}, which is
 * CLOCK_MONOTONIC, bpf_ktime_get_ns's clock.
 */
public final class TenantWindows {

    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final int REQUESTS_START = TENANT_WINDOW.offset("requests_start");
    private static final int REQUESTS = TENANT_WINDOW.offset("requests");
    private static final int TOKENS_START = TENANT_WINDOW.offset("tokens_start");
    private static final int TOKENS = TENANT_WINDOW.offset("tokens");

    private final ByteBuffer values;

    TenantWindows(ByteBuffer values) {
        this.values = values;
    }

    /** The rule over any memory of the map's layout (little-endian, TENANT_LIMIT_SLOTS values): tests. */
    public static TenantWindows over(ByteBuffer values) {
        if (values.capacity() < SharedStructs.TENANT_WINDOW.size() * SharedStructs.TENANT_LIMIT_SLOTS) {
            throw new IllegalArgumentException("tenant windows need " + SharedStructs.TENANT_WINDOW.size()
                    * SharedStructs.TENANT_LIMIT_SLOTS + " bytes, got " + values.capacity());
        }
        return new TenantWindows(values);
    }

    /** One prefix's minute limits as XDP enforces them (struct tenant_limit); 0 = not set. */
    public record Limit(int slot, int requestsPerMinute, long tokensPerMinute, long tokensWhole, int outputTokens) {
        public Limit {
            if (slot < 0 || slot >= SharedStructs.TENANT_LIMIT_SLOTS) {
                throw new IllegalArgumentException("slot " + slot + " outside 0.." + (SharedStructs.TENANT_LIMIT_SLOTS - 1));
            }
        }
    }

    /**
     * Counts one request of {@code charge} tokens, or refuses it and counts nothing.
     *
     * @return VERDICT_F_COUNTED, or VERDICT_F_OVER_REQUESTS / VERDICT_F_OVER_TOKENS (with
     *         VERDICT_F_OVER_FOR_GOOD when the charge alone is above the whole limit): the flags XDP
     *         writes into the verdict for the same decision
     */
    public int admit(Limit limit, long now, long charge) {
        int base = base(limit.slot());
        if (limit.requestsPerMinute() != 0
                && count(base + REQUESTS_START, base + REQUESTS, now) + 1 > Integer.toUnsignedLong(limit.requestsPerMinute())) {
            return VERDICT_F_OVER_REQUESTS;
        }
        if (limit.tokensPerMinute() != 0) {
            if (limit.tokensWhole() != 0 && Long.compareUnsigned(charge, limit.tokensWhole()) > 0) {
                return VERDICT_F_OVER_TOKENS | VERDICT_F_OVER_FOR_GOOD;
            }
            long used = count(base + TOKENS_START, base + TOKENS, now);
            if (used != 0 && Long.compareUnsigned(used + charge, limit.tokensPerMinute()) > 0) {
                return VERDICT_F_OVER_TOKENS;
            }
        }
        if (limit.requestsPerMinute() != 0) {
            add(base + REQUESTS_START, base + REQUESTS, now, 1);
        }
        if (limit.tokensPerMinute() != 0) {
            add(base + TOKENS_START, base + TOKENS, now, charge);
        }
        return VERDICT_F_COUNTED;
    }

    /**
     * Corrects a counted charge by {@code delta} tokens (the answer's real usage minus the charge, or
     * minus the whole charge for a refund), only while the window it went into is still open: a
     * charge whose window ended is gone with it. Never below zero.
     */
    public void settleTokens(int slot, long windowStart, long delta) {
        int base = base(slot);
        if ((long) WORD.getVolatile(values, base + TOKENS_START) != windowStart || delta == 0) {
            return;
        }
        long seen;
        do {
            seen = (long) WORD.getVolatile(values, base + TOKENS);
        } while (!WORD.compareAndSet(values, base + TOKENS, seen, Math.max(0, seen + delta)));
    }

    /** Takes one request back out of its window (a request another check refused after it was counted). */
    public void uncountRequest(int slot, long windowStart) {
        int base = base(slot);
        if ((long) WORD.getVolatile(values, base + REQUESTS_START) == windowStart) {
            long seen;
            do {
                seen = (long) WORD.getVolatile(values, base + REQUESTS);
            } while (seen > 0 && !WORD.compareAndSet(values, base + REQUESTS, seen, seen - 1));
        }
    }

    /** Where the slot's requests window started (0: none open), for headers and settling. */
    public long requestsStart(int slot) {
        return (long) WORD.getVolatile(values, base(slot) + REQUESTS_START);
    }

    public long tokensStart(int slot) {
        return (long) WORD.getVolatile(values, base(slot) + TOKENS_START);
    }

    /** Requests counted in the slot's current window at {@code now}. */
    public long requests(int slot, long now) {
        int base = base(slot);
        return count(base + REQUESTS_START, base + REQUESTS, now);
    }

    public long tokens(int slot, long now) {
        int base = base(slot);
        return count(base + TOKENS_START, base + TOKENS, now);
    }

    /** Zeroes a slot (a slot given to another tenant starts empty). */
    public void clear(int slot) {
        int base = base(slot);
        for (int offset = 0; offset < TENANT_WINDOW.size(); offset += Long.BYTES) {
            WORD.setVolatile(values, base + offset, 0L);
        }
    }

    private long count(int startAt, int countAt, long now) {
        long start = (long) WORD.getVolatile(values, startAt);
        return start != 0 && Long.compareUnsigned(now - start, LIMIT_WINDOW_NS) < 0 ? (long) WORD.getVolatile(values, countAt) : 0;
    }

    private void add(int startAt, int countAt, long now, long amount) {
        long seen = (long) WORD.getVolatile(values, startAt);
        if (seen == 0 || Long.compareUnsigned(now - seen, LIMIT_WINDOW_NS) >= 0) {
            if (WORD.compareAndSet(values, startAt, seen, now)) {
                WORD.setVolatile(values, countAt, 0L); // the opener zeroes the window; its add follows
            }
        }
        WORD.getAndAdd(values, countAt, amount);
    }

    private static int base(int slot) {
        if (slot < 0 || slot >= SharedStructs.TENANT_LIMIT_SLOTS) {
            throw new IllegalArgumentException("slot " + slot);
        }
        return slot * TENANT_WINDOW.size();
    }
}
