package io.nexuscore.config;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The OpenAI-compatible servers that back a tier instead of Wasm guests: one or more endpoints,
 * balanced by least outstanding requests, each ejected after consecutive failures and re-admitted
 * through a half-open probe.
 *
 * @param baseUrls           e.g. http://127.0.0.1:9000/v1 (requests go to baseUrl + /chat/completions);
 *                           {@code baseUrl} (one endpoint) is still accepted
 * @param model              model name sent upstream
 * @param timeoutMs          whole-request timeout: connection wait, head and body (streamed too)
 * @param connectTimeoutMs   TCP connect timeout to one endpoint
 * @param firstByteTimeoutMs from sending the request to the response head
 * @param idleTimeoutMs      longest silence between two chunks of the response
 * @param maxRetries         further endpoints tried after a connect error or a 502/503, only while
 *                           no byte of the answer went to the client
 * @param ejectAfter         consecutive failures that eject an endpoint
 * @param ejectMs            how long an ejected endpoint rests before one probe request may try it
 * @param apiKey             sent as a bearer token when present (as {@code x-api-key} to a Messages API):
 *                           {@code apiKey} inline, or {@code apiKeyFile}, a file holding only the key
 *                           (root's, mode 0600, no symlink), read once at start so the key stays out
 *                           of the config file
 * @param nativeApis         the client APIs besides chat completions the servers speak themselves
 *                           ({@value #RESPONSES} at baseUrl + /responses, {@value #MESSAGES} at
 *                           baseUrl + /messages): such requests go to them as the client wrote them
 *                           instead of being translated to a chat
 */
public record UpstreamConfig(List<URI> baseUrls, String model, long timeoutMs, long connectTimeoutMs,
                             long firstByteTimeoutMs, long idleTimeoutMs, int maxRetries, int ejectAfter,
                             long ejectMs, Optional<String> apiKey, Set<String> nativeApis) {

    public static final String RESPONSES = "responses";
    public static final String MESSAGES = "messages";

    public UpstreamConfig {
        nativeApis = Set.copyOf(nativeApis);
        for (String api : nativeApis) {
            if (!api.equals(RESPONSES) && !api.equals(MESSAGES)) {
                throw new ConfigException("upstream.apis may hold \"responses\" and \"messages\", got \"" + api + "\"");
            }
        }
        baseUrls = List.copyOf(baseUrls);
        if (baseUrls.isEmpty()) {
            throw new ConfigException("upstream.baseUrls must list at least one endpoint");
        }
    }

    /** Servers that speak chat completions only. */
    public UpstreamConfig(List<URI> baseUrls, String model, long timeoutMs, long connectTimeoutMs, long firstByteTimeoutMs,
                          long idleTimeoutMs, int maxRetries, int ejectAfter, long ejectMs, Optional<String> apiKey) {
        this(baseUrls, model, timeoutMs, connectTimeoutMs, firstByteTimeoutMs, idleTimeoutMs, maxRetries, ejectAfter,
                ejectMs, apiKey, Set.of());
    }

    /** One endpoint with the default timeouts and health settings (tests and tools). */
    public UpstreamConfig(URI baseUrl, String model, long timeoutMs, Optional<String> apiKey) {
        this(List.of(baseUrl), model, timeoutMs, Math.min(timeoutMs, 5_000), timeoutMs, timeoutMs, 1, 3, 5_000,
                apiKey);
    }

    static UpstreamConfig from(Json json) {
        json.allowOnly(Set.of("baseUrl", "baseUrls", "model", "timeoutMs", "connectTimeoutMs", "firstByteTimeoutMs",
                "idleTimeoutMs", "maxRetries", "ejectAfter", "ejectMs", "apiKey", "apiKeyFile", "apis"));
        List<String> urls = json.strings("baseUrls", List.of());
        String single = json.string("baseUrl", null);
        if (single != null && !urls.isEmpty()) {
            throw new ConfigException(json.field("baseUrl") + " and " + json.field("baseUrls")
                    + " are both set; list every endpoint in baseUrls");
        }
        if (single != null) {
            urls = List.of(single);
        }
        if (urls.isEmpty()) {
            throw new ConfigException(json.field("baseUrls") + " is required (one or more http(s) URLs)");
        }
        List<URI> uris = new ArrayList<>();
        for (String url : urls) {
            uris.add(parse(json, single != null ? "baseUrl" : "baseUrls", url));
        }
        long timeout = json.number("timeoutMs", 30_000, 1, 3_600_000);
        return new UpstreamConfig(uris, json.string("model", "upstream"), timeout,
                json.number("connectTimeoutMs", Math.min(timeout, 5_000), 1, 3_600_000),
                json.number("firstByteTimeoutMs", timeout, 1, 3_600_000),
                json.number("idleTimeoutMs", timeout, 1, 3_600_000),
                json.integer("maxRetries", 1, 0, 16),
                json.integer("ejectAfter", 3, 1, 1_000),
                json.number("ejectMs", 5_000, 1, 3_600_000),
                apiKey(json),
                apis(json));
    }

    private static Set<String> apis(Json json) {
        List<String> apis = json.strings("apis", List.of());
        for (String api : apis) {
            if (!api.equals(RESPONSES) && !api.equals(MESSAGES)) {
                throw new ConfigException(json.field("apis") + " may hold \"responses\" and \"messages\" (the APIs the"
                        + " servers speak besides chat completions), got \"" + api + "\"");
            }
        }
        return Set.copyOf(apis);
    }

    /** Maximum size of an apiKeyFile: keys are tens of bytes; anything this large is not one. */
    private static final long MAX_KEY_FILE_BYTES = 16 * 1024;

    private static Optional<String> apiKey(Json json) {
        String inline = json.string("apiKey", null);
        String file = json.string("apiKeyFile", null);
        if (inline != null && file != null) {
            throw new ConfigException(json.field("apiKey") + " and " + json.field("apiKeyFile") + " are both set; use one");
        }
        if (file == null) {
            return Optional.ofNullable(inline);
        }
        String key;
        try {
            key = PrivateFile.read(java.nio.file.Path.of(file), MAX_KEY_FILE_BYTES).strip();
        } catch (java.io.IOException e) {
            throw new ConfigException(json.field("apiKeyFile") + ": " + e.getMessage(), e);
        }
        if (key.isEmpty() || key.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
            throw new ConfigException(json.field("apiKeyFile") + ": " + file
                    + " must hold one key (printable ASCII, no spaces or line breaks inside)");
        }
        return Optional.of(key);
    }

    private static URI parse(Json json, String field, String url) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(json.field(field) + " is not a URL: " + url, e);
        }
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new ConfigException(json.field(field) + " must be an http(s) URL with a host, got " + url);
        }
        return uri;
    }
}
