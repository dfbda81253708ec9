package io.nexuscore.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.util.RecyclerPool;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.json.jackson.JacksonCodec;
import java.io.IOException;
import java.io.UncheckedIOException;

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
 * <p>The request body's first parse reads with Vert.x's limits ({@link #REQUESTS}): the tree parse
 * that decides what it declines goes through Vert.x's own factory ({@code JacksonCodec}), and both
 * must see the same ones. Not through that factory itself: it reads a Buffer through an InputStream,
 * copying the body into the parser's buffer and probing its encoding by reads; {@link #parser}
 * reads the Buffer's own bytes in place.
 */
public final class LoopJson {

    public static final JsonFactory FACTORY = JsonFactory.builder().recyclerPool(new LoopRecyclerPool()).build();

    /**
     * Vert.x's read limits (its {@code jackson.*} system properties: nesting depth, document, number,
     * string and name lengths, token count) on this class's recycler: for a parse that must decline
     * exactly what a Vert.x {@code JsonObject} of the same body refuses.
     */
    public static final JsonFactory REQUESTS = JsonFactory.builder().streamReadConstraints(vertxLimits())
            .recyclerPool(new LoopRecyclerPool()).build();

    private LoopJson() {
    }

    private static StreamReadConstraints vertxLimits() {
        try (JsonParser p = JacksonCodec.createParser(Buffer.buffer("{}"))) {
            return p.streamReadConstraints();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A parser over {@code body}'s bytes where they lie (a heap buffer's array), else over a copy. */
    public static JsonParser parser(JsonFactory factory, Buffer body) throws IOException {
        ByteBuf bytes = body instanceof BufferInternal internal ? internal.getByteBuf() : null;
        if (bytes != null && bytes.hasArray()) {
            return factory.createParser(bytes.array(), bytes.arrayOffset() + bytes.readerIndex(), bytes.readableBytes());
        }
        return factory.createParser(body.getBytes());
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
