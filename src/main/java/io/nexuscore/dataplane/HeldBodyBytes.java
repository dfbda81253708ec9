package io.nexuscore.dataplane;

import java.util.concurrent.atomic.LongAdder;

/**
 * The request body bytes the data plane holds while bodies arrive, over all connections and event
 * loops, against {@code dataPlane.maxHeldBodyBytes}. Each body is bounded on its own
 * ({@code maxBodyBytes}), but a body is held until it ends or {@code bodyTimeoutMs} passes, so
 * without a shared bound N clients each sending most of a large body and then nothing hold N bodies.
 * A reader reserves each chunk before it keeps it and gives back everything it reserved once, when
 * its body ends or is refused, broken off or timed out.
 *
 * <p>A {@link LongAdder}, not one atomic word: every request reserves and gives back, on every event
 * loop, and a shared word would bounce between the cores' caches on each. The check and the add are
 * two steps, so loops racing at the bound may pass it by at most one chunk each: a bound on memory,
 * not an exact count.
 */
final class HeldBodyBytes {

    private final long limit;
    private final LongAdder held = new LongAdder();

    HeldBodyBytes(long limit) {
        this.limit = limit;
    }

    /** Takes {@code bytes} if they fit under the limit (as far as this loop can see); false, nothing taken, if not. */
    boolean tryReserve(long bytes) {
        if (held.sum() + bytes > limit) {
            return false;
        }
        held.add(bytes);
        return true;
    }

    void release(long bytes) {
        if (bytes != 0) {
            held.add(-bytes);
        }
    }

    long held() {
        return held.sum();
    }

    long limit() {
        return limit;
    }
}
