package io.nexuscore.tiers.upstream;

import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;

/**
 * The answer body's idle timeout ({@code idleTimeoutMs}): fires once when no chunk arrived for the
 * whole period, and is cancelled the moment the answer ends.
 *
 * <p>Why not {@code HttpClientRequest.idleTimeout}: Vert.x (5.0) cancels that timer when the response
 * head arrives or the request fails, not when the body ends, so each finished exchange left a timer
 * armed for {@code idleTimeoutMs} that held the whole request (connection state, headers, buffers).
 * At thousands of requests a second that is tens of thousands of dead exchanges kept alive for
 * seconds: promoted to the old generation, they made young collections long (the data plane's
 * 100 ms P99 at one request in flight). One timer per period, re-armed for the rest when chunks
 * came, and one nanoTime per chunk.
 *
 * <p>Runs on the exchange's event loop; {@link #stop} may come from any thread.
 */
final class IdleWatchdog {

    private final Vertx vertx;
    private final long idleNanos;
    private final Runnable onIdle;
    private volatile long lastChunkNanos;
    private volatile long timer = -1;
    private volatile boolean stopped;

    IdleWatchdog(Vertx vertx, long idleMs, Runnable onIdle) {
        this.vertx = vertx;
        this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMs);
        this.onIdle = onIdle;
    }

    /**
     * Starts watching, on the exchange's event loop. The timer is armed after this turn of the loop:
     * an answer whose body came in the head's read has ended by then (the common short answer), so
     * it never schedules and cancels a timer.
     */
    void start() {
        lastChunkNanos = System.nanoTime();
        vertx.getOrCreateContext().runOnContext(v -> arm(TimeUnit.NANOSECONDS.toMillis(idleNanos)));
    }

    /** A chunk arrived. */
    void touch() {
        lastChunkNanos = System.nanoTime();
    }

    /** The answer ended (or the exchange did): the timer goes, with everything it held. */
    void stop() {
        stopped = true;
        long id = timer;
        if (id >= 0) {
            vertx.cancelTimer(id);
        }
    }

    /** For tests: stopped, and its timer no longer scheduled (cancelling it again finds nothing). */
    boolean stoppedAndDisarmed(Vertx owner) {
        return stopped && (timer < 0 || !owner.cancelTimer(timer));
    }

    private void arm(long delayMs) {
        if (!stopped) {
            timer = vertx.setTimer(Math.max(1, delayMs), id -> check());
        }
    }

    private void check() {
        if (stopped) {
            return;
        }
        long silentNanos = System.nanoTime() - lastChunkNanos;
        if (silentNanos >= idleNanos) {
            stopped = true;
            onIdle.run();
            return;
        }
        // Chunks came since the timer was set: wait out the rest of the period from the last one.
        arm(TimeUnit.NANOSECONDS.toMillis(idleNanos - silentNanos) + 1);
    }
}
