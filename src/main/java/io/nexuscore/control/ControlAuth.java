package io.nexuscore.control;

import io.nexuscore.config.ControlConfig;
import io.nexuscore.config.PrivateFile;
import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemType;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Who may drive the control plane. Every request: the Host header (and Origin, when a browser sends
 * one) must name this machine's loopback names or a configured name, so a web page cannot reach the
 * API through DNS rebinding or a cross-site request. Mutating calls, the reads that expose tenants,
 * events and fleet addresses, and off loopback every call: {@code Authorization: Bearer <token>}, where the token is the configured
 * one or, by default, one generated at first start into a 0600 file in the state directory.
 * {@code control.auth: "none"} turns the token off (loopback only) and is logged at every start.
 *
 * <p>{@link #resolve} reads or creates the token file: call it on a worker thread.
 */
final class ControlAuth {

    /** Set on a request that presented the right token (never with auth "none"). */
    static final String AUTHENTICATED = "nx.control.authenticated";

    private static final System.Logger LOG = System.getLogger(ControlAuth.class.getName());
    private static final int TOKEN_BYTES = 32;
    private static final long MAX_TOKEN_FILE_BYTES = 4096;

    private final ControlConfig config;
    private final Optional<byte[]> token;
    private final Set<String> allowedHosts;
    private final BiConsumer<RoutingContext, Problem> reject;

    private ControlAuth(ControlConfig config, Optional<byte[]> token, BiConsumer<RoutingContext, Problem> reject) {
        this.config = config;
        this.token = token;
        this.reject = reject;
        Set<String> hosts = new HashSet<>(ControlConfig.LOOPBACK_NAMES);
        hosts.addAll(config.allowedHosts());
        if (!config.host().equals("0.0.0.0") && !config.host().equals("::")) {
            hosts.add(config.host().toLowerCase(Locale.ROOT));
        }
        this.allowedHosts = Set.copyOf(hosts);
    }

    /** The configured token, the saved one, or a new one saved 0600; none when auth is off (logged). */
    static ControlAuth resolve(ControlConfig config, BiConsumer<RoutingContext, Problem> reject) {
        if (config.auth() == ControlConfig.Auth.NONE) {
            LOG.log(Level.WARNING, "control.auth is \"none\": mutating control calls are not authenticated "
                    + "(listener " + config.host() + ", loopback only; Host and Origin are still checked)");
            return new ControlAuth(config, Optional.empty(), reject);
        }
        String token = config.bearerToken().orElseGet(() -> tokenFromFile(config.tokenFile()));
        return new ControlAuth(config, Optional.of(token.getBytes(StandardCharsets.UTF_8)), reject);
    }

    String describe() {
        return token.isEmpty() ? "none" : "bearer";
    }

    private static String tokenFromFile(Path file) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            try {
                String token = HexFormat.of().formatHex(randomBytes());
                PrivateFile.create(file, (token + "\n").getBytes(StandardCharsets.UTF_8));
                // Printed once, at the start that created it; later starts only read it.
                LOG.log(Level.INFO, "control token generated at " + file + " (mode 0600): send it as "
                        + "'Authorization: Bearer <token>' on control calls");
                return token;
            } catch (FileAlreadyExistsException exists) {
                return readPrivate(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("control token file " + file + ": " + e.getMessage(), e);
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[TOKEN_BYTES];
        new SecureRandom().nextBytes(b);
        return b;
    }

    /** The token file must be root's own regular file that nobody else can read: a leaked token is no token. */
    private static String readPrivate(Path file) throws IOException {
        String token = PrivateFile.read(file, MAX_TOKEN_FILE_BYTES).strip();
        if (token.length() < 16) {
            throw new IOException(file + " holds no token of at least 16 characters");
        }
        return token;
    }

    // --- handlers -------------------------------------------------------------------------------

    /** First handler of every route: Host and Origin name this machine or a configured name. */
    void checkHostAndOrigin(RoutingContext ctx) {
        // authority(): the Host header in HTTP/1.x, :authority in HTTP/2 (an h2c upgrade has no Host).
        io.vertx.core.net.HostAndPort authority = ctx.request().authority();
        String host = authority == null ? null : authority.toString();
        Optional<String> hostName = authority == null ? Optional.empty() : hostPart(authority.host().contains(":")
                && !authority.host().startsWith("[") ? "[" + authority.host() + "]" : authority.host());
        if (hostName.isEmpty() || !allowedHosts.contains(hostName.get())) {
            reject.accept(ctx, ProblemType.FORBIDDEN_HOST.problem("Host " + (host == null ? "(none)" : "'" + host + "'")
                    + " is not a name of this control plane (loopback names or control.allowedHosts)"));
            return;
        }
        String origin = ctx.request().getHeader(HttpHeaders.ORIGIN);
        if (origin != null && !originAllowed(origin)) {
            reject.accept(ctx, ProblemType.FORBIDDEN_ORIGIN.problem("Origin '" + origin
                    + "' is not a name of this control plane: browsers on other sites cannot drive it"));
            return;
        }
        ctx.next();
    }

    /** Mutating calls. */
    void requireToken(RoutingContext ctx) {
        if (token.isEmpty()) {
            ctx.next();
            return;
        }
        String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
        boolean bearer = header != null && header.regionMatches(true, 0, "Bearer ", 0, 7);
        byte[] presented = bearer ? header.substring(7).strip().getBytes(StandardCharsets.UTF_8) : new byte[0];
        // MessageDigest.isEqual does not stop at the first differing byte: no timing oracle on the token.
        if (bearer && MessageDigest.isEqual(presented, token.get())) {
            ctx.put(AUTHENTICATED, Boolean.TRUE);
            ctx.next();
            return;
        }
        ctx.response().putHeader("WWW-Authenticate", header == null
                ? "Bearer realm=\"nexuscore-control\""
                : "Bearer realm=\"nexuscore-control\", error=\"invalid_token\"");
        reject.accept(ctx, ProblemType.UNAUTHORIZED.problem(header == null
                ? "this endpoint requires 'Authorization: Bearer <token>' (the token file is " + config.tokenFile() + ")"
                : "the bearer token is not the configured one"));
    }

    /**
     * Off loopback, every route needs the token: thresholds, tiers, metrics (tenant ids) and health
     * included. Only the dashboard's static files stay open (they hold no data, and a browser cannot
     * add a header to a page load; the page asks for the token before its first call).
     */
    void requireTokenOffLoopback(RoutingContext ctx) {
        String path = ctx.normalizedPath();
        if (config.loopbackOnly() || path.equals("/") || path.startsWith("/ui/")) {
            ctx.next();
        } else {
            requireToken(ctx);
        }
    }

    private boolean originAllowed(String origin) {
        try {
            URI uri = new URI(origin);
            String scheme = uri.getScheme();
            return uri.getHost() != null && ("http".equals(scheme) || "https".equals(scheme))
                    && allowedHosts.contains(stripBrackets(uri.getHost().toLowerCase(Locale.ROOT)));
        } catch (URISyntaxException e) {
            return false; // "null" (sandboxed frames, file: pages) and junk
        }
    }

    /** The name in a Host header: "[::1]:8081" is ::1, "localhost:8081" is localhost. */
    static Optional<String> hostPart(String header) {
        String h = header.strip().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            return end < 0 ? Optional.empty() : Optional.of(h.substring(1, end));
        }
        int colon = h.indexOf(':');
        if (colon >= 0 && h.indexOf(':', colon + 1) >= 0) {
            return Optional.empty(); // a bare IPv6 address must be bracketed
        }
        String name = colon < 0 ? h : h.substring(0, colon);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1); // "localhost." is localhost
        }
        return name.isEmpty() ? Optional.empty() : Optional.of(name);
    }

    private static String stripBrackets(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }
}
