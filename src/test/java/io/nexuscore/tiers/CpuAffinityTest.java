package io.nexuscore.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nexuscore.kernel.libbpf.BpfException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A refused sched_setaffinity through the shared libc binding names the call, the threads and the errno. */
class CpuAffinityTest {

    @Test
    void pinningToACpuThisMachineLacksFailsWithEinval() {
        int absent = 4095;
        assertFalse(CpuAffinity.onlineCpus().get(absent), "this test needs CPU 4095 to be absent");
        // A refused call leaves the thread's mask as it was, so the runner's own thread can make it.
        BpfException failure = assertThrows(BpfException.class,
                () -> CpuAffinity.pinCurrentThread(List.of(absent), "test thread"));
        assertEquals("sched_setaffinity", failure.call());
        assertEquals(22, failure.errno(), failure.getMessage());
        assertEquals("sched_setaffinity(test thread, cpus [4095]): EINVAL (Invalid argument)", failure.getMessage());
    }
}
