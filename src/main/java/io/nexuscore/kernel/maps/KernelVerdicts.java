package io.nexuscore.kernel.maps;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.VerdictSource;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * The data plane's verdict source in kernel mode: the connection's mmap'ed verdict slot first (plain
 * loads, ~tens of ns), the fallback map routing_decisions (a bpf(2) lookup, ~µs) when the slot holds
 * another connection's key or kept changing while it was read. IPv4 and IPv6 alike. Thread-safe.
 *
 * <p>A slot verdict is as trustworthy as the map's: it is the same 8-byte value, written under a
 * seqlock, for exactly this key; and the caller verifies it against the served request
 * ({@link KernelVerdict#belongsTo}) either way.
 */
public final class KernelVerdicts implements VerdictSource {

    private final VerdictSlots slots4;
    private final VerdictSlots slots6;
    private final RoutingDecisionsMap map;
    private final LongAdder slotHits = new LongAdder();
    private final LongAdder slotMisses = new LongAdder();
    private final LongAdder inconsistentReads = new LongAdder();

    public KernelVerdicts(VerdictSlots slots4, VerdictSlots slots6, RoutingDecisionsMap map) {
        this.slots4 = slots4;
        this.slots6 = slots6;
        this.map = map;
    }

    @Override
    public Optional<KernelVerdict> lookup(FourTuple connection) {
        VerdictSlots slots = connection.ipv6() ? slots6 : slots4;
        long word = slots.read(connection);
        if (word == VerdictSlots.INCONSISTENT) {
            inconsistentReads.increment();
            // The slot is the only copy of its holder's verdict: read it again before the fallback map.
            word = slots.read(connection);
        }
        if (VerdictSlots.isVerdict(word)) {
            slotHits.increment();
            return Optional.of(SharedStructs.decodeVerdict(word));
        }
        slotMisses.increment();
        return map.fallback(connection);
    }

    /** The slot path alone: empty when the slot holds another key or changed under every retry. */
    public Optional<KernelVerdict> fromSlot(FourTuple connection) {
        long word = (connection.ipv6() ? slots6 : slots4).read(connection);
        return VerdictSlots.isVerdict(word) ? Optional.of(SharedStructs.decodeVerdict(word)) : Optional.empty();
    }

    /** Plain loads from the mmap'ed slot, so the data plane decides on its event loop; counted as a slot hit. */
    @Override
    public Optional<KernelVerdict> lookupInMemory(FourTuple connection) {
        Optional<KernelVerdict> verdict = fromSlot(connection);
        if (verdict.isPresent()) {
            slotHits.increment();
        }
        return verdict;
    }

    /** The syscall path alone: the fallback map (routing_decisions / routing_decisions6) by bpf(2). */
    public Optional<KernelVerdict> fromMap(FourTuple connection) {
        return map.fallback(connection);
    }

    /**
     * How reads went since start: served from a slot; not served from the slot (it held another key,
     * or none, or kept changing), so asked the fallback map; slot found changing at the first read.
     */
    public record Stats(long slotHits, long slotMisses, long inconsistentReads) {
    }

    public Stats stats() {
        return new Stats(slotHits.sum(), slotMisses.sum(), inconsistentReads.sum());
    }
}
