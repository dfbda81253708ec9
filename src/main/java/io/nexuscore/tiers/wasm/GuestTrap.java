package io.nexuscore.tiers.wasm;

/**
 * A call into a guest ended abnormally. The instance that threw it must be discarded: its memory and
 * globals are in an unknown state.
 */
public final class GuestTrap extends RuntimeException {

    public enum Kind {
        /** memory.grow failed at the instance's ceiling (the guest said so and the host verified it). */
        MEMORY_LIMIT,
        /** The call ran past its deadline and the engine stopped it. */
        DEADLINE,
        /** Any other trap, or an answer that breaks the ABI. */
        TRAP
    }

    private final Kind kind;
    private final int memoryPages;

    public GuestTrap(Kind kind, String message, int memoryPages, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.memoryPages = memoryPages;
    }

    public Kind kind() {
        return kind;
    }

    /** The instance's memory size, in 64 KiB pages, when the call ended. */
    public int memoryPages() {
        return memoryPages;
    }
}
