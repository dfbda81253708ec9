package io.nexuscore.http;

import java.util.Collection;

/** The problem types shared by both listeners. Slugs are part of the API contract: never rename. */
public final class Problems {

    private Problems() {
    }

    public static Problem malformedHttp(int status, String detail) {
        return new Problem("malformed-http", "Malformed HTTP request", status, detail);
    }

    public static Problem malformedJson(String detail) {
        return new Problem("malformed-json", "Request body is not valid JSON", 400, detail);
    }

    public static Problem invalidRequest(String detail) {
        return new Problem("invalid-request", "Request body does not match the expected shape", 400, detail);
    }

    public static Problem bodyTooLarge(long limit) {
        return new Problem("body-too-large", "Request body too large", 413,
                "request bodies are limited to " + limit + " bytes");
    }

    public static Problem notFound(String path) {
        return new Problem("not-found", "No such endpoint", 404, "no endpoint at " + path);
    }

    public static Problem methodNotAllowed(String method, String path, Collection<String> allowed) {
        return new Problem("method-not-allowed", "Method not allowed", 405,
                method + " is not allowed on " + path)
                .withHeader("Allow", String.join(", ", allowed));
    }

    public static Problem internal(String detail) {
        return new Problem("internal", "Internal error", 500, detail);
    }
}
