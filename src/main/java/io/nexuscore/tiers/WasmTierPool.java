package io.nexuscore.tiers;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.ConfigException;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.ChicoryEngine;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import io.nexuscore.tiers.wasm.WasmtimeEngine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tier of sandboxed Wasm workers: N instances of the tier's guest, each owned by one worker thread
 * (so an instance never runs on two threads), behind one bounded queue. {@link #submit} only offers
 * to the queue: a full queue fails fast with QUEUE_FULL. Each call runs under the tier's deadline
 * and memory ceiling; after any trap or interrupt the worker answers the failure, throws the instance
 * away and instantiates a fresh one before it takes more work, while the other workers keep serving.
 * Worker threads pin themselves to the tier's CPU set.
 *
 * <p>A queued request leaves the queue when its caller cancels the reply future (the client went
 * away) or when it has waited the tier's {@code maxQueueWaitMs} (QUEUE_TIMEOUT); a worker never runs a
 * request whose reply is already settled. After every call the instance's memory is put back to the
 * image it had when instantiated (or, when the call grew memory, the instance is replaced), so no
 * request can read what an earlier one - another tenant's - left in guest memory.
 *
 * <p>With {@code eventLoopBudgetMs} above 0, a request submitted on an event loop is answered there by
 * that loop's own instance when it can be (see {@link EventLoopGuests}); the workers take the rest.
 *
 * <p>This class is the pool: its queue, admission, queue-wait expiry, state, meters and shutdown;
 * each worker thread with its instance is a {@link TierWorker}.
 */
public final class WasmTierPool implements TierBackend {

    private static final System.Logger LOG = System.getLogger(WasmTierPool.class.getName());
    /**
     * nexus_tier_call_seconds is a histogram with these buckets (histogram_quantile across instances),
     * not client-side percentiles: those record every call into three HdrHistogram recorders whose
     * shared phaser counters the event loops and workers fight over (0.1-0.2 us more per nano request
     * here). From a nano call (2-6 us) to a large one's runaway limit.
     */
    private static final Duration[] CALL_BUCKETS = {
        Duration.ofNanos(2_000), Duration.ofNanos(5_000), Duration.ofNanos(10_000), Duration.ofNanos(20_000),
        Duration.ofNanos(50_000), Duration.ofNanos(100_000), Duration.ofNanos(200_000), Duration.ofNanos(500_000),
        Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(20),
        Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(500),
        Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10)};
    /**
     * How long one idle worker polls for the next job before parking (see {@link SpinThenParkQueue}):
     * longer than one client's round trip here (~70 µs at c=1), so a client's next request finds a
     * worker awake. Measured A/B (wrk, 2026-12-02): 150 µs against 50 µs gave c=1 P50 67-68 µs
     * against 80-126 µs and the same rate at c=64. The price: at most one spinning worker per tier,
     * for at most this long after the tier's last job.
     */
    private static final long HANDOFF_SPIN_NANOS = 150_000;
    /** The queue-wait sweep runs every maxQueueWaitMs / SWEEPS_PER_WAIT, within these bounds (ms). */
    private static final long SWEEPS_PER_WAIT = 4;
    private static final long SWEEP_MIN_MS = 1;
    private static final long SWEEP_MAX_MS = 25;
    private static final long CLOSE_WAIT_MS = 5_000;

    private final TierConfig config;
    private final WasmEngine engine;
    private final GuestCalls guests;
    private final EventLoopGuests onEventLoops;
    private final int maxPages;
    private final SpinThenParkQueue<Job> queue;
    private final List<TierWorker> workers = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Whether workers pin themselves: the tier has a CPU set and this machine has all of it. */
    private final boolean pinWorkers;
    private final TierWorker.Counts counts;

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final Counter rejected;
    private final Counter expired;
    private final Counter skipped;
    private final long maxQueueWaitNanos;
    private ScheduledFuture<?> sweep;

    /** A queued request; the pool's sweep fails it when it waits too long (see {@link #expireOverdue}). */
    static final class Job {
        final TierRequest request;
        final CompletableFuture<TierReply> reply;
        final long enqueuedNanos;

        Job(TierRequest request, CompletableFuture<TierReply> reply, long enqueuedNanos) {
            this.request = request;
            this.reply = reply;
            this.enqueuedNanos = enqueuedNanos;
        }
    }

    /** Runs the queue-wait sweeps of every pool: one daemon thread, the tasks only touch queues. */
    private static final ScheduledExecutorService EXPIRY = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tier-queue-expiry");
        t.setDaemon(true);
        return t;
    });

    /**
     * Starts the pool for a Wasm tier: builds the configured engine, loads and compiles the guest
     * module, instantiates every instance and starts the workers.
     *
     * @throws ConfigException when the tier has an upstream, its module cannot be found, or its engine
     *                         cannot hold its memory ceiling (naming the field)
     */
    public static WasmTierPool start(TierConfig config, MeterRegistry registry) {
        checkFits(config);
        long tickMs = WasmEngine.deadlineTickMs(config.deadlineMs());
        if (config.eventLoopBudgetMs() > 0) {
            // An event-loop call is interrupted within one tick after its budget.
            tickMs = Math.min(tickMs, Math.max(WasmEngine.FINEST_DEADLINE_TICK_MS, config.eventLoopBudgetMs()));
        }
        WasmEngine engine = switch (config.engine()) {
            case CHICORY -> new ChicoryEngine(tickMs);
            case WASMTIME -> new WasmtimeEngine(tickMs);
        };
        try {
            return new WasmTierPool(config, engine, loadModule(config), registry);
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    /**
     * A pool on a given engine, which the pool owns and closes. Package-private: tests decorate
     * engines through it; everything else goes through {@link #start}.
     */
    WasmTierPool(TierConfig config, WasmEngine engine, byte[] wasm, MeterRegistry registry) {
        String field = "tiers." + config.tier().label();
        if (config.upstream().isPresent()) {
            throw new ConfigException(field + ".upstream is set: this tier forwards upstream and has no Wasm pool");
        }
        if (config.memoryLimitPages() > engine.maxMemoryPages()) {
            throw new ConfigException(tooBig(config, engine.name(), engine.maxMemoryPages()));
        }
        this.config = config;
        this.engine = engine;
        this.maxPages = (int) config.memoryLimitPages();
        this.maxQueueWaitNanos = TimeUnit.MILLISECONDS.toNanos(config.maxQueueWaitMs());
        this.queue = new SpinThenParkQueue<>(config.queueCapacity(), HANDOFF_SPIN_NANOS);
        this.registry = registry;
        this.pinWorkers = CpuAffinity.usable(config.cpus(), "tier " + config.tier().label());

        String tier = config.tier().label();
        Timer queueWait = register(Timer.builder("nexus.tier.queue.wait")
                .description("Time a request waits for a free worker (the pool semaphore wait)")
                .tag("tier", tier).publishPercentiles(0.5, 0.99).register(registry));
        Timer instantiateTime = register(Timer.builder("nexus.tier.instantiate")
                .description("Time to instantiate a guest (cold start)")
                .tag("tier", tier).tag("engine", engine.name()).publishPercentiles(0.5, 0.99).register(registry));
        Timer callTime = register(Timer.builder("nexus.tier.call")
                .description("Time inside the guest for one request")
                .tag("tier", tier).serviceLevelObjectives(CALL_BUCKETS).register(registry));
        rejected = register(Counter.builder("nexus.tier.rejected")
                .description("Requests refused because the tier's queue was full")
                .tag("tier", tier).register(registry));
        expired = register(Counter.builder("nexus.tier.queue.expired")
                .description("Requests failed with 503 after waiting the tier's maxQueueWaitMs in its queue")
                .tag("tier", tier).register(registry));
        skipped = register(Counter.builder("nexus.tier.cancelled")
                .description("Queued requests dropped because their client went away before a worker took them")
                .tag("tier", tier).register(registry));
        counts = new TierWorker.Counts(queueWait, skipped, new AtomicLong(), new AtomicLong(), new AtomicLong(),
                new AtomicInteger());
        Map<GuestTrap.Kind, Counter> traps = new EnumMap<>(GuestTrap.Kind.class);
        for (GuestTrap.Kind kind : GuestTrap.Kind.values()) {
            traps.put(kind, register(Counter.builder("nexus.tier.traps")
                    .description("Guest calls that ended in a trap, by kind")
                    .tag("tier", tier).tag("kind", GuestCalls.failureKind(kind).label()).register(registry)));
        }
        Counter[] loopCalls = new Counter[3];
        String[] outcomes = {"answered", "failed", "over_budget"};
        for (int i = 0; i < outcomes.length; i++) {
            loopCalls[i] = register(Counter.builder("nexus.tier.event_loop.calls")
                    .description("Guest calls made on an event loop (eventLoopBudgetMs > 0), by outcome; over_budget"
                            + " calls were interrupted at the budget and handed to the tier's workers")
                    .tag("tier", tier).tag("outcome", outcomes[i]).register(registry));
        }
        register(Gauge.builder("nexus.tier.instances.live", this, p -> p.liveInstances())
                .description("Guest instances ready or serving").tag("tier", tier).register(registry));
        register(Gauge.builder("nexus.tier.event_loop.instances", this,
                        p -> p.onEventLoops != null ? p.onEventLoops.liveInstances() : 0)
                .description("Guest instances owned by event loops (eventLoopBudgetMs > 0)").tag("tier", tier).register(registry));
        register(Gauge.builder("nexus.tier.memory.pages", this, p -> p.memoryPagesInUse())
                .description("64 KiB pages held by the tier's live guest instances").tag("tier", tier).register(registry));
        register(Gauge.builder("nexus.tier.queue.depth", queue, SpinThenParkQueue::size)
                .description("Requests waiting for a worker").tag("tier", tier).register(registry));

        try {
            this.guests = new GuestCalls(config, engine.compile(config.module(), wasm), instantiateTime, callTime, traps);
            for (int i = 0; i < config.instances(); i++) {
                TierWorker w = new TierWorker(i, config, guests, queue, closed, pinWorkers, counts);
                w.instantiateFirst();
                workers.add(w);
            }
        } catch (RuntimeException e) {
            workers.forEach(TierWorker::discardInstance);
            meters.forEach(registry::remove);
            throw e;
        }
        onEventLoops = config.eventLoopBudgetMs() > 0
                ? new EventLoopGuests(guests, tier, config.eventLoopBudgetMs(), loopCalls[0], loopCalls[1], loopCalls[2])
                : null;
        workers.forEach(TierWorker::start);
        long sweepMs = Math.max(SWEEP_MIN_MS, Math.min(SWEEP_MAX_MS, config.maxQueueWaitMs() / SWEEPS_PER_WAIT));
        sweep = EXPIRY.scheduleWithFixedDelay(this::expireOverdue, sweepMs, sweepMs, TimeUnit.MILLISECONDS);
        LOG.log(System.Logger.Level.INFO, "tier " + tier + ": " + config.instances() + " " + engine.name() + " instances of "
                + config.module() + ", ceiling " + maxPages + " pages, deadline " + config.deadlineMs() + " ms, queue "
                + config.queueCapacity() + (pinWorkers ? ", pinned to CPUs " + config.cpus() : "")
                + (onEventLoops != null ? ", calls on the event loops within " + config.eventLoopBudgetMs() + " ms" : ""));
    }

    private <M extends Meter> M register(M meter) {
        meters.add(meter);
        return meter;
    }

    /** Rejects a Chicory tier whose ceiling does not fit in a Java byte array, naming the field. */
    static void checkFits(TierConfig config) {
        if (config.engine() == TierConfig.Engine.CHICORY && config.memoryLimitPages() > ChicoryEngine.MAX_MEMORY_PAGES) {
            throw new ConfigException(tooBig(config, "chicory", ChicoryEngine.MAX_MEMORY_PAGES));
        }
    }

    private static String tooBig(TierConfig config, String engine, int maxPages) {
        String field = "tiers." + config.tier().label();
        return field + ".memoryLimitBytes = " + config.memoryLimitBytes() + " is more than the " + engine
                + " engine can hold (" + maxPages + " pages = " + (long) maxPages * TierConfig.WASM_PAGE
                + " bytes" + (engine.equals("chicory") ? ", the largest Java byte array it allocates" : "")
                + "); lower it or set " + field + ".engine to \"wasmtime\"";
    }

    static byte[] loadModule(TierConfig config) {
        String name = config.module();
        try (InputStream in = WasmTierPool.class.getClassLoader().getResourceAsStream(name)) {
            if (in != null) {
                return in.readAllBytes();
            }
            Path file = Path.of(name);
            if (Files.isRegularFile(file)) {
                return Files.readAllBytes(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("tiers." + config.tier().label() + ".module: cannot read " + name, e);
        }
        throw new ConfigException("tiers." + config.tier().label() + ".module: " + name
                + " is neither a classpath resource nor a file");
    }

    @Override
    public Tier tier() {
        return config.tier();
    }

    @Override
    public CompletableFuture<TierReply> submit(TierRequest request) {
        if (onEventLoops != null) {
            CompletableFuture<TierReply> answered = onEventLoops.tryCall(request);
            if (answered != null) {
                return answered;
            }
        }
        Job job = new Job(request, new CompletableFuture<>(), System.nanoTime());
        if (closed.get()) {
            return failed(TierFailure.Kind.CLOSED, "tier " + tier().label() + " is shut down");
        }
        if (!queue.offer(job)) {
            rejected.increment();
            return failed(TierFailure.Kind.QUEUE_FULL, "tier " + tier().label() + " queue is full ("
                    + config.queueCapacity() + " waiting)");
        }
        // close() may have drained the queue between our check and the offer.
        if (closed.get() && queue.remove(job)) {
            job.reply.completeExceptionally(new TierFailure(TierFailure.Kind.CLOSED, "tier " + tier().label() + " is shut down"));
            return job.reply;
        }
        job.reply.whenComplete((r, e) -> {
            // Settled while still queued: the caller cancelled (client gone). Free the slot now
            // rather than when a worker reaches it.
            if (e instanceof java.util.concurrent.CancellationException && queue.remove(job)) {
                skipped.increment();
            }
        });
        return job.reply;
    }

    /**
     * Fails the jobs that have waited maxQueueWaitMs, oldest first (the queue is FIFO, so it stops at
     * the first job still in time). Runs every maxQueueWaitMs / 4 (1 to 25 ms), so a job expires
     * within that much after its wait: one periodic task per pool instead of a timer scheduled and
     * cancelled per request (~6 µs of CPU per request on the expiry thread, measured).
     */
    private void expireOverdue() {
        long now = System.nanoTime();
        for (Job job; (job = queue.peek()) != null && now - job.enqueuedNanos >= maxQueueWaitNanos; ) {
            if (queue.remove(job)) { // false: a worker took it meanwhile
                expired.increment();
                job.reply.completeExceptionally(new TierFailure(TierFailure.Kind.QUEUE_TIMEOUT, "tier " + tier().label()
                        + ": no worker free within " + config.maxQueueWaitMs() + " ms (maxQueueWaitMs)"));
            }
        }
    }

    private static CompletableFuture<TierReply> failed(TierFailure.Kind kind, String message) {
        return CompletableFuture.failedFuture(new TierFailure(kind, message));
    }

    @Override
    public Optional<TierPoolState> poolState() {
        return Optional.of(state());
    }

    public TierPoolState state() {
        int busy = 0;
        for (TierWorker w : workers) {
            busy += w.busy() ? 1 : 0;
        }
        return new TierPoolState(tier(), engine.name(), workers.size(), liveInstances(), busy, queue.size(),
                config.queueCapacity(), memoryPagesInUse(), maxPages, counts.completed().get(), counts.failed().get(),
                (long) rejected.count(), pinWorkers && counts.pinned().get() == workers.size(),
                onEventLoops != null ? onEventLoops.liveInstances() : 0,
                onEventLoops != null ? onEventLoops.answeredCalls() : 0);
    }

    private int liveInstances() {
        int live = 0;
        for (TierWorker w : workers) {
            live += w.live() ? 1 : 0;
        }
        return live;
    }

    private long memoryPagesInUse() {
        long pages = 0;
        for (TierWorker w : workers) {
            pages += w.pages();
        }
        return pages + (onEventLoops != null ? onEventLoops.memoryPages() : 0);
    }

    /** Times an instance was found entered by two threads; the design makes this 0 (tests check it). */
    long sharedUseViolations() {
        return counts.sharedUse().get();
    }

    /** Stops the workers (a call in progress is interrupted), fails queued requests with CLOSED. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (sweep != null) {
            sweep.cancel(false);
        }
        failQueued();
        if (onEventLoops != null) {
            onEventLoops.close();
        }
        workers.forEach(TierWorker::interrupt);
        engine.interruptAll();
        for (TierWorker w : workers) {
            try {
                w.join(CLOSE_WAIT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        failQueued();
        meters.forEach(registry::remove);
        boolean stuck = workers.stream().anyMatch(TierWorker::isAlive);
        if (stuck || onEventLoops != null && onEventLoops.calling()) {
            LOG.log(System.Logger.Level.WARNING, "tier " + tier().label() + ": " + (stuck ? "a worker did not stop within "
                    + CLOSE_WAIT_MS + " ms" : "an event loop is inside a guest call") + "; engine left open");
        } else {
            engine.close();
        }
    }

    private void failQueued() {
        for (Job job; (job = queue.poll()) != null; ) {
            job.reply.completeExceptionally(new TierFailure(TierFailure.Kind.CLOSED, "tier " + tier().label() + " is shut down"));
        }
    }
}
