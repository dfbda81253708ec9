package io.nexuscore.tiers.upstream;

import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Future;

/**
 * A tier backend that can pass a streamed answer ({@code stream: true}) through as it is produced.
 * The data plane checks for this capability; backends without it answer once and the data plane
 * wraps the whole reply in a one-chunk event stream.
 */
public interface StreamingBackend {

    /** Fails with {@link io.nexuscore.tiers.TierFailure} when the stream cannot be opened. */
    Future<UpstreamStream> openStream(TierRequest request);
}
