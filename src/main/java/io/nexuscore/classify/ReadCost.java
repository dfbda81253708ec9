package io.nexuscore.classify;

/**
 * What one read of the live classification state (kernel verdicts, thresholds) costs; it decides
 * where the read may run.
 */
public enum ReadCost {
    /** A read of process memory (user-space mode): fine on an event loop. */
    MEMORY,
    /** A bpf(2) syscall on a pinned map (kernel mode): never on an event loop. */
    SYSCALL;

    /** True when a read must run off the event loop. */
    public boolean blocking() {
        return this == SYSCALL;
    }
}
