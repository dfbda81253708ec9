package io.nexuscore.dataplane;

import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A request body's chunks as they arrive, joined once at the end.
 *
 * <p>Why not one growing buffer: appending each chunk to a buffer that doubles copied a 64 KB body
 * about twice over and allocated and zeroed every size on the way (10 µs of a 64 KB request's CPU,
 * docs/scale.md). Here a chunk of at least {@link #KEEP_FROM} bytes is kept as it came (each is
 * already the reader's own heap copy: Vert.x copies what it reads off the socket), and
 * {@link #whole} copies each byte once into a buffer of the body's size; a body in one chunk, as
 * most are, is not copied at all.
 *
 * <p>Why smaller chunks are merged: each kept chunk costs ~150 bytes of objects beside its bytes,
 * and the held-body budget counts bytes only. A client sending its body one byte at a time
 * (chunked encoding, or tiny TCP segments) would otherwise hold a million objects for a megabyte.
 * Chunks under {@code KEEP_FROM} go into one growing tail buffer instead, so the objects held stay
 * at most one per {@code KEEP_FROM} bytes.
 */
final class BodyChunks {

    /** Chunks from this size on are kept as they came; smaller ones are merged into a tail buffer. */
    static final int KEEP_FROM = 1024;

    private Buffer first;
    private final List<Buffer> rest = new ArrayList<>(0);
    /** The last of {@link #rest} when it is a merge buffer of ours (small chunks go on into it). */
    private Buffer tail;
    private long length;

    void add(Buffer chunk) {
        length += chunk.length();
        if (first == null) {
            first = chunk;
        } else if (chunk.length() >= KEEP_FROM) {
            rest.add(chunk);
            tail = null;
        } else {
            if (tail == null) {
                tail = Buffer.buffer(2 * KEEP_FROM);
                rest.add(tail);
            }
            tail.appendBuffer(chunk);
        }
    }

    long length() {
        return length;
    }

    /** Buffers held (a test's view of the per-chunk cost). */
    int pieces() {
        return (first == null ? 0 : 1) + rest.size();
    }

    /** The whole body: its one chunk as it came, or every piece copied once into a buffer of its size. */
    Buffer whole() {
        if (first == null) {
            return Buffer.buffer(0);
        }
        if (rest.isEmpty()) {
            return first;
        }
        Buffer whole = Buffer.buffer((int) length).appendBuffer(first);
        for (Buffer piece : rest) {
            whole.appendBuffer(piece);
        }
        return whole;
    }
}
