package io.nexuscore.tiers;

/**
 * Why a tier could not answer. Each kind has one metric label; the data plane maps it to one
 * problem of the catalogue ({@code io.nexuscore.http.ProblemType}, same slug), which owns the status.
 */
public final class TierFailure extends RuntimeException {

    public enum Kind {
        /** The tier's bounded queue is full: back off and retry. */
        QUEUE_FULL("queue-full"),
        /** The guest tried to grow memory past the tier's ceiling and trapped. */
        MEMORY_LIMIT("memory-limit"),
        /** The guest ran past the tier's per-call deadline and was interrupted. */
        DEADLINE("deadline"),
        /** Any other guest trap or malformed guest answer. */
        GUEST_TRAP("guest-trap"),
        /** The request waited in the tier's queue longer than the tier's maxQueueWaitMs. */
        QUEUE_TIMEOUT("queue-timeout"),
        /** The tier's upstream could not be reached or answered garbage. */
        UPSTREAM("upstream"),
        /** The tier's upstream refused the request itself (400, 413, 422, 429): the status is passed on. */
        UPSTREAM_REFUSED("upstream-refused"),
        /** Every upstream endpoint of the tier is ejected (failing) and none is due for a probe. */
        UNAVAILABLE("unavailable"),
        /** The pool is shutting down. */
        CLOSED("closed");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        /** Stable short name: metric label and the last segment of the problem type URI. */
        public String label() {
            return label;
        }
    }

    private final Kind kind;
    private final String clientDetail;
    /** The status the client gets instead of the kind's own; 0: the kind's. */
    private final int status;
    /** Seconds the client should wait before retrying, or null. */
    private final String retryAfter;

    /** A failure whose message may be shown to the client as it is. */
    public TierFailure(Kind kind, String message) {
        this(kind, message, message, null);
    }

    public TierFailure(Kind kind, String message, Throwable cause) {
        this(kind, message, message, cause);
    }

    /**
     * A failure whose full message (upstream URLs, upstream bodies) is for the log and the event
     * stream only; the client sees {@code clientDetail}.
     */
    public TierFailure(Kind kind, String clientDetail, String message, Throwable cause) {
        this(kind, clientDetail, message, cause, 0, null);
    }

    private TierFailure(Kind kind, String clientDetail, String message, Throwable cause, int status, String retryAfter) {
        super(message, cause);
        this.kind = kind;
        this.clientDetail = clientDetail;
        this.status = status;
        this.retryAfter = retryAfter;
    }

    /**
     * An upstream's refusal of the request itself, passed on with its status (and Retry-After, in
     * whole seconds, or null); {@code clientDetail} must already be fit for the client.
     */
    public static TierFailure refusedUpstream(int status, String retryAfter, String clientDetail, String message) {
        return new TierFailure(Kind.UPSTREAM_REFUSED, clientDetail, message, null, status, retryAfter);
    }

    /** The status for the client when it is not the kind's own (an upstream's refusal); 0 otherwise. */
    public int status() {
        return status;
    }

    /** Seconds to wait before a retry, as the upstream said; null when it did not. */
    public String retryAfter() {
        return retryAfter;
    }

    public Kind kind() {
        return kind;
    }

    /** What the client may be told: the tier and the kind of failure, never an upstream's URL or body. */
    public String clientDetail() {
        return clientDetail;
    }
}
