package io.nexuscore.http;

import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Objects;

/**
 * An RFC 9457 problem: the one error body both listeners send. {@code type} is stable per failure
 * (clients and the openapi.yaml key on it); {@code detail} is for humans and may change.
 *
 * @param slug    the last segment of the type URI, also the {@code type} label of error metrics
 * @param title   short, fixed summary of the problem type
 * @param status  HTTP status
 * @param detail  what went wrong with this request
 * @param headers extra response headers (Allow, Retry-After)
 */
public record Problem(String slug, String title, int status, String detail, Map<String, String> headers) {

    /** Problem types are {@code TYPE_BASE + slug}; the URI identifies, it need not resolve. */
    public static final String TYPE_BASE = "https://nexuscore.io/problems/";
    public static final String CONTENT_TYPE = "application/problem+json";

    public Problem {
        Objects.requireNonNull(slug, "slug");
        Objects.requireNonNull(title, "title");
        Objects.requireNonNull(detail, "detail");
        headers = Map.copyOf(headers);
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("a problem needs a 4xx or 5xx status, got " + status);
        }
    }

    public Problem(String slug, String title, int status, String detail) {
        this(slug, title, status, detail, Map.of());
    }

    public String type() {
        return TYPE_BASE + slug;
    }

    public Problem withHeader(String name, String value) {
        var copy = new java.util.HashMap<>(headers);
        copy.put(name, value);
        return new Problem(slug, title, status, detail, copy);
    }

    public JsonObject toJson(String instance) {
        JsonObject json = new JsonObject()
                .put("type", type())
                .put("title", title)
                .put("status", status)
                .put("detail", detail);
        if (instance != null) {
            json.put("instance", instance);
        }
        return json;
    }

    /**
     * Sends this problem as the whole response. {@code instance} is the request path (or null).
     * Does nothing when the response was already sent (a failure after the headers went out can
     * only be reported by closing the connection, which is the caller's decision).
     */
    public Future<Void> send(HttpServerResponse response, String instance) {
        if (response.headWritten() || response.ended() || response.closed()) {
            return Future.succeededFuture();
        }
        response.setStatusCode(status).putHeader("Content-Type", CONTENT_TYPE);
        headers.forEach(response::putHeader);
        return response.end(toJson(instance).toBuffer());
    }
}
