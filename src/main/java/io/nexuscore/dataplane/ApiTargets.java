package io.nexuscore.dataplane;

import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.tiers.upstream.EmbeddingsUpstream;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the data plane serves besides its tiers.
 *
 * @param moreModels models a client may name beyond the tiers' own (upstream models, the embeddings
 *                   model), as {@code GET /v1/models} lists them
 * @param embeddings the embeddings target; empty: {@code POST /v1/embeddings} answers 404
 */
public record ApiTargets(List<JsonObject> moreModels, Optional<Embeddings> embeddings) {

    public static final ApiTargets NONE = new ApiTargets(List.of(), Optional.empty());

    public ApiTargets {
        moreModels = List.copyOf(moreModels);
        Objects.requireNonNull(embeddings, "embeddings");
    }

    /**
     * @param upstreamModel the model sent upstream
     * @param listedModel   the model clients see (listed, and in answers)
     */
    public record Embeddings(EmbeddingsUpstream upstream, String upstreamModel, String listedModel,
                             MeterRegistry registry) {
    }
}
