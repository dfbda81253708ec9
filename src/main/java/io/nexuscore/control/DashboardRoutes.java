package io.nexuscore.control;

import io.nexuscore.http.Problems;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The operator dashboard: {@code GET /} (the page) and {@code GET /ui/{asset}} (its scripts and
 * styles), plain files from the jar's {@code dashboard/} folder. The page reads the API it is served
 * next to, same origin, with the bearer token the operator types in.
 *
 * <p>Only one path segment of letters, digits and '-' with a known extension names an asset: no
 * directory listing, no '..', nothing outside the folder. Every answer carries a Content Security
 * Policy that allows this origin only (no inline script, no CDN), and {@code no-cache} with an ETag
 * so a browser revalidates after an upgrade instead of running a stale script against a new API.
 */
final class DashboardRoutes {

    static final String RESOURCE_DIR = "dashboard/";
    static final String INDEX = "index.html";
    static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
    static final String CACHE_CONTROL = "no-cache";

    private static final Pattern ASSET = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}\\.(html|js|css|svg|png)");
    private static final Map<String, String> CONTENT_TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "svg", "image/svg+xml",
            "png", "image/png");

    /** A file as served: its bytes, type and entity tag. */
    private record Asset(Buffer body, String contentType, String etag) {
    }

    private final Vertx vertx;
    /** Files read so far; the jar does not change under a running router. Misses are not kept. */
    private final Map<String, Asset> cache = new ConcurrentHashMap<>();

    private DashboardRoutes(Vertx vertx) {
        this.vertx = vertx;
    }

    /** Adds GET / and GET /ui/:asset to the control plane's router. */
    static void mount(Router router, Vertx vertx) {
        DashboardRoutes routes = new DashboardRoutes(vertx);
        router.get("/").handler(ctx -> routes.serve(ctx, INDEX));
        router.get("/ui/:asset").handler(ctx -> routes.serve(ctx, ctx.pathParam("asset")));
    }

    private void serve(RoutingContext ctx, String name) {
        Matcher m = name == null ? null : ASSET.matcher(name);
        if (m == null || !m.matches()) {
            notFound(ctx);
            return;
        }
        Asset cached = cache.get(name);
        if (cached != null) {
            send(ctx, cached);
            return;
        }
        // Reading from the jar is file I/O: a worker's job, once per file.
        vertx.executeBlocking(() -> load(name, CONTENT_TYPES.get(m.group(1))), false).onComplete(ar -> {
            if (ar.failed()) {
                ctx.fail(ar.cause());
            } else if (ar.result().isEmpty()) {
                notFound(ctx);
            } else {
                Asset asset = ar.result().get();
                cache.putIfAbsent(name, asset);
                send(ctx, asset);
            }
        });
    }

    private static Optional<Asset> load(String name, String contentType) {
        try (InputStream in = DashboardRoutes.class.getClassLoader().getResourceAsStream(RESOURCE_DIR + name)) {
            if (in == null) {
                return Optional.empty();
            }
            byte[] bytes = in.readAllBytes();
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
            String etag = "\"" + HexFormat.of().formatHex(digest, 0, 12) + "\"";
            return Optional.of(new Asset(Buffer.buffer(bytes), contentType, etag));
        } catch (IOException e) {
            throw new UncheckedIOException("reading dashboard resource " + RESOURCE_DIR + name, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    private static void send(RoutingContext ctx, Asset asset) {
        HttpServerResponse response = securityHeaders(ctx.response())
                .putHeader(HttpHeaders.CACHE_CONTROL, CACHE_CONTROL)
                .putHeader(HttpHeaders.ETAG, asset.etag());
        if (asset.etag().equals(ctx.request().getHeader(HttpHeaders.IF_NONE_MATCH))) {
            response.setStatusCode(304).end();
            return;
        }
        response.putHeader(HttpHeaders.CONTENT_TYPE, asset.contentType()).end(asset.body());
    }

    private static void notFound(RoutingContext ctx) {
        String path = ctx.request().path();
        Problems.notFound(path).send(securityHeaders(ctx.response()), path);
    }

    private static HttpServerResponse securityHeaders(HttpServerResponse response) {
        return response.putHeader("Content-Security-Policy", CSP)
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("Referrer-Policy", "no-referrer");
    }
}
