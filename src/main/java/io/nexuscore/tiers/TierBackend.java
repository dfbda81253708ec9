package io.nexuscore.tiers;

import io.nexuscore.classify.Tier;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A tier's workers: a pool of Wasm instances or an OpenAI-compatible upstream. {@link #submit}
 * never blocks the caller; it completes exceptionally with {@link TierFailure}. The tier edge speaks
 * {@link CompletableFuture} only (workers are plain threads); the data plane turns it into a Vert.x
 * future on the request's context in one place.
 *
 * <p>Not sealed: tests and load generators bring their own backends. What tells backends apart is
 * asked through {@link #streaming()} and {@link #poolState()}, never with instanceof.
 */
public interface TierBackend extends AutoCloseable {

    Tier tier();

    CompletableFuture<TierReply> submit(TierRequest request);

    /** Present when this backend can pass a streamed answer through as it is produced (upstreams). */
    default Optional<StreamingBackend> streaming() {
        return Optional.empty();
    }

    /** Present when this backend is a local pool whose state /tiers shows (the Wasm pools). */
    default Optional<TierPoolState> poolState() {
        return Optional.empty();
    }

    @Override
    void close();
}
