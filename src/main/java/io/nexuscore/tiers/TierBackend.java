package io.nexuscore.tiers;

import io.nexuscore.classify.Tier;
import java.util.concurrent.CompletableFuture;

/**
 * A tier's workers: a pool of Wasm instances or an OpenAI-compatible upstream. {@link #submit}
 * never blocks the caller; it completes exceptionally with {@link TierFailure}.
 */
public interface TierBackend extends AutoCloseable {

    Tier tier();

    CompletableFuture<TierReply> submit(TierRequest request);

    @Override
    void close();
}
