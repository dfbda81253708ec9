package io.nexuscore.http;

import java.util.Collection;

/** Problems whose detail or headers both listeners phrase the same way. */
public final class Problems {

    private Problems() {
    }

    public static Problem malformedHttp(int status, String detail) {
        return new Problem(ProblemType.MALFORMED_HTTP, status, detail);
    }

    public static Problem malformedJson(String detail) {
        return ProblemType.MALFORMED_JSON.problem(detail);
    }

    public static Problem invalidRequest(String detail) {
        return ProblemType.INVALID_REQUEST.problem(detail);
    }

    public static Problem bodyTooLarge(long limit) {
        return ProblemType.BODY_TOO_LARGE.problem("request bodies are limited to " + limit + " bytes");
    }

    public static Problem notFound(String path) {
        return ProblemType.NOT_FOUND.problem("no resource at " + path);
    }

    public static Problem methodNotAllowed(String method, String path, Collection<String> allowed) {
        return ProblemType.METHOD_NOT_ALLOWED.problem(method + " is not allowed on " + path)
                .withHeader("Allow", String.join(", ", allowed));
    }

    public static Problem internal(String detail) {
        return ProblemType.INTERNAL.problem(detail);
    }

    /**
     * A client's header token fit for a problem's detail: at most {@code max} characters, printable
     * ASCII only (anything else as '?'), so an echoed value can neither be long nor carry control bytes.
     */
    public static String clientToken(String token, int max) {
        StringBuilder out = new StringBuilder(Math.min(token.length(), max));
        for (int i = 0; i < token.length() && out.length() < max; i++) {
            char c = token.charAt(i);
            out.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return out.toString();
    }
}
