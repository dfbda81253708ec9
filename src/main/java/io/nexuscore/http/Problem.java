package io.nexuscore.http;

import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An RFC 9457 problem: the one error body both listeners send. {@code type} is stable per failure
 * (clients and the openapi.yaml key on it); {@code detail} is for humans and may change.
 *
 * @param kind    the catalogue entry: type URI, title, default status
 * @param status  HTTP status (the kind's, but for malformed-http, which says 400, 414 or 431)
 * @param detail  what went wrong with this request
 * @param field   the request field at fault, for validation failures
 * @param headers extra response headers (Allow, Retry-After)
 */
public record Problem(ProblemType kind, int status, String detail, Optional<String> field, Map<String, String> headers) {

    /** Problem types are {@code TYPE_BASE + slug}; the URI identifies, it need not resolve. */
    public static final String TYPE_BASE = ProblemType.TYPE_BASE;
    public static final String CONTENT_TYPE = ProblemType.CONTENT_TYPE;

    public Problem {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(field, "field");
        headers = Map.copyOf(headers);
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("a problem needs a 4xx or 5xx status, got " + status);
        }
    }

    public Problem(ProblemType kind, int status, String detail) {
        this(kind, status, detail, Optional.empty(), Map.of());
    }

    /** The last segment of the type URI, also the {@code type} label of error metrics. */
    public String slug() {
        return kind.slug();
    }

    public String title() {
        return kind.title();
    }

    public String type() {
        return kind.type();
    }

    public Problem withHeader(String name, String value) {
        var copy = new java.util.HashMap<>(headers);
        copy.put(name, value);
        return new Problem(kind, status, detail, field, copy);
    }

    public Problem withField(String name) {
        return new Problem(kind, status, detail, Optional.ofNullable(name), headers);
    }

    public JsonObject toJson(String instance) {
        JsonObject json = new JsonObject()
                .put("type", type())
                .put("title", title())
                .put("status", status)
                .put("detail", detail);
        field.ifPresent(f -> json.put("field", f));
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
