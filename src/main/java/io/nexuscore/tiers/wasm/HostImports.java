package io.nexuscore.tiers.wasm;

/**
 * What the host gives a guest (interface nexus:tier/host in the WIT file), with the per-instance
 * state the host functions keep. The engines bind these to their own function types.
 */
final class HostImports {

    static final String MODULE = "nexus:tier/host@0.1.0";
    static final String NOW_NS = "now-ns";
    static final String MEMORY_EXHAUSTED = "memory-exhausted";
    static final String MEMORY_MODULE = "env";
    static final String MEMORY_NAME = "memory";
    static final String INITIALIZE = "_initialize";

    /** Pages the guest last said it could not get; -1 when it has not said so during this call. */
    private volatile long exhaustedRequestPages = -1;

    static long nowNs() {
        return System.nanoTime();
    }

    void memoryExhausted(int requestedPages) {
        exhaustedRequestPages = Integer.toUnsignedLong(requestedPages);
    }

    /**
     * Whether a trap is a memory-limit trap: the guest claimed memory.grow failed and the claim holds
     * (the pages it asked for do not fit under the ceiling). A guest cannot turn any other trap into
     * MEMORY_LIMIT by calling the import.
     */
    boolean memoryLimitHit(int pagesNow, int maxPages) {
        long asked = exhaustedRequestPages;
        return asked >= 0 && pagesNow + asked > maxPages;
    }

    void resetCall() {
        exhaustedRequestPages = -1;
    }

    GuestTrap classify(Throwable error, boolean deadlinePassed, int pagesNow, int maxPages, String what) {
        if (deadlinePassed) {
            return new GuestTrap(GuestTrap.Kind.DEADLINE, what + ": deadline passed, guest interrupted", pagesNow, error);
        }
        if (memoryLimitHit(pagesNow, maxPages)) {
            return new GuestTrap(GuestTrap.Kind.MEMORY_LIMIT, what + ": memory limit reached (" + pagesNow + " of "
                    + maxPages + " pages in use, guest asked for " + exhaustedRequestPages + " more)", pagesNow, error);
        }
        return new GuestTrap(GuestTrap.Kind.TRAP, what + ": guest trapped: " + error, pagesNow, error);
    }
}
