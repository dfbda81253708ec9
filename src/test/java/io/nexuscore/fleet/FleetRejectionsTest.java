package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.fleet.FleetKeys.Reason;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A stranger who keeps writing fills neither the counter (one per distinct value) nor the log (one a minute). */
class FleetRejectionsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicLong nanos = new AtomicLong(1_000);
    private final FleetRejections rejections = new FleetRejections(registry, nanos::get);

    @Test
    void everyReasonIsASeriesFromTheStart() {
        for (Reason reason : Reason.values()) {
            assertEquals(0, registry.get("nexus.fleet.rejected").tag("reason", reason.label()).counter().count());
        }
    }

    @Test
    void aValueReadAgainIsCountedOnceAndAnotherValueAgain() {
        for (int read = 0; read < 5; read++) {
            rejections.refused("m", Reason.UNSIGNED, "no MAC", "{\"version\":9}");
        }
        assertEquals(1, rejections.count(Reason.UNSIGNED));
        rejections.refused("m", Reason.UNSIGNED, "no MAC", "{\"version\":10}");
        rejections.refused("other", Reason.UNSIGNED, "no MAC", "{\"version\":10}");
        assertEquals(3, rejections.count(Reason.UNSIGNED));
        assertEquals(0, rejections.count(Reason.BAD_MAC));
    }

    @Test
    void aMapsRefusalsAreLoggedOncePerReasonAndMinute() {
        assertTrue(rejections.refused("m", Reason.UNSIGNED, "no MAC", "a"));
        assertFalse(rejections.refused("m", Reason.UNSIGNED, "no MAC", "b"), "same map and reason within a minute");
        assertTrue(rejections.refused("m", Reason.BAD_MAC, "forged", "c"), "another reason");
        assertTrue(rejections.refused("n", Reason.UNSIGNED, "no MAC", "d"), "another map");
        nanos.addAndGet(FleetRejections.LOG_EVERY.toNanos());
        assertTrue(rejections.refused("m", Reason.UNSIGNED, "no MAC", "e"), "a minute later, while it goes on");
    }
}
