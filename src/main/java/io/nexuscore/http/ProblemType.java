package io.nexuscore.http;

/**
 * The problem catalogue of both listeners: every failure either listener reports, with its HTTP
 * status, its type URI and its title. The type URI ({@link #type()}) is part of the API contract
 * (openapi.yaml lists every one, a test keeps the two equal): never rename a slug.
 */
public enum ProblemType {
    /** Netty could not decode the request head; the status says how (400, 414, 431). */
    MALFORMED_HTTP("malformed-http", 400, "Malformed HTTP request"),
    MALFORMED_JSON("malformed-json", 400, "Request body is not valid JSON"),
    INVALID_REQUEST("invalid-request", 400, "Request body does not match the expected shape"),
    UNSUPPORTED_FEATURE("unsupported-feature", 400, "The request uses a feature this router cannot honour"),
    INVALID_TENANT("invalid-tenant", 400, "Tenant header is not a valid tenant id"),
    REQUEST_LIMIT("request-limit", 400, "Request asks for more than this tier allows"),
    UNKNOWN_FIELD("unknown-field", 400, "Request body has a field this router does not forward"),
    TENANT_KEY_REQUIRED("tenant-key-required", 401, "The named tenant authenticates with an API key"),
    INVALID_VALUE("invalid-value", 422, "A field's value is outside what the operation accepts"),
    UNAUTHORIZED("unauthorized", 401, "Missing or wrong bearer token"),
    /** Host names no name of this control plane (DNS rebinding). */
    FORBIDDEN_HOST("forbidden-host", 403, "Host header not allowed"),
    /** A browser page from another site. */
    FORBIDDEN_ORIGIN("forbidden-origin", 403, "Origin not allowed"),
    /** Reload from a file that breaks a rule: outside the reload directory, not a regular file, too big, wrong programs. */
    FORBIDDEN_OBJECT("forbidden-object", 403, "Object file not allowed"),
    NOT_FOUND("not-found", 404, "No such resource"),
    METHOD_NOT_ALLOWED("method-not-allowed", 405, "Method not allowed on this resource"),
    CONFLICT("conflict", 409, "The request conflicts with the current state"),
    NOT_IN_KERNEL_MODE("not-in-kernel-mode", 409, "The router runs in user-space mode"),
    /** GET /fleet on a router with cluster.enabled false. */
    NOT_IN_FLEET("not-in-fleet", 409, "The router is not in a fleet"),
    BODY_TOO_LARGE("body-too-large", 413, "Request body too large"),
    /** A tenant limit (requests or tokens per minute, concurrency, tokens per day) refused the request. */
    RATE_LIMITED("rate-limited", 429, "Tenant rate limit reached"),
    UNSUPPORTED_MEDIA_TYPE("unsupported-media-type", 415, "Unsupported Content-Type"),
    RELOAD_FAILED("reload-failed", 500, "Reloading the classifier programs failed"),
    /** The tier's bounded queue is full: back off and retry. */
    QUEUE_FULL("queue-full", 503, "Tier queue full"),
    /** The request waited for a worker longer than the tier's maxQueueWaitMs. */
    QUEUE_TIMEOUT("queue-timeout", 503, "Tier queue wait exceeded"),
    /** Every upstream endpoint of the tier is ejected. */
    UNAVAILABLE("unavailable", 503, "Tier has no healthy upstream"),
    /** Request bodies arriving over all connections hold dataPlane.maxHeldBodyBytes: this one would pass it. */
    BODY_BUDGET("body-budget", 503, "Request bodies in flight at their limit"),
    /** The client did not send its request body within dataPlane.bodyTimeoutMs. */
    REQUEST_TIMEOUT("request-timeout", 408, "Request body not received in time"),
    /** The tier is shutting down. */
    CLOSED("closed", 503, "Tier shutting down"),
    /** GET /events while control.maxSubscribers streams are open. */
    TOO_MANY_SUBSCRIBERS("too-many-subscribers", 503, "Too many event streams open"),
    MEMORY_LIMIT("memory-limit", 507, "Tier memory limit exceeded"),
    DEADLINE("deadline", 504, "Tier deadline exceeded"),
    GUEST_TRAP("guest-trap", 500, "Tier worker trapped"),
    UPSTREAM("upstream", 502, "Tier upstream failed"),
    UPSTREAM_REFUSED("upstream-refused", 400, "Tier upstream refused the request"),
    INTERNAL("internal", 500, "Internal error");

    /** Problem types are {@code TYPE_BASE + slug}; the URI identifies, it need not resolve. */
    public static final String TYPE_BASE = "https://nexuscore.io/problems/";
    public static final String CONTENT_TYPE = "application/problem+json";

    private final String slug;
    private final int status;
    private final String title;

    ProblemType(String slug, int status, String title) {
        this.slug = slug;
        this.status = status;
        this.title = title;
    }

    /** The last segment of the type URI, also the {@code type} label of error metrics. */
    public String slug() {
        return slug;
    }

    public int status() {
        return status;
    }

    /** Short and fixed: the same for every occurrence. */
    public String title() {
        return title;
    }

    public String type() {
        return TYPE_BASE + slug;
    }

    /** A problem of this type with this type's status. */
    public Problem problem(String detail) {
        return new Problem(this, status, detail);
    }
}
