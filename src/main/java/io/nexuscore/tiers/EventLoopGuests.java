package io.nexuscore.tiers;

import io.micrometer.core.instrument.Counter;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.vertx.core.Context;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Guest calls made on the event loop that accepted the request, for a tier whose
 * {@code eventLoopBudgetMs} is above 0 (nano's default): no queue, no worker to wake, no hop back.
 * On a 2-core machine that handoff cost ~9 µs of a nano request's ~37 (a worker's queue take, its
 * parks and wake-ups, the switches; async-profiler, 2026-12-04), more than the guest call itself (4.5 µs).
 *
 * <p>Each event loop owns one instance of the tier's guest. It is built off the loop (until it is
 * ready, that loop's requests go to the workers) and called only by that loop, under the same memory
 * ceiling and with the same reset after every call as a worker's. A call is interrupted at the
 * budget; the request then goes to the tier's workers under the tier's full deadline, and that loop
 * sends the tier's requests to the workers for {@link #OVER_BUDGET_PAUSE_NANOS}, so a prompt that
 * makes the guest slow stalls a loop at most once per pause, for at most the budget plus one
 * deadline tick. A trap is answered as a worker answers it, and the instance is rebuilt off the loop.
 * These calls run on the event loops' CPUs, not on the tier's CPU set.
 */
final class EventLoopGuests implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(EventLoopGuests.class.getName());
    /** How long an event loop leaves the tier to its workers after one of its calls overran the budget. */
    static final long OVER_BUDGET_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Builds event-loop instances (a few ms each), so that an event loop never instantiates. */
    private static final ExecutorService BUILDER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "tier-guest-builder");
        t.setDaemon(true);
        return t;
    });

    private final GuestCalls guests;
    private final String tier;
    private final long budgetMs;
    private final Counter answered;
    private final Counter failed;
    private final Counter overBudget;
    private final ThreadLocal<LoopGuest> own = ThreadLocal.withInitial(this::newGuest);
    private final List<LoopGuest> all = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    EventLoopGuests(GuestCalls guests, String tier, long budgetMs, Counter answered, Counter failed, Counter overBudget) {
        this.guests = guests;
        this.tier = tier;
        this.budgetMs = budgetMs;
        this.answered = answered;
        this.failed = failed;
        this.overBudget = overBudget;
    }

    /**
     * Calls the guest on this thread when it is an event loop whose instance is ready: the returned
     * future is already settled. Null when the tier's workers must take the request: not an event
     * loop, its instance not built yet, the loop paused after an overrun, or this call overran the
     * budget just now.
     */
    CompletableFuture<TierReply> tryCall(TierRequest request) {
        if (closed || !Context.isOnEventLoopThread()) {
            return null;
        }
        LoopGuest guest = own.get();
        CoreInstance instance = guest.ready();
        if (instance == null) {
            return null;
        }
        guest.calling = true;
        try {
            TierReply reply = guests.call(instance, request, budgetMs);
            answered.increment();
            if (!guests.reset(instance, guest.name)) {
                guest.rebuild();
            }
            return CompletableFuture.completedFuture(reply);
        } catch (GuestTrap trap) {
            guest.rebuild();
            if (trap.kind() == GuestTrap.Kind.DEADLINE && !closed) {
                overBudget.increment();
                guest.pause();
                return null;
            }
            failed.increment();
            return CompletableFuture.failedFuture(guests.trapped(trap, closed));
        } catch (RuntimeException | Error e) {
            guest.rebuild();
            failed.increment();
            return CompletableFuture.failedFuture(guests.hostError(instance, e));
        } finally {
            guest.calling = false;
            if (closed) {
                guest.discard();
            }
        }
    }

    /** Instances built and not discarded, one per event loop that has served this tier. */
    int liveInstances() {
        int live = 0;
        for (LoopGuest g : all) {
            live += g.instance != null ? 1 : 0;
        }
        return live;
    }

    /** 64 KiB pages held by the live instances. */
    long memoryPages() {
        long pages = 0;
        for (LoopGuest g : all) {
            pages += g.instance != null ? g.pages : 0;
        }
        return pages;
    }

    /** Calls answered on event loops (traps and overruns not included). */
    long answeredCalls() {
        return (long) answered.count();
    }

    /** Whether an event loop is inside a guest call right now (the engine must stay open for it). */
    boolean calling() {
        for (LoopGuest g : all) {
            if (g.calling) {
                return true;
            }
        }
        return false;
    }

    /** Discards every idle instance; one in a call is discarded by its loop when the call ends. */
    @Override
    public void close() {
        closed = true;
        for (LoopGuest g : all) {
            if (!g.calling) {
                g.discard();
            }
        }
    }

    private LoopGuest newGuest() {
        LoopGuest guest = new LoopGuest("tier " + tier + " on " + Thread.currentThread().getName());
        all.add(guest);
        return guest;
    }

    /** One event loop's instance of the tier's guest. */
    private final class LoopGuest {
        final String name;
        /** Set by the builder, used by the loop; null while building, after a failure or once closed. */
        volatile CoreInstance instance;
        /** The instance's memory size after its last call; gauges read this, never the live store. */
        volatile int pages;
        volatile boolean building;
        /** Written by the loop; read by {@link #close} and the pool's close. */
        volatile boolean calling;
        /** Written by the loop after an overrun, by the builder after a failed build. */
        volatile long resumeAt;
        volatile boolean paused;

        LoopGuest(String name) {
            this.name = name;
        }

        /** The instance to call now, or null (see {@link #tryCall}); starts a build when there is none. */
        CoreInstance ready() {
            if (paused) {
                if (System.nanoTime() - resumeAt < 0) {
                    return null;
                }
                paused = false;
            }
            CoreInstance current = instance;
            if (current == null && !building) {
                build();
            }
            return current;
        }

        void pause() {
            resumeAt = System.nanoTime() + OVER_BUDGET_PAUSE_NANOS;
            paused = true;
            LOG.log(System.Logger.Level.WARNING, name + ": a guest call ran past eventLoopBudgetMs = " + budgetMs
                    + " ms; the request went to the tier's workers, and this event loop sends the tier's requests there for "
                    + TimeUnit.NANOSECONDS.toSeconds(OVER_BUDGET_PAUSE_NANOS) + " s");
        }

        void rebuild() {
            discard();
            if (!closed) {
                build();
            }
        }

        void discard() {
            CoreInstance old = instance;
            instance = null;
            if (old != null) {
                old.close();
            }
        }

        private void build() {
            building = true;
            BUILDER.execute(() -> {
                try {
                    if (closed) {
                        return;
                    }
                    CoreInstance fresh = guests.instantiate();
                    if (!guests.warmUp(fresh, name)) {
                        fresh.close();
                        throw new IllegalStateException("the fresh instance failed its warm-up call or its reset after it (logged above)");
                    }
                    pages = fresh.memoryPages();
                    instance = fresh;
                    if (closed) {
                        discard();
                    }
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, name + ": cannot instantiate the event loop's guest: "
                            + e.getMessage() + "; the tier's workers take its requests", e);
                    resumeAt = System.nanoTime() + OVER_BUDGET_PAUSE_NANOS;
                    paused = true;
                } finally {
                    building = false;
                }
            });
        }
    }
}
