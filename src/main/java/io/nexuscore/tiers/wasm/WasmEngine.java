package io.nexuscore.tiers.wasm;

/**
 * A Wasm runtime: compiles a guest module once, then stamps out instances of it. Implementations:
 * {@link ChicoryEngine} (pure Java, calls in nanoseconds, memories up to 32767 pages) and
 * {@link WasmtimeEngine} (native, 4 GiB memories, epoch deadlines).
 */
public interface WasmEngine extends AutoCloseable {

    /** Lower-case engine name, for logs and metric tags. */
    String name();

    /** The largest memory ceiling, in 64 KiB pages, this engine can give an instance. */
    int maxMemoryPages();

    /**
     * Parses, validates and compiles a module that follows src/main/wit/nexus-tier.wit.
     *
     * @param name a name for errors, e.g. the classpath resource
     */
    GuestModule compile(String name, byte[] wasm);

    /**
     * Stops every call running in this engine's instances, as if their deadlines had passed (used
     * when a pool shuts down). Chicory needs nothing here: the pool interrupts its worker threads.
     */
    default void interruptAll() {
    }

    @Override
    void close();

    /** A compiled module; thread-safe, instantiated many times. */
    interface GuestModule {

        String name();

        /**
         * Creates an instance whose imported memory has the given maximum, and runs its reactor
         * constructor.
         *
         * @param id             a number that names the instance in logs and errors
         * @param maxMemoryPages the memory ceiling in 64 KiB pages; growth past it fails in the guest
         */
        CoreInstance instantiate(int id, int maxMemoryPages);

        /**
         * Refuses a memory ceiling outside what the module needs ({@code minPages}) and what the
         * engine can give ({@code enginePages}), naming the engine and the module.
         */
        static void checkCeiling(String engine, String module, int maxMemoryPages, long minPages, long enginePages) {
            if (maxMemoryPages > enginePages || maxMemoryPages < minPages) {
                throw new IllegalArgumentException(engine + ": memory ceiling of " + maxMemoryPages + " pages for "
                        + module + " is outside [" + minPages + ", " + enginePages + "]");
            }
        }
    }
}
