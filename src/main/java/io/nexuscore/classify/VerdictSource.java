package io.nexuscore.classify;

import java.util.Optional;

/**
 * Where per-request kernel verdicts come from; empty in user-space mode. {@link #lookup} may block
 * (a syscall); {@link #lookupInMemory} never does.
 */
public interface VerdictSource {

    Optional<KernelVerdict> lookup(FourTuple connection);

    /**
     * The verdict when it can be read from process memory (an mmap'ed slot), without a syscall: safe
     * on an event loop. Empty means "not known this way", not "no verdict": ask {@link #lookup}.
     */
    default Optional<KernelVerdict> lookupInMemory(FourTuple connection) {
        return Optional.empty();
    }

    VerdictSource NONE = connection -> Optional.empty();
}
