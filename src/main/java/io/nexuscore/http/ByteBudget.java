package io.nexuscore.http;

import java.util.concurrent.atomic.LongAdder;

/**
 * Bytes held at once by many readers, each bounded on its own, against one shared limit: the
 * request bodies the data plane holds while they arrive ({@code dataPlane.maxHeldBodyBytes}) and
 * the answers an upstream tier holds while they arrive. Each body or answer has its own bound, but
 * it is held until it ends or a timeout passes, so without a shared bound N slow senders each
 * sending most of a large one and then nothing hold N of them. A reader reserves each chunk before
 * it keeps it and gives back everything it reserved once, when its bytes end or are refused,
 * broken off or timed out.
 *
 * <p>A {@link LongAdder}, not one atomic word: every request reserves and gives back, on every event
 * loop, and a shared word would bounce between the cores' caches on each. The check and the add are
 * two steps, so loops racing at the bound may pass it by at most one chunk each: a bound on memory,
 * not an exact count.
 */
public final class ByteBudget {

    private final long limit;
    private final LongAdder held = new LongAdder();

    public ByteBudget(long limit) {
        this.limit = limit;
    }

    /** Takes {@code bytes} if they fit under the limit (as far as this loop can see); false, nothing taken, if not. */
    public boolean tryReserve(long bytes) {
        if (held.sum() + bytes > limit) {
            return false;
        }
        held.add(bytes);
        return true;
    }

    public void release(long bytes) {
        if (bytes != 0) {
            held.add(-bytes);
        }
    }

    public long held() {
        return held.sum();
    }

    public long limit() {
        return limit;
    }
}
