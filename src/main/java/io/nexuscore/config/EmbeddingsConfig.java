package io.nexuscore.config;

import java.util.Optional;
import java.util.Set;

/**
 * Where {@code POST /v1/embeddings} goes. Embeddings are not generations: they are not scored into
 * tiers but forwarded to one target, an OpenAI-compatible server pool configured as a tier's
 * upstream is (endpoints, health, retries, timeouts).
 *
 * @param upstream       the embeddings servers (requests go to baseUrl + /embeddings); empty: the
 *                       route answers 404 {@code not-found}
 * @param model          the name {@code GET /v1/models} lists for it (default: the upstream's model)
 * @param maxConnections connections per endpoint (requests in flight); more wait for one
 */
public record EmbeddingsConfig(Optional<UpstreamConfig> upstream, Optional<String> model, int maxConnections) {

    public static final EmbeddingsConfig NONE = new EmbeddingsConfig(Optional.empty(), Optional.empty(), 16);

    public EmbeddingsConfig {
        if (maxConnections < 1) {
            throw new ConfigException("embeddings.maxConnections must be >= 1, got " + maxConnections);
        }
        if (model.isPresent() && model.get().isBlank()) {
            throw new ConfigException("embeddings.model must not be blank");
        }
    }

    /** The model a client sees listed and answered with, when a target is configured. */
    public Optional<String> listedModel() {
        return upstream.map(u -> model.orElse(u.model()));
    }

    static EmbeddingsConfig from(Json json) {
        json.allowOnly(Set.of("upstream", "model", "maxConnections"));
        if (!json.has("upstream") && (json.has("model") || json.has("maxConnections"))) {
            throw new ConfigException(json.field("upstream") + " is required when embeddings is configured");
        }
        return new EmbeddingsConfig(
                json.has("upstream") ? Optional.of(UpstreamConfig.from(json.section("upstream"))) : Optional.empty(),
                Optional.ofNullable(json.string("model", null)),
                json.integer("maxConnections", 16, 1, 4096));
    }
}
