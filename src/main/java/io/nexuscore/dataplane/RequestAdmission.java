package io.nexuscore.dataplane;

import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.Problems;
import io.nexuscore.tenants.TenantId;
import io.nexuscore.tenants.TenantKeys;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import java.util.Optional;

/**
 * The first step of every request, on its head alone: Host and Origin checked, the tenant named
 * (by its API key or, with keys optional, the tenant header), the endpoint matched, the declared
 * body size bounded. A request refused here is answered before a byte of its body is read; one
 * admitted goes on to {@link BodyReading}. {@code GET /v1/models} is answered here, it has no body.
 */
final class RequestAdmission {

    static final String ANONYMOUS_TENANT = "anonymous";
    private static final String BEARER = "Bearer ";
    /** Anthropic's API key header, taken as a tenant key like {@code Authorization: Bearer}. */
    static final String API_KEY_HEADER = "x-api-key";

    private final DataPlaneConfig config;
    private final String tenantHeader;
    private final TenantKeys keys;
    private final boolean keysRequired;
    private final long maxBodyBytes;
    private final HeadTimeouts headTimeouts;
    /** {@code GET /v1/models}'s answer, rendered once. */
    private final Buffer models;
    private final boolean embeddingsConfigured;
    private final Refusals refusals;
    private final BodyReading bodies;

    RequestAdmission(DataPlaneConfig config, TenantKeys keys, HeadTimeouts headTimeouts, Buffer models,
                     boolean embeddingsConfigured, Refusals refusals, BodyReading bodies) {
        this.config = config;
        this.tenantHeader = config.tenantHeader();
        this.keys = keys;
        this.keysRequired = config.tenantKeys() == DataPlaneConfig.TenantKeys.REQUIRED;
        this.maxBodyBytes = config.maxBodyBytes();
        this.headTimeouts = headTimeouts;
        this.models = models;
        this.embeddingsConfigured = embeddingsConfigured;
        this.refusals = refusals;
        this.bodies = bodies;
    }

    void admit(HttpServerRequest request) {
        long start = System.nanoTime();
        headTimeouts.headReceived(request);
        if (request.version() == HttpVersion.HTTP_1_1 && request.authority() == null) {
            refusals.rejectAndClose(request, Problems.malformedHttp(400,
                    "an HTTP/1.1 request needs a Host header (RFC 9112 §3.2)"));
            return;
        }
        String origin = request.getHeader("Origin");
        if (origin != null && !config.originAllowed(origin)) {
            // A page in a browser on this machine (or a DNS-rebound one) posting to the router:
            // refused before the body is read, so no model runs on its behalf.
            refusals.rejectAndClose(request, ProblemType.FORBIDDEN_ORIGIN.problem("Origin '"
                    + Problems.clientToken(origin, 100)
                    + "' may not use this data plane (dataPlane.allowedOrigins); API clients send no Origin"));
            return;
        }
        String tenant = tenant(request);
        if (tenant == null) {
            return;
        }
        Endpoint endpoint;
        try {
            endpoint = Endpoint.match(request.method(), request.path());
        } catch (ProblemException e) {
            refusals.reject(request, e.problem());
            return;
        }
        if (endpoint.kind() == Endpoint.Kind.MODELS) {
            request.response().putHeader("Content-Type", "application/json").end(models.copy());
            return;
        }
        if (endpoint.kind() == Endpoint.Kind.EMBEDDINGS && !embeddingsConfigured) {
            refusals.reject(request, ProblemType.NOT_FOUND.problem("no embeddings target is configured on this router "
                    + "(embeddings.upstream)"));
            return;
        }
        long declared = declaredLength(request);
        if (declared > maxBodyBytes) {
            // Refuse before reading a byte of it; closing is the only way not to read the rest.
            refusals.refuse(request, endpoint, start, Problems.bodyTooLarge(maxBodyBytes), true);
            return;
        }
        if (request.headers().contains("Expect", "100-continue", true)) {
            // Only now that the declared size is acceptable: a client told 413 never sends the body.
            request.response().writeContinue();
        }
        bodies.read(request, endpoint, tenant, start);
    }

    /**
     * The request's tenant: the owner of its API key ({@code Authorization: Bearer <key>}) when the
     * key is known; otherwise, with keys optional, the tenant header (or anonymous). With keys
     * required, a missing or unknown key is answered 401 here, before the body is read, and null
     * returned. The key itself is never logged, echoed or kept.
     */
    private String tenant(HttpServerRequest request) {
        String authorization = request.getHeader("Authorization");
        if (authorization != null && authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            Optional<String> owner = keys.tenantOf(authorization.substring(BEARER.length()).trim());
            if (owner.isPresent()) {
                return owner.get();
            }
        }
        // Anthropic's SDKs send the key as x-api-key: the same tenant keys, on every endpoint.
        String apiKey = request.getHeader(API_KEY_HEADER);
        if (apiKey != null) {
            Optional<String> owner = keys.tenantOf(apiKey.trim());
            if (owner.isPresent()) {
                return owner.get();
            }
            if (authorization == null) {
                authorization = apiKey; // present, not a tenant's: "invalid", not "missing", below
            }
        }
        if (keysRequired) {
            boolean missing = authorization == null;
            refusals.rejectAndClose(request, ProblemType.UNAUTHORIZED.problem(missing
                            ? "this data plane requires a tenant's API key ('Authorization: Bearer <key>' or 'x-api-key: <key>')"
                            : "the API key is not one of a tenant's")
                    .withHeader("WWW-Authenticate", missing ? "Bearer realm=\"nexuscore\""
                            : "Bearer realm=\"nexuscore\", error=\"invalid_token\""));
            return null;
        }
        String named = request.getHeader(tenantHeader);
        if (named == null) {
            return ANONYMOUS_TENANT;
        }
        // The header is a claim, not a credential: it is an id like any other, and it cannot name a
        // tenant that has keys (whose requests, counts and floors would then be anyone's to spend).
        if (!TenantId.valid(named)) {
            refusals.rejectAndClose(request, ProblemType.INVALID_TENANT.problem(tenantHeader + " must be a tenant id ("
                    + TenantId.RULE + "), got " + JsonBodies.echoed(named)));
            return null;
        }
        if (keys.has(named)) {
            refusals.rejectAndClose(request, ProblemType.TENANT_KEY_REQUIRED.problem("tenant " + named
                    + " has API keys: send one as 'Authorization: Bearer <key>' instead of naming it in " + tenantHeader)
                    .withHeader("WWW-Authenticate", "Bearer realm=\"nexuscore\""));
            return null;
        }
        return named;
    }

    /** Content-Length, or -1 when absent (chunked). Netty already refused a garbled one (400). */
    private static long declaredLength(HttpServerRequest request) {
        String header = request.getHeader("Content-Length");
        if (header == null) {
            return -1;
        }
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
