package io.nexuscore.tenants.limits;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One admitted request's part in its tenant's limits: the x-ratelimit-* headers for its answer, and
 * the one {@link #finish} that settles its tokens, records its usage and gives its concurrency slot
 * back. Every path after admission (answer, tier error, client gone, deadline, a refusal further on)
 * calls finish or {@link #release}; only the first call counts.
 */
public final class Ticket {

    private final LimitGate gate;
    private final String tenant;
    private final LimitCounter.Admission admission;
    private final Map<String, String> headers;
    private final AtomicBoolean done = new AtomicBoolean();

    Ticket(LimitGate gate, String tenant, LimitCounter.Admission admission, Map<String, String> headers) {
        this.gate = gate;
        this.tenant = tenant;
        this.admission = admission;
        this.headers = headers; // made for this ticket alone, never changed after
    }

    /** The rate-limit headers for the answer (none for a tenant without limits). */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * The request ended with {@code tier} having worked on it.
     *
     * @param usageKnown the answer carried usage (a usage object, a stream's usage chunk or summary):
     *                   the charge is settled to {@code promptTokens + completionTokens}; otherwise the
     *                   charge stands (a failed or cut-off request may have cost the upstream all of it)
     */
    public void finish(String tier, boolean usageKnown, long promptTokens, long completionTokens) {
        if (!done.compareAndSet(false, true)) {
            return;
        }
        try {
            if (usageKnown) {
                admission.settle(promptTokens + completionTokens);
            }
            gate.finished(tenant, tier, usageKnown ? promptTokens : 0, usageKnown ? completionTokens : 0);
        } finally {
            admission.release();
        }
    }

    /**
     * The request ended before any tier worked on it (refused further on, resolution failed, client
     * gone): nothing was spent, so its tokens are given back with its slot; it still counts as a request.
     */
    public void release() {
        if (done.compareAndSet(false, true)) {
            try {
                admission.settle(0);
            } finally {
                admission.release();
            }
        }
    }
}
