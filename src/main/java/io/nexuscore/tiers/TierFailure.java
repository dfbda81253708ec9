package io.nexuscore.tiers;

/**
 * Why a tier could not answer. Each kind maps to one HTTP status and one problem type in the data
 * plane, and to one metric label.
 */
public final class TierFailure extends RuntimeException {

    public enum Kind {
        /** The tier's bounded queue is full: back off and retry. */
        QUEUE_FULL(503, "queue-full"),
        /** The guest tried to grow memory past the tier's ceiling and trapped. */
        MEMORY_LIMIT(507, "memory-limit"),
        /** The guest ran past the tier's per-call deadline and was interrupted. */
        DEADLINE(504, "deadline"),
        /** Any other guest trap or malformed guest answer. */
        GUEST_TRAP(500, "guest-trap"),
        /** The tier's upstream could not be reached or answered garbage. */
        UPSTREAM(502, "upstream"),
        /** The pool is shutting down. */
        CLOSED(503, "closed");

        private final int httpStatus;
        private final String label;

        Kind(int httpStatus, String label) {
            this.httpStatus = httpStatus;
            this.label = label;
        }

        public int httpStatus() {
            return httpStatus;
        }

        /** Stable short name: metric label and the last segment of the problem type URI. */
        public String label() {
            return label;
        }
    }

    private final Kind kind;

    public TierFailure(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public TierFailure(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
