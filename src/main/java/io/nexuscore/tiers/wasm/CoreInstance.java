package io.nexuscore.tiers.wasm;

import java.util.function.Supplier;

/**
 * The engine-level operations {@link GuestAbi} needs from one guest instance: calling its exports,
 * copying bytes in and out of its memory. One thread at a time; after a {@link GuestTrap} the
 * instance is unusable and must be {@link #close closed}.
 */
public interface CoreInstance extends AutoCloseable {

    /** The guest exports the ABI calls. */
    enum Export {
        REALLOC("cabi_realloc"),
        HANDLE("handle"),
        POST_HANDLE("cabi_post_handle");

        private final String symbol;

        Export(String symbol) {
            this.symbol = symbol;
        }

        public String symbol() {
            return symbol;
        }
    }

    int id();

    /** Calls an export; i32 arguments and results travel as longs (low 32 bits). */
    long call(Export export, long... args) throws GuestTrap;

    void write(int address, byte[] bytes) throws GuestTrap;

    byte[] read(int address, int length) throws GuestTrap;

    /**
     * Puts memory back to {@code image}, the memory of a fresh instance of this module: afterwards
     * no byte written since this instance was created differs from it. Memory cannot shrink, so the
     * caller replaces an instance whose memory grew past the image instead.
     *
     * @throws IllegalStateException when the memory is not the image's size
     */
    void restore(byte[] image) throws GuestTrap;

    /** Current memory size in 64 KiB pages. */
    int memoryPages();

    int maxMemoryPages();

    /**
     * Runs {@code body} (calls into this instance) and stops the guest if it is still running after
     * {@code deadlineMs}: the call then throws a {@link GuestTrap} of kind DEADLINE. Must be called
     * on the thread that makes the calls.
     */
    <T> T withDeadline(long deadlineMs, Supplier<T> body) throws GuestTrap;

    @Override
    void close();
}
