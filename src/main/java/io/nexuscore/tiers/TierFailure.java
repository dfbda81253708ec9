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
        /** The tier's upstream could not be reached or answered garbage. */
        UPSTREAM("upstream"),
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
