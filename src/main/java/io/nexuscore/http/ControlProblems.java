package io.nexuscore.http;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.Optional;

/**
 * RFC 9457 problem details for the control plane. Every error response is
 * {@code application/problem+json} with a stable {@code type} per failure; validation failures also
 * name the offending {@code field}. Handlers throw {@link Problem}; the router's failure handler renders it.
 */
public final class ControlProblems {

    public static final String CONTENT_TYPE = "application/problem+json";
    /** Same base as the data plane's {@code io.nexuscore.http.Problem}: the URI identifies, it need not resolve. */
    public static final String TYPE_PREFIX = "https://nexuscore.io/problems/";

    /** The failure kinds, each with its status and a title that does not vary between occurrences. */
    public enum Kind {
        MALFORMED_JSON("malformed-json", 400, "Request body is not valid JSON"),
        INVALID_REQUEST("invalid-request", 400, "Request body does not match the expected shape"),
        INVALID_VALUE("invalid-value", 422, "A field's value is outside what the operation accepts"),
        UNAUTHORIZED("unauthorized", 401, "Missing or wrong bearer token"),
        NOT_FOUND("not-found", 404, "No such resource"),
        METHOD_NOT_ALLOWED("method-not-allowed", 405, "Method not allowed on this resource"),
        CONFLICT("conflict", 409, "The request conflicts with the current state"),
        NOT_IN_KERNEL_MODE("not-in-kernel-mode", 409, "The router runs in user-space mode"),
        BODY_TOO_LARGE("body-too-large", 413, "Request body exceeds the control plane's limit"),
        UNSUPPORTED_MEDIA_TYPE("unsupported-media-type", 415, "Unsupported Content-Type"),
        RELOAD_FAILED("reload-failed", 500, "Reloading the classifier programs failed"),
        INTERNAL("internal", 500, "Internal error");

        public final String slug;
        public final int status;
        public final String title;

        Kind(String slug, int status, String title) {
            this.slug = slug;
            this.status = status;
            this.title = title;
        }

        public String type() {
            return TYPE_PREFIX + slug;
        }
    }

    /** A failure a handler reports; {@code field} names the request field at fault, when one is. */
    public static final class Problem extends RuntimeException {
        public final Kind kind;
        public final Optional<String> field;

        public Problem(Kind kind, String detail) {
            this(kind, detail, null);
        }

        public Problem(Kind kind, String detail, String field) {
            super(detail, null, false, false);
            this.kind = kind;
            this.field = Optional.ofNullable(field);
        }
    }

    private ControlProblems() {
    }

    public static JsonObject body(Kind kind, String detail, Optional<String> field, String instance) {
        JsonObject json = new JsonObject()
                .put("type", kind.type())
                .put("title", kind.title)
                .put("status", kind.status)
                .put("detail", detail);
        field.ifPresent(f -> json.put("field", f));
        if (instance != null) {
            json.put("instance", instance);
        }
        return json;
    }

    public static void send(RoutingContext ctx, Problem problem) {
        send(ctx, problem.kind, problem.getMessage(), problem.field);
    }

    public static void send(RoutingContext ctx, Kind kind, String detail, Optional<String> field) {
        if (ctx.response().headWritten()) {
            ctx.response().reset();
            return;
        }
        ctx.response()
                .setStatusCode(kind.status)
                .putHeader(HttpHeaders.CONTENT_TYPE, CONTENT_TYPE)
                .end(body(kind, detail, field, ctx.request().path()).encode());
    }
}
