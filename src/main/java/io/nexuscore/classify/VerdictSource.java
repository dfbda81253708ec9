package io.nexuscore.classify;

import java.util.Optional;

/** Where per-request kernel verdicts come from; empty in user-space mode. Blocking (a syscall). */
public interface VerdictSource {

    Optional<KernelVerdict> lookup(FourTuple connection);

    VerdictSource NONE = connection -> Optional.empty();
}
