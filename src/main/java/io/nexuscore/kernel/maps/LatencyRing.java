package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.LibBpf;
import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;

import io.nexuscore.classify.Tier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;
import jnr.ffi.Pointer;

/**
 * The producer side of the pinned {@code latency_ringbuf} (BPF_MAP_TYPE_USER_RINGBUF): one
 * {@code struct latency_event} per completed request, drained by the kernel's timer every period.
 *
 * <p>{@link #write} never blocks on the kernel: reserve and submit are stores into shared memory
 * (no syscall). A full ring drops the event and counts it. libbpf's user_ring_buffer__reserve is
 * not thread-safe, so writers serialize on this object; the critical section is a few hundred ns.
 * One producer per ring: two processes writing the same pinned ring would corrupt it.
 */
public final class LatencyRing implements AutoCloseable {

    private static final String MAP = "latency_ringbuf";
    private static final int FNV_OFFSET = 0x811c9dc5;
    private static final int FNV_PRIME = 0x01000193;
    private static final int EVENT_SIZE = SharedStructs.LATENCY_EVENT.size();
    private static final int OFF_TIMESTAMP = SharedStructs.LATENCY_EVENT.offset("timestamp_ns");
    private static final int OFF_TENANT = SharedStructs.LATENCY_EVENT.offset("tenant_id");
    private static final int OFF_TIER = SharedStructs.LATENCY_EVENT.offset("tier");
    private static final int OFF_LATENCY = SharedStructs.LATENCY_EVENT.offset("latency_us");
    private static final int OFF_TRUE_TOKENS = SharedStructs.LATENCY_EVENT.offset("true_tokens");
    private static final int OFF_ESTIMATE = SharedStructs.LATENCY_EVENT.offset("estimate_q4");
    private static final int OFF_PAD2 = SharedStructs.LATENCY_EVENT.offset("pad2");

    private final int fd;
    private Pointer ring;
    private final LongAdder written = new LongAdder();
    private final LongAdder dropped = new LongAdder();

    private LatencyRing(int fd, Pointer ring) {
        this.fd = fd;
        this.ring = ring;
    }

    /** Maps {@code pinDir/latency_ringbuf} into this process as its producer. */
    public static LatencyRing openPinned(Path pinDir) {
        int fd = io.nexuscore.kernel.libbpf.PinDirectory.open(pinDir, MAP); // refuses a symlink
        try {
            Pointer ring = Native.check(LibBpf.get().user_ring_buffer__new(fd, null), "user_ring_buffer__new", MAP);
            return new LatencyRing(fd, ring);
        } catch (RuntimeException e) {
            LibC.get().close(fd);
            throw e;
        }
    }

    /** Queues one latency sample without a calibration sample (see {@link #write(Tier, long, int, int, int)}). */
    public boolean write(Tier tier, long latencyNanos, int tenantId) {
        return write(tier, latencyNanos, tenantId, 0, 0);
    }

    /**
     * Queues one sample for the kernel; false (and counted as dropped) when the ring is full or closed.
     *
     * @param tenantId   see {@link #tenantId}; 0 when unknown
     * @param trueTokens the guest's true prompt token count, 0 when the request carries no calibration sample
     * @param estimateQ4 the unit-gain estimate of the same prompt in 1/16 tokens (0 with trueTokens 0)
     */
    public boolean write(Tier tier, long latencyNanos, int tenantId, int trueTokens, int estimateQ4) {
        long micros = Math.min(Math.max(latencyNanos / 1000, 0), 0xffff_ffffL);
        boolean sample = trueTokens > 0 && estimateQ4 > 0;
        synchronized (this) {
            if (ring == null) {
                dropped.increment();
                return false;
            }
            Pointer event = LibBpf.get().user_ring_buffer__reserve(ring, EVENT_SIZE);
            if (event == null || event.address() == 0) {
                dropped.increment(); // ENOSPC: the kernel has not drained yet; never wait for it
                return false;
            }
            // System.nanoTime() is CLOCK_MONOTONIC on Linux, the clock of bpf_ktime_get_ns().
            event.putLong(OFF_TIMESTAMP, System.nanoTime());
            event.putInt(OFF_TENANT, tenantId);
            event.putInt(OFF_TIER, tier.wire()); // tier byte and the three pad bytes (zero)
            event.putInt(OFF_LATENCY, (int) micros);
            event.putInt(OFF_TRUE_TOKENS, sample ? trueTokens : 0);
            event.putInt(OFF_ESTIMATE, sample ? estimateQ4 : 0);
            event.putInt(OFF_PAD2, 0);
            LibBpf.get().user_ring_buffer__submit(ring, event);
        }
        written.increment();
        return true;
    }

    /** The data plane's latency hook: one sample per completed request, tenant_id = {@link #tenantId} of its tenant. */
    public LatencyRecorder recorder() {
        return (tier, misroute, tenant, latencyNanos, trueTokens, estimateQ4) ->
                write(tier, latencyNanos, tenantId(tenant), trueTokens, estimateQ4);
    }

    /** Events handed to the kernel. */
    public long written() {
        return written.sum();
    }

    /** Events dropped because the ring was full (or closed). */
    public long dropped() {
        return dropped.sum();
    }

    /**
     * A stable 32-bit id for a tenant name (FNV-1a over its UTF-8 bytes); 0 for none. Computed once
     * per request: an ASCII name (an ASCII char is its own UTF-8 byte) is hashed from its chars
     * without encoding it into a new array first.
     */
    public static int tenantId(String tenant) {
        if (tenant == null || tenant.isEmpty()) {
            return 0;
        }
        int hash = FNV_OFFSET;
        for (int i = 0; i < tenant.length(); i++) {
            char c = tenant.charAt(i);
            if (c >= 0x80) {
                return fnv1a(tenant.getBytes(StandardCharsets.UTF_8));
            }
            hash = (hash ^ c) * FNV_PRIME;
        }
        return hash;
    }

    private static int fnv1a(byte[] bytes) {
        int hash = FNV_OFFSET;
        for (byte b : bytes) {
            hash = (hash ^ (b & 0xff)) * FNV_PRIME;
        }
        return hash;
    }

    @Override
    public synchronized void close() {
        if (ring != null) {
            LibBpf.get().user_ring_buffer__free(ring);
            ring = null;
            LibC.get().close(fd);
        }
    }
}
