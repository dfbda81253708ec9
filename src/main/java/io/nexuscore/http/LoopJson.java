package io.nexuscore.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.util.RecyclerPool;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * The JSON factory of the streaming reads that run on the event loops for every request (the chat
 * fields' search, the upstream answer's read).
 *
 * <p>Why not {@code new JsonFactory()}: its parsers take their buffers from a JDK ThreadLocal, and on
 * an event loop that ThreadLocal's map is shared with Vert.x, Netty and the JDK's own, so the lookup
 * often misses its first probe (0.18 µs per request in the c=64 profile of 2026-12-06, beside the
 * parse itself). Here the buffers come from a Netty FastThreadLocal: an array index on an event loop,
 * Netty's own fallback elsewhere. The recycler is held strongly, not through a SoftReference as
 * Jackson's is: one per thread, holding the largest buffers a parse on that thread asked for.
 *
 * <p>The request body's first parse stays on Vert.x's factory ({@code JacksonCodec}): the tree parse
 * that decides what it declines reads with Vert.x's limits, and both must see the same ones.
 */
public final class LoopJson {

    public static final JsonFactory FACTORY = JsonFactory.builder().recyclerPool(new LoopRecyclerPool()).build();

    private LoopJson() {
    }

    /** One BufferRecycler per thread, never released: the ThreadLocalPoolBase contract. */
    private static final class LoopRecyclerPool extends RecyclerPool.ThreadLocalPoolBase<BufferRecycler> {

        private static final long serialVersionUID = 1L;

        private static final FastThreadLocal<BufferRecycler> OWN = new FastThreadLocal<>() {
            @Override
            protected BufferRecycler initialValue() {
                return new BufferRecycler();
            }
        };

        @Override
        public BufferRecycler acquirePooled() {
            return OWN.get();
        }
    }
}
