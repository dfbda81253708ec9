package io.nexuscore.tiers;

import java.util.concurrent.CompletableFuture;

/**
 * A tier backend that can pass a streamed answer ({@code stream: true}) through as it is produced
 * ({@link TierBackend#streaming()}). Backends without it answer once and the data plane wraps the
 * whole reply in a one-chunk event stream.
 */
public interface StreamingBackend {

    /** Fails with {@link io.nexuscore.tiers.TierFailure} when the stream cannot be opened. */
    CompletableFuture<UpstreamStream> openStream(TierRequest request);
}
