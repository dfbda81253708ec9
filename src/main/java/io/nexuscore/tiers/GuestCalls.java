package io.nexuscore.tiers;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestAbi;
import io.nexuscore.tiers.wasm.GuestTrap;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One tier's guest calls, wherever they run (a tier worker or an event loop): instantiating the
 * guest, calling it under a deadline, turning its answer into a reply or its trap into a failure,
 * and putting its memory back afterwards. Thread-safe; each instance is called by one thread at a time.
 */
final class GuestCalls {

    private static final System.Logger LOG = System.getLogger(GuestCalls.class.getName());

    private static final TierRequest WARM_UP = TierRequest.of("summarize", "warm up the instance before it serves");

    private final TierConfig config;
    private final WasmEngine.GuestModule module;
    private final AtomicInteger nextInstanceId = new AtomicInteger();
    private final Timer instantiateTime;
    private final Timer callTime;
    private final Map<GuestTrap.Kind, Counter> traps;
    /** Memory of a freshly instantiated guest, restored after every call; null until the first instance. */
    private volatile byte[] pristine;

    GuestCalls(TierConfig config, WasmEngine.GuestModule module, Timer instantiateTime, Timer callTime,
               Map<GuestTrap.Kind, Counter> traps) {
        this.config = config;
        this.module = module;
        this.instantiateTime = instantiateTime;
        this.callTime = callTime;
        this.traps = traps;
    }

    /** A fresh instance under the tier's memory ceiling; the first one's memory becomes the reset image. */
    CoreInstance instantiate() {
        long t0 = System.nanoTime();
        CoreInstance instance = module.instantiate(nextInstanceId.incrementAndGet(), (int) config.memoryLimitPages());
        instantiateTime.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        if (pristine == null) {
            synchronized (this) {
                if (pristine == null) {
                    pristine = instance.read(0, instance.memoryPages() * (int) TierConfig.WASM_PAGE);
                }
            }
        }
        return instance;
    }

    /**
     * Runs one request through {@code instance}, interrupted after {@code deadlineMs}.
     *
     * @throws GuestTrap        the guest trapped, ran out of memory or past the deadline
     * @throws RuntimeException a host-side error (reported by {@link #hostError})
     */
    TierReply call(CoreInstance instance, TierRequest request, long deadlineMs) throws GuestTrap {
        long t0 = System.nanoTime();
        try {
            GuestAbi.GuestAnswer answer = instance.withDeadline(deadlineMs, () -> GuestAbi.call(instance, request));
            return new TierReply(answer.text(), answer.observedTier(), answer.observedScore(),
                    answer.promptTokens(), answer.completionTokens(), config.model());
        } finally {
            callTime.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Runs one short request through a fresh instance, off the request path, and resets it, so that
     * whatever an instance's first call sets up is not paid on an event loop, and an instance that
     * cannot serve never reaches one. Not counted in the metrics.
     *
     * @return false when the instance failed the warm-up or cannot be reset (it must not be used)
     */
    boolean warmUp(CoreInstance instance, String who) {
        try {
            instance.withDeadline(config.deadlineMs(), () -> GuestAbi.call(instance, WARM_UP));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, who + ": warm-up call failed on instance " + instance.id() + ": " + e);
            return false;
        }
        if (!reset(instance, who)) {
            byte[] image = pristine;
            LOG.log(System.Logger.Level.WARNING, who + ": instance " + instance.id() + " cannot be reset after its warm-up call: "
                    + "memory is " + instance.memoryPages() + " pages, its image "
                    + (image == null ? "unknown" : image.length / TierConfig.WASM_PAGE + " pages")
                    + " (a guest whose ordinary call grows memory is replaced after every request)");
            return false;
        }
        return true;
    }

    /** The failure a trap answers, counted under its kind; CLOSED for an interrupt while the pool shuts down. */
    TierFailure trapped(GuestTrap trap, boolean closing) {
        traps.get(trap.kind()).increment();
        TierFailure.Kind kind = closing && trap.kind() != GuestTrap.Kind.MEMORY_LIMIT ? TierFailure.Kind.CLOSED : failureKind(trap.kind());
        return new TierFailure(kind, label() + ": " + trap.getMessage(), trap);
    }

    TierFailure hostError(CoreInstance instance, Throwable e) {
        return new TierFailure(TierFailure.Kind.GUEST_TRAP, label() + ": host error calling instance " + instance.id() + ": " + e, e);
    }

    /**
     * Leaves nothing of the request just served in {@code instance}: its memory goes back to the image
     * of a fresh instance. False when the instance must be replaced instead: the call grew memory past
     * that image (memory cannot shrink, and zeroing a large grown range costs more than instantiating)
     * or the reset failed.
     */
    boolean reset(CoreInstance instance, String who) {
        byte[] image = pristine;
        try {
            if (image != null && (long) instance.memoryPages() * TierConfig.WASM_PAGE == image.length) {
                instance.restore(image);
                return true;
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, who + ": cannot reset instance " + instance.id() + ": " + e);
        }
        return false;
    }

    static TierFailure.Kind failureKind(GuestTrap.Kind kind) {
        return switch (kind) {
            case MEMORY_LIMIT -> TierFailure.Kind.MEMORY_LIMIT;
            case DEADLINE -> TierFailure.Kind.DEADLINE;
            case TRAP -> TierFailure.Kind.GUEST_TRAP;
        };
    }

    private String label() {
        return "tier " + config.tier().label();
    }
}
