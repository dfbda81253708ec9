package io.nexuscore.config;

import java.net.URI;
import java.util.Optional;
import java.util.Set;

/**
 * An OpenAI-compatible server that backs a tier instead of Wasm guests.
 *
 * @param baseUrl   e.g. http://127.0.0.1:9000/v1 (requests go to baseUrl + /chat/completions)
 * @param model     model name sent upstream
 * @param timeoutMs whole-request timeout
 * @param apiKey    sent as a bearer token when present
 */
public record UpstreamConfig(URI baseUrl, String model, long timeoutMs, Optional<String> apiKey) {

    static UpstreamConfig from(Json json) {
        json.allowOnly(Set.of("baseUrl", "model", "timeoutMs", "apiKey"));
        String url = json.string("baseUrl", null);
        if (url == null) {
            throw new ConfigException(json.field("baseUrl") + " is required");
        }
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(json.field("baseUrl") + " is not a URL: " + url, e);
        }
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new ConfigException(json.field("baseUrl") + " must be an http(s) URL with a host, got " + url);
        }
        return new UpstreamConfig(uri, json.string("model", "upstream"),
                json.number("timeoutMs", 30_000, 1, 3_600_000),
                Optional.ofNullable(json.string("apiKey", null)));
    }
}
