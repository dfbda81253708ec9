package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import java.util.Map;
import jnr.ffi.Pointer;
import org.junit.jupiter.api.Test;

/**
 * The TLB flush counter moves when a helper thread of this process storms mmap/mprotect/munmap,
 * and the same storm in another process is not counted when the probe filters on ours.
 */
class TlbFlushCounterTest {

    private static final int PAGES = 16;
    private static final long PAGE = 4096;

    @Test
    void anMprotectMunmapStormInAHelperThreadMovesTheCounter() throws Exception {
        KernelTestSupport.requireKernel();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (TlbFlushCounter counter = TlbFlushCounter.attachToThisProcess().bindTo(registry)) {
            counter.refresh();
            long before = total(counter.counts());
            double meterBefore = registry.find("nexus.tlb.flushes").functionCounters().stream()
                    .mapToDouble(c -> c.count()).sum();

            Thread storm = new Thread(() -> storm(500), "tlb-storm");
            storm.start();
            storm.join();

            counter.refresh();
            Map<TlbFlushReason, Long> after = counter.counts();
            long flushes = total(after) - before;
            // Each round changes the protection of touched pages and unmaps them: two flushes at least.
            assertTrue(flushes >= 500, "flushes during the storm: " + flushes + " " + after);
            double meterAfter = registry.find("nexus.tlb.flushes").functionCounters().stream()
                    .mapToDouble(c -> c.count()).sum();
            assertTrue(meterAfter - meterBefore >= 500, "the meter follows the map: " + meterBefore + " -> " + meterAfter);
            assertEquals(TlbFlushReason.values().length,
                    registry.find("nexus.tlb.flushes").functionCounters().size(), "one series per reason");
        }
    }

    @Test
    void anotherProcessesFlushesAreNotCounted() throws Exception {
        KernelTestSupport.requireKernel();
        // pid 1 (init) is never this JVM: a storm here must leave its counter where it was.
        try (TlbFlushCounter counter = TlbFlushCounter.attach(1)) {
            long before = total(counter.counts());
            Thread storm = new Thread(() -> storm(200), "tlb-storm");
            storm.start();
            storm.join();
            try (TlbFlushCounter ours = TlbFlushCounter.attachToThisProcess()) {
                storm(200);
                assertTrue(total(ours.counts()) >= 200, "the same storm counted for this process");
            }
            long initFlushes = total(counter.counts()) - before;
            // init may flush on its own meanwhile, but not by hundreds in these milliseconds.
            assertTrue(initFlushes < 200, "flushes counted for pid 1: " + initFlushes);
        }
    }

    /** Maps, touches, write-protects and unmaps {@link #PAGES} pages, {@code rounds} times. */
    static void storm(int rounds) {
        LibC libc = LibC.get();
        long length = PAGES * PAGE;
        for (int i = 0; i < rounds; i++) {
            Pointer p = libc.mmap(null, length, LibC.PROT_READ | LibC.PROT_WRITE,
                    LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS, -1, 0);
            if (p == null || p.address() == LibC.MAP_FAILED) {
                throw new IllegalStateException("mmap failed");
            }
            for (long off = 0; off < length; off += PAGE) {
                p.putByte(off, (byte) i);
            }
            Native.check(libc.mprotect(p, length, LibC.PROT_READ), "mprotect", "storm");
            Native.check(libc.munmap(p, length), "munmap", "storm");
        }
    }

    private static long total(Map<TlbFlushReason, Long> counts) {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }
}
