package io.nexuscore.tiers.upstream;

import io.vertx.core.Vertx;
import java.lang.System.Logger.Level;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The deadlines of a tier's upstream exchanges (the whole request's {@code timeoutMs}, each attempt's
 * {@code firstByteTimeoutMs}), checked together every {@code periodMs} by one sweep instead of a
 * Vert.x timer set and cancelled per exchange and per attempt.
 *
 * <p>Why: each Vert.x timer is a scheduled task in the event loop's priority queue, an entry in
 * Vert.x's timer map and a close hook, inserted and then removed again when the answer comes in
 * time, as it nearly always does: ~5 % of the event loops' JFR samples went to scheduling and
 * cancelling them. Here watching a deadline is one lock-free queue append; settled deadlines leave
 * the queue at the next sweep. The price is precision: a deadline is noticed up to one period late.
 *
 * <p>A timer is armed only while deadlines are watched, so an idle tier sets none. The sweep runs on
 * whichever event loop armed it; {@link Deadline#passed} must hand its work to its own context.
 */
final class DeadlineSweep {

    private static final System.Logger LOG = System.getLogger(DeadlineSweep.class.getName());

    /** One watched deadline. */
    interface Deadline {

        /** When it passes, in {@link System#nanoTime()} terms. */
        long dueNanos();

        /** True once it no longer matters (answered, failed, cancelled): dropped without {@link #passed}. */
        boolean settled();

        /** Called once, on the sweep's thread, when {@link #dueNanos} passed before it settled. */
        void passed();
    }

    private final Vertx vertx;
    private final long periodMs;
    private final ConcurrentLinkedQueue<Deadline> watched = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean armed = new AtomicBoolean();

    /**
     * @param periodMs how often the watched deadlines are checked: the most a deadline is noticed late
     */
    DeadlineSweep(Vertx vertx, long periodMs) {
        if (periodMs < 1) {
            throw new IllegalArgumentException("periodMs must be at least 1, got " + periodMs);
        }
        this.vertx = vertx;
        this.periodMs = periodMs;
    }

    /**
     * The period for timeouts of these lengths: a tenth of the shortest (so a deadline is noticed at
     * most 10 % late), between 1 and 25 ms.
     */
    static long periodFor(long... timeoutsMs) {
        long shortest = Long.MAX_VALUE;
        for (long t : timeoutsMs) {
            shortest = Math.min(shortest, t);
        }
        return Math.max(1, Math.min(25, shortest / 10));
    }

    /** Watches {@code deadline} until it settles or passes. Any thread. */
    void watch(Deadline deadline) {
        watched.add(deadline);
        armIfIdle();
    }

    /** Deadlines watched and not yet dropped by a sweep (settled ones included until then). */
    int watchedCount() {
        return watched.size();
    }

    private void armIfIdle() {
        if (!armed.get() && armed.compareAndSet(false, true)) {
            try {
                vertx.setTimer(periodMs, id -> sweep());
            } catch (RuntimeException e) {
                armed.set(false); // no timer came of it (Vert.x closing): let the next watch try again
                throw e;
            }
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        for (Iterator<Deadline> it = watched.iterator(); it.hasNext(); ) {
            Deadline deadline = it.next();
            if (deadline.settled()) {
                it.remove();
            } else if (now - deadline.dueNanos() >= 0) {
                it.remove();
                try {
                    deadline.passed();
                } catch (RuntimeException e) {
                    // One broken handler must not stop the sweep: every other deadline still needs it.
                    LOG.log(Level.WARNING, "an upstream deadline's handler failed", e);
                }
            }
        }
        armed.set(false);
        // A deadline added after the loop above saw the queue is still watched: re-arm for it (its
        // own watch() may have seen the timer still armed and left it to this sweep).
        if (!watched.isEmpty()) {
            armIfIdle();
        }
    }
}
