package io.nexuscore.bpf;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.VerdictSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The pinned {@code routing_decisions} LRU hash: the latest verdict per client 4-tuple. One
 * lookup is one bpf(2) syscall; safe from any thread, blocking (keep it off event loops).
 */
public final class RoutingDecisionsMap implements VerdictSource {

    private final BpfMap map;

    RoutingDecisionsMap(BpfMap map) {
        this.map = map;
    }

    @Override
    public Optional<KernelVerdict> lookup(FourTuple connection) {
        return decision(connection).map(SharedStructs.RoutingDecision::verdict);
    }

    /** The verdict with the kernel's timestamp (CLOCK_MONOTONIC ns). */
    public Optional<SharedStructs.RoutingDecision> decision(FourTuple connection) {
        byte[] value = map.lookupDirect(SharedStructs.flowKey(connection));
        return value == null ? Optional.empty() : Optional.of(SharedStructs.decodeRoutingDecision(value));
    }

    /** A snapshot of every entry (walks the whole map: for tests and diagnostics, not the hot path). */
    public Map<FourTuple, SharedStructs.RoutingDecision> snapshot() {
        Map<FourTuple, SharedStructs.RoutingDecision> entries = new LinkedHashMap<>();
        for (byte[] key : map.keys()) {
            map.lookup(key).ifPresent(v -> entries.put(SharedStructs.decodeFlowKey(key), SharedStructs.decodeRoutingDecision(v)));
        }
        return entries;
    }

    public boolean remove(FourTuple connection) {
        return map.delete(SharedStructs.flowKey(connection));
    }
}
