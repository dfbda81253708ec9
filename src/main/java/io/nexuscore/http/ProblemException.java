package io.nexuscore.http;

/** Thrown by request parsing and validation; the error handler renders its problem as-is. */
public final class ProblemException extends RuntimeException {

    private final transient Problem problem;

    public ProblemException(Problem problem) {
        super(problem.detail(), null, false, false);
        this.problem = problem;
    }

    public ProblemException(ProblemType kind, String detail) {
        this(kind.problem(detail));
    }

    /** @param field the request field at fault */
    public ProblemException(ProblemType kind, String detail, String field) {
        this(kind.problem(detail).withField(field));
    }

    public Problem problem() {
        return problem;
    }
}
