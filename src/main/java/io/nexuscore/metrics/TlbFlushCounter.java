package io.nexuscore.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.ProbeObject;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * TLB flushes of one process, per reason, counted in the kernel by nexus_tlb.bpf.o on the
 * tlb:tlb_flush tracepoint and exported as {@code nexus_tlb_flushes_total{reason}}.
 */
public final class TlbFlushCounter implements KernelReading {

    static final String OBJECT_RESOURCE = "bpf/nexus_tlb.bpf.o";
    static final String MAP = "tlb_flushes";

    private final ProbeObject probe;
    private final BpfMap flushes;
    private final AtomicLongArray last = new AtomicLongArray(TlbFlushReason.values().length);
    private final List<Meter> meters = new ArrayList<>();
    private MeterRegistry registry;

    private TlbFlushCounter(ProbeObject probe) {
        this.probe = probe;
        this.flushes = probe.map(MAP, 4, BpfMap.perCpuSize(Long.BYTES));
    }

    /** Loads and attaches the probe, counting flushes of the process {@code tgid} (0: every process). */
    public static TlbFlushCounter attach(long tgid) {
        byte[] rodata = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt((int) tgid).array();
        ProbeObject probe = ProbeObject.attach(OBJECT_RESOURCE, rodata);
        try {
            return new TlbFlushCounter(probe);
        } catch (RuntimeException e) {
            probe.close();
            throw e;
        }
    }

    /** The router's own process. */
    public static TlbFlushCounter attachToThisProcess() {
        return attach(ProcessHandle.current().pid());
    }

    /** Flushes per reason now (syscalls: one lookup per reason). */
    public Map<TlbFlushReason, Long> counts() {
        Map<TlbFlushReason, Long> counts = new EnumMap<>(TlbFlushReason.class);
        for (TlbFlushReason reason : TlbFlushReason.values()) {
            counts.put(reason, flushes.lookup(PerCpu.key(reason.ordinal()))
                    .map(v -> PerCpu.sumU64(v, Long.BYTES, 0)).orElse(0L));
        }
        return counts;
    }

    /** Registers {@code nexus_tlb_flushes_total{reason}} reading the last {@link #refresh}. */
    public synchronized TlbFlushCounter bindTo(MeterRegistry registry) {
        this.registry = registry;
        for (TlbFlushReason reason : TlbFlushReason.values()) {
            meters.add(FunctionCounter.builder("nexus.tlb.flushes", last, a -> a.get(reason.ordinal()))
                    .tag("reason", reason.label())
                    .description("TLB flushes in the router's process by reason (tlb:tlb_flush, counted in the kernel)")
                    .register(registry));
        }
        return this;
    }

    @Override
    public void refresh() {
        counts().forEach((reason, n) -> last.set(reason.ordinal(), n));
    }

    @Override
    public synchronized void close() {
        if (registry != null) {
            meters.forEach(registry::remove);
        }
        meters.clear();
        probe.close();
    }
}
