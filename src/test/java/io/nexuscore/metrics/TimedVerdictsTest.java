package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The timing wrapper must keep the data plane's syscall-free slot read: a wrapper that dropped
 * lookupInMemory would send every kernel-mode request through the blocking path.
 */
class TimedVerdictsTest {

    private static final KernelVerdict IN_SLOT = new KernelVerdict(40, Tier.NANO, 0x1234);
    private static final KernelVerdict IN_MAP = new KernelVerdict(200, Tier.LARGE, 0x5678);

    private static final VerdictSource SOURCE = new VerdictSource() {
        @Override
        public Optional<KernelVerdict> lookup(FourTuple connection) {
            return Optional.of(IN_MAP);
        }

        @Override
        public Optional<KernelVerdict> lookupInMemory(FourTuple connection) {
            return connection.srcPort() == 1 ? Optional.of(IN_SLOT) : Optional.empty();
        }
    };

    @Test
    void theSlotReadPassesThroughAndIsTimedAsAHit() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TimedVerdicts timed = new TimedVerdicts(SOURCE, registry);

        assertEquals(Optional.of(IN_SLOT), timed.lookupInMemory(tuple(1)));
        assertEquals(Optional.empty(), timed.lookupInMemory(tuple(2)), "not in a slot: the caller asks lookup()");
        assertEquals(Optional.of(IN_MAP), timed.lookup(tuple(2)));

        assertEquals(2, registry.get("nexus.verdict.read").tag("result", "hit").timer().count(),
                "the slot hit and the map lookup");
        assertEquals(0, registry.get("nexus.verdict.read").tag("result", "miss").timer().count());
    }

    private static FourTuple tuple(int srcPort) throws Exception {
        Inet4Address lo = (Inet4Address) InetAddress.getByName("127.0.0.1");
        return new FourTuple(lo, srcPort, lo, 8080);
    }
}
