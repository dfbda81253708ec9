package io.nexuscore.tenants.limits;

/**
 * Counts tenants' requests and tokens against their limits: the small interface the data plane
 * admits through. {@link WindowLimiter} is the Java implementation; the kernel's counting (XDP,
 * source-prefix tenants) implements the same algorithm (docs/tenant-limits.md) over a pinned map, and
 * a parity test keeps the two equal.
 */
public interface LimitCounter {

    /**
     * Admits one request or refuses it, counting nothing when it refuses.
     *
     * @param tenant the request's tenant
     * @param whole  the tenant's limits as set (a request above a whole token limit can never pass)
     * @param share  what this router enforces: {@code whole} alone, its fleet share in a fleet
     * @param charge the tokens charged at admission: the prompt estimate plus the output cap
     */
    Verdict admit(String tenant, TenantLimits whole, TenantLimits share, long charge);

    /** Why a request was refused: the limit kind, labelled as the API names the limit. */
    enum Reason {
        REQUESTS_PER_MINUTE(TenantLimits.REQUESTS_PER_MINUTE),
        TOKENS_PER_MINUTE(TenantLimits.TOKENS_PER_MINUTE),
        MAX_CONCURRENT(TenantLimits.MAX_CONCURRENT),
        TOKENS_PER_DAY(TenantLimits.TOKENS_PER_DAY);

        private final String label;

        Reason(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * The rate-limit state an answer reports (OpenAI's x-ratelimit-* headers), after this request.
     * A limit of 0 is not set: its headers are not sent.
     */
    record RateState(long requestLimit, long requestsRemaining, long requestsResetNanos,
                     long tokenLimit, long tokensRemaining, long tokensResetNanos) {
        public static final RateState NONE = new RateState(0, 0, 0, 0, 0, 0);
    }

    sealed interface Verdict permits Admitted, Refused {
        RateState state();
    }

    /** Counted: the caller settles the tokens once the real usage is known and releases the slot once. */
    record Admitted(Admission admission, RateState state) implements Verdict {
    }

    /**
     * Not counted.
     *
     * @param retryAfterSeconds whole seconds until the limiting window ends (rounded up, at least 1)
     * @param retryable         false when waiting cannot help: the request alone is above a whole limit
     * @param detail            what to tell the client, with the numbers
     */
    record Refused(Reason reason, long retryAfterSeconds, boolean retryable, String detail, RateState state)
            implements Verdict {
    }

    /** One admitted request's hold on its tenant's counters. */
    interface Admission {

        /** An admission that holds nothing (a tenant without limits). */
        Admission NONE = new Admission() {
            @Override
            public void settle(long realTokens) {
            }

            @Override
            public void release() {
            }
        };

        /**
         * Replaces the charge with the answer's real token count (prompt + completion): the minute
         * window and the day take {@code realTokens - charge}, each only while it is the one that took
         * the charge. Only the first call counts.
         */
        void settle(long realTokens);

        /** Gives the concurrency slot back; only the first call counts, so every path may call it. */
        void release();
    }
}
