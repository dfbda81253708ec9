package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The kernel's verdict store as a whole: the mmap'ed verdict slots (the primary store) and the
 * pinned {@code routing_decisions} (IPv4) / {@code routing_decisions6} (IPv6) LRU hashes, the
 * fallback for connections that do not hold their slot (nexus_shared.h). Reads go slot first, then
 * fallback, as the TC chain and {@link KernelVerdicts} read. A fallback lookup is one bpf(2) syscall:
 * safe from any thread, blocking (keep it off event loops).
 */
public final class RoutingDecisionsMap {

    private final BpfMap ipv4;
    private final BpfMap ipv6;
    private final VerdictSlots slots4;
    private final VerdictSlots slots6;

    public RoutingDecisionsMap(BpfMap ipv4, BpfMap ipv6, VerdictSlots slots4, VerdictSlots slots6) {
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
        this.slots4 = slots4;
        this.slots6 = slots6;
    }

    /** The connection's latest verdict: its slot, else the fallback map. */
    public Optional<KernelVerdict> lookup(FourTuple connection) {
        return decision(connection).map(SharedStructs.RoutingDecision::verdict);
    }

    /** The fallback map alone (routing_decisions / routing_decisions6), by bpf(2). */
    public Optional<KernelVerdict> fallback(FourTuple connection) {
        return fallbackDecision(connection).map(SharedStructs.RoutingDecision::verdict);
    }

    /** The stored routing_decision, with its head count: the slot, else the fallback map. */
    public Optional<SharedStructs.RoutingDecision> decision(FourTuple connection) {
        long word = slotsOf(connection).read(connection);
        if (VerdictSlots.isVerdict(word)) {
            return Optional.of(SharedStructs.decodeRoutingDecision(word));
        }
        return fallbackDecision(connection);
    }

    private Optional<SharedStructs.RoutingDecision> fallbackDecision(FourTuple connection) {
        return decision(mapOf(connection).lookupDirect(SharedStructs.flowKey(connection)));
    }

    /** A fallback entry's decision; none for no entry, or one whose tier byte names no tier (a foreign write). */
    private static Optional<SharedStructs.RoutingDecision> decision(byte[] value) {
        if (value == null) {
            return Optional.empty();
        }
        long word = SharedStructs.routingDecisionWord(value);
        return VerdictSlots.isVerdict(word) ? Optional.of(SharedStructs.decodeRoutingDecision(word)) : Optional.empty();
    }

    /**
     * A snapshot of every connection's verdict, IPv4 then IPv6: the slots, then the fallback entries
     * of connections not in a slot (an entry left behind by a connection that has since taken its slot
     * back is older than the slot's). Walks every slot and entry: for tests and diagnostics, not the hot path.
     */
    public Map<FourTuple, SharedStructs.RoutingDecision> snapshot() {
        Map<FourTuple, SharedStructs.RoutingDecision> entries = new LinkedHashMap<>();
        for (VerdictSlots slots : new VerdictSlots[] {slots4, slots6}) {
            slots.forEach((tuple, word) -> entries.put(tuple, SharedStructs.decodeRoutingDecision(word)));
        }
        for (BpfMap map : new BpfMap[] {ipv4, ipv6}) {
            for (byte[] key : map.keys()) {
                map.lookup(key).flatMap(RoutingDecisionsMap::decision)
                        .ifPresent(decision -> entries.putIfAbsent(SharedStructs.decodeFlowKey(key), decision));
            }
        }
        return entries;
    }

    /** Forgets the connection's verdict: empties its slot (when it holds it) and deletes its fallback entry. */
    public boolean remove(FourTuple connection) {
        boolean fromSlot = slotsOf(connection).clear(connection);
        boolean fromFallback = mapOf(connection).delete(SharedStructs.flowKey(connection));
        return fromSlot || fromFallback;
    }

    private VerdictSlots slotsOf(FourTuple connection) {
        return connection.ipv6() ? slots6 : slots4;
    }

    private BpfMap mapOf(FourTuple connection) {
        return connection.ipv6() ? ipv6 : ipv4;
    }
}
