package io.nexuscore.tiers;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * A tier's bounded job queue with a cheaper handoff than a blocking queue's wake-up per request.
 * One idle worker at a time spins briefly for the next job (an event loop offering it then wakes
 * nobody: no futex call, no scheduler round trip); the others park, and an offer unparks one only
 * when nobody spins. A worker that takes a job while more are waiting wakes the next parked one,
 * so a burst fans out over the pool.
 *
 * <p>Why only one spinner: the tier's workers share its CPUs (and on a small machine, the event
 * loops' too); a single short spin keeps the latency of back-to-back requests low without turning
 * the pool into busy loops that would take CPU from the other tiers.
 *
 * <p>Why the spin yields ({@link Thread#yield}, sched_yield) instead of a pause instruction: under
 * load the spinner shares a core with the event loops that feed it, and a pause-loop holds that
 * core for its whole time slice. Yielding gives the core to any runnable thread and costs nothing
 * when none is (the c=1 case the spin is for). A/B on the Wasm tiers (wrk, c=64, 2 cores,
 * 2026-12-03, five runs each): router CPU per request 48-76 µs against 82-126 µs, the nano
 * workers' CPU about a third, c=64 rate 19-28k against 13-19k req/s, c=1 P50 the same (112-150 µs
 * against 107-169 µs).
 */
final class SpinThenParkQueue<T> {

    private final ArrayBlockingQueue<T> jobs;
    private final long spinNanos;
    private final AtomicBoolean spinning = new AtomicBoolean();
    private final ConcurrentLinkedDeque<Thread> parked = new ConcurrentLinkedDeque<>();
    /** Spins begun (tests); written only by the worker holding {@link #spinning}. */
    private volatile long spins;

    /**
     * @param capacity  jobs that may wait; past it {@link #offer} refuses
     * @param spinNanos how long one idle worker polls before it parks
     */
    SpinThenParkQueue(int capacity, long spinNanos) {
        this.jobs = new ArrayBlockingQueue<>(capacity);
        this.spinNanos = spinNanos;
    }

    /** Never blocks; false when full. */
    boolean offer(T job) {
        if (!jobs.offer(job)) {
            return false;
        }
        if (!spinning.get()) {
            wakeOne();
        }
        return true;
    }

    /**
     * The next job: at once if one waits, else after a spin (if no other worker spins) or a park of
     * at most {@code maxWait}; null when none came. Returns on interrupt (null) with the flag set.
     */
    T take(long maxWait, TimeUnit unit) {
        return take(maxWait, unit, true);
    }

    /**
     * As {@link #take(long, TimeUnit)}; with {@code spin} false, no spin before the park. The spin is
     * for the next of back-to-back requests (after a job); a worker that only woke from its idle park
     * to look around does not spin: on an idle tier, or one the event loops serve (nano), each of
     * those wake-ups (every worker, every 100 ms) spun the whole {@code spinNanos} for nothing.
     */
    T take(long maxWait, TimeUnit unit, boolean spin) {
        T job = jobs.poll();
        if (job == null && spin && spinning.compareAndSet(false, true)) {
            try {
                spins++; // one writer: the holder of the flag
                long until = System.nanoTime() + spinNanos;
                while ((job = jobs.poll()) == null && System.nanoTime() < until) {
                    Thread.yield(); // not onSpinWait(): see the class comment
                }
            } finally {
                spinning.set(false);
            }
        }
        if (job == null) {
            Thread me = Thread.currentThread();
            parked.addFirst(me);
            // An offer that ran before we were listed woke nobody: look once more before sleeping.
            job = jobs.poll();
            if (job == null && !me.isInterrupted()) {
                LockSupport.parkNanos(this, unit.toNanos(maxWait));
                job = jobs.poll();
            }
            parked.remove(me);
        }
        if (job != null && !jobs.isEmpty() && !spinning.get()) {
            wakeOne(); // more waiting: hand them to another worker rather than after this job
        }
        return job;
    }

    /** Spins begun so far. */
    long spins() {
        return spins;
    }

    private void wakeOne() {
        Thread sleeper = parked.pollFirst();
        if (sleeper != null) {
            LockSupport.unpark(sleeper);
        }
    }

    /** The oldest job, left in the queue (null when empty). */
    T peek() {
        return jobs.peek();
    }

    T poll() {
        return jobs.poll();
    }

    boolean remove(T job) {
        return jobs.remove(job);
    }

    int size() {
        return jobs.size();
    }
}
