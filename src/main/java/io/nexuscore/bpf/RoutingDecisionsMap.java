package io.nexuscore.bpf;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The pinned {@code routing_decisions} (IPv4) and {@code routing_decisions6} (IPv6) LRU hashes: the
 * latest verdict per client 4-tuple, every connection. One lookup is one bpf(2) syscall; safe from
 * any thread, blocking (keep it off event loops). {@link KernelVerdicts} reads the mmap'ed slots
 * first and comes here on a miss.
 */
public final class RoutingDecisionsMap {

    private final BpfMap ipv4;
    private final BpfMap ipv6;

    RoutingDecisionsMap(BpfMap ipv4, BpfMap ipv6) {
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
    }

    public Optional<KernelVerdict> lookup(FourTuple connection) {
        return decision(connection).map(SharedStructs.RoutingDecision::verdict);
    }

    /** The stored routing_decision, with its head count. */
    public Optional<SharedStructs.RoutingDecision> decision(FourTuple connection) {
        byte[] value = mapOf(connection).lookupDirect(SharedStructs.flowKey(connection));
        return value == null ? Optional.empty() : Optional.of(SharedStructs.decodeRoutingDecision(value));
    }

    /** A snapshot of every entry, IPv4 then IPv6 (walks both maps: for tests and diagnostics, not the hot path). */
    public Map<FourTuple, SharedStructs.RoutingDecision> snapshot() {
        Map<FourTuple, SharedStructs.RoutingDecision> entries = new LinkedHashMap<>();
        for (BpfMap map : new BpfMap[] {ipv4, ipv6}) {
            for (byte[] key : map.keys()) {
                map.lookup(key).ifPresent(v -> entries.put(SharedStructs.decodeFlowKey(key), SharedStructs.decodeRoutingDecision(v)));
            }
        }
        return entries;
    }

    public boolean remove(FourTuple connection) {
        return mapOf(connection).delete(SharedStructs.flowKey(connection));
    }

    private BpfMap mapOf(FourTuple connection) {
        return connection.ipv6() ? ipv6 : ipv4;
    }
}
