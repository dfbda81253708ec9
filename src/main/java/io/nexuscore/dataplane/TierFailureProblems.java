package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemType;
import io.nexuscore.tiers.TierFailure;

/** The data plane's answer to a failed tier: the catalogue's problem for the failure, and when to retry. */
final class TierFailureProblems {

    private TierFailureProblems() {
    }

    /** The problem type for a failure kind; its slug is the kind's metric label. */
    static ProblemType type(TierFailure.Kind kind) {
        return switch (kind) {
            case QUEUE_FULL -> ProblemType.QUEUE_FULL;
            case MEMORY_LIMIT -> ProblemType.MEMORY_LIMIT;
            case DEADLINE -> ProblemType.DEADLINE;
            case GUEST_TRAP -> ProblemType.GUEST_TRAP;
            case QUEUE_TIMEOUT -> ProblemType.QUEUE_TIMEOUT;
            case UPSTREAM -> ProblemType.UPSTREAM;
            case UPSTREAM_REFUSED -> ProblemType.UPSTREAM_REFUSED;
            case UNAVAILABLE -> ProblemType.UNAVAILABLE;
            case CLOSED -> ProblemType.CLOSED;
        };
    }

    /**
     * The problem sent for {@code failure} in {@code tier}: the tier and the kind of failure in the
     * failure's client detail, never its full message (which may name upstream URLs or quote upstream
     * bodies). Overload and shutdown say when to come back.
     */
    static Problem of(Tier tier, TierFailure failure) {
        TierFailure.Kind kind = failure.kind();
        String prefix = "tier " + tier.label() + ": ";
        String message = String.valueOf(failure.clientDetail());
        String detail = message.startsWith(prefix) ? message : prefix + message;
        Problem problem = failure.status() == 0 ? type(kind).problem(detail)
                : new Problem(type(kind), failure.status(), detail);
        if (failure.retryAfter() != null) {
            problem = problem.withHeader("Retry-After", failure.retryAfter());
        } else if (kind == TierFailure.Kind.QUEUE_FULL || kind == TierFailure.Kind.CLOSED
                || kind == TierFailure.Kind.QUEUE_TIMEOUT || kind == TierFailure.Kind.UNAVAILABLE) {
            problem = problem.withHeader("Retry-After", "1");
        }
        return problem;
    }
}
