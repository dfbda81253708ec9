package io.nexuscore.tiers;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestTrap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker thread of a {@link WasmTierPool} and the one guest instance only it calls: takes jobs
 * from the pool's queue, answers each, then puts the instance's memory back (or replaces the
 * instance after a trap, an interrupt or a grown memory) before it takes the next.
 */
final class TierWorker implements Runnable {

    private static final System.Logger LOG = System.getLogger(TierWorker.class.getName());
    private static final long IDLE_POLL_MS = 100;

    /**
     * What a pool's workers count together and the pool reports ({@link WasmTierPool#state()}).
     *
     * @param sharedUse times an instance was found entered by two threads; the design makes it 0
     * @param pinned    workers that pinned themselves to the tier's CPU set
     */
    record Counts(Timer queueWait, Counter skipped, AtomicLong completed, AtomicLong failed, AtomicLong sharedUse,
                  AtomicInteger pinned) {
    }

    private final int index;
    private final String name;
    private final Thread thread;
    private final TierConfig config;
    private final GuestCalls guests;
    private final SpinThenParkQueue<WasmTierPool.Job> queue;
    /** The pool's: set once when it closes. */
    private final AtomicBoolean closed;
    /** Whether to pin: the tier has a CPU set and this machine has all of it. */
    private final boolean pin;
    private final Counts counts;
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Written only by this worker (and {@link #instantiateFirst} before start); read by gauges. */
    private volatile CoreInstance instance;
    /** The instance's memory size after its last call; gauges read this, never the live store. */
    private volatile int pages;

    TierWorker(int index, TierConfig config, GuestCalls guests, SpinThenParkQueue<WasmTierPool.Job> queue,
               AtomicBoolean closed, boolean pin, Counts counts) {
        this.index = index;
        this.name = "tier-" + config.tier().label() + "-worker-" + index;
        this.thread = new Thread(this, name);
        thread.setDaemon(true);
        this.config = config;
        this.guests = guests;
        this.queue = queue;
        this.closed = closed;
        this.pin = pin;
        this.counts = counts;
    }

    /** The first instance, made by the pool's constructor before the thread starts. */
    void instantiateFirst() {
        instance = guests.instantiate();
        pages = instance.memoryPages();
    }

    void start() {
        thread.start();
    }

    void interrupt() {
        thread.interrupt();
    }

    void join(long millis) throws InterruptedException {
        thread.join(millis);
    }

    boolean isAlive() {
        return thread.isAlive();
    }

    boolean live() {
        return instance != null;
    }

    /** The instance's memory pages, 0 when there is none. */
    int pages() {
        return instance != null ? pages : 0;
    }

    boolean busy() {
        return busy.get();
    }

    @Override
    public void run() {
        pin();
        try {
            boolean served = true; // the first take spins: the worker just started, work may be on its way
            while (!closed.get()) {
                // Spin for the next job only after one: not after an idle park ran out.
                WasmTierPool.Job job = queue.take(IDLE_POLL_MS, TimeUnit.MILLISECONDS, served);
                served = job != null;
                Thread.interrupted(); // close() interrupts to end the wait; the loop condition decides
                if (job != null) {
                    counts.queueWait().record(System.nanoTime() - job.enqueuedNanos, TimeUnit.NANOSECONDS);
                    if (job.reply.isDone()) {
                        counts.skipped().increment(); // cancelled between the worker's poll and here
                        continue;
                    }
                    serve(job);
                }
            }
        } finally {
            discardInstance();
        }
    }

    private void pin() {
        if (!pin) {
            return;
        }
        try {
            CpuAffinity.pinCurrentThread(config.cpus(), "tier " + config.tier().label() + " worker " + index);
            counts.pinned().incrementAndGet();
        } catch (RuntimeException | LinkageError e) {
            LOG.log(System.Logger.Level.WARNING, name + ": not pinned: " + e.getMessage());
        }
    }

    private void serve(WasmTierPool.Job job) {
        if (instance == null && !replace()) {
            counts.failed().incrementAndGet();
            job.reply.completeExceptionally(new TierFailure(TierFailure.Kind.GUEST_TRAP,
                    "tier " + config.tier().label() + ": no guest instance could be created"));
            return;
        }
        CoreInstance inst = instance;
        if (!busy.compareAndSet(false, true)) {
            counts.sharedUse().incrementAndGet();
            throw new IllegalStateException(name + ": instance " + inst.id() + " entered twice");
        }
        TierReply reply = null;
        TierFailure failure = null;
        try {
            reply = guests.call(inst, job.request, config.deadlineMs());
            pages = inst.memoryPages();
        } catch (GuestTrap trap) {
            failure = guests.trapped(trap, closed.get());
        } catch (RuntimeException | Error e) {
            failure = guests.hostError(inst, e);
        } finally {
            busy.set(false);
        }
        if (failure == null) {
            counts.completed().incrementAndGet();
            job.reply.complete(reply);
            scrub(inst);
            return;
        }
        counts.failed().incrementAndGet();
        job.reply.completeExceptionally(failure);
        // The answer is out; now rebuild, so the failed request never waits for it. The other
        // workers keep serving meanwhile.
        discardInstance();
        if (!closed.get()) {
            replace();
        }
    }

    /** Resets the instance for the next request, or replaces it (see {@link GuestCalls#reset}); after the answer. */
    private void scrub(CoreInstance inst) {
        if (guests.reset(inst, name)) {
            return;
        }
        discardInstance();
        if (!closed.get()) {
            replace();
        }
    }

    private boolean replace() {
        try {
            CoreInstance fresh = guests.instantiate();
            pages = fresh.memoryPages();
            instance = fresh;
            return true;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, name + ": cannot instantiate a replacement: " + e.getMessage(), e);
            return false;
        }
    }

    void discardInstance() {
        CoreInstance old = instance;
        instance = null;
        if (old != null) {
            old.close();
        }
    }
}
