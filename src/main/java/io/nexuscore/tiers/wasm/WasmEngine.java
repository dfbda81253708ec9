package io.nexuscore.tiers.wasm;

/**
 * A Wasm runtime: compiles a guest module once, then stamps out instances of it. Implementations:
 * {@link ChicoryEngine} (pure Java, calls in nanoseconds, memories up to 32767 pages) and
 * {@link WasmtimeEngine} (native, 4 GiB memories, epoch deadlines).
 */
public interface WasmEngine extends AutoCloseable {

    /** The finest deadline tick, ms: what tests and benches get from an engine's no-argument constructor. */
    long FINEST_DEADLINE_TICK_MS = 2;
    /** The coarsest deadline tick, ms: a call is never interrupted more than this after its deadline. */
    long COARSEST_DEADLINE_TICK_MS = 50;
    /** Ticks per deadline: a call is interrupted within a twentieth of its deadline after it. */
    long TICKS_PER_DEADLINE = 20;

    /**
     * How often an engine looks for calls past a {@code deadlineMs} deadline: a twentieth of it,
     * between {@value #FINEST_DEADLINE_TICK_MS} and {@value #COARSEST_DEADLINE_TICK_MS} ms. Why not
     * always the finest: the deadline thread wakes on every tick whether or not a call runs, and on a
     * small VM each wake costs tens of microseconds of CPU. At 2 ms, the Chicory watchdogs of nano and
     * small and wasmtime's epoch ticker took 1.8 µs of CPU per nano request at 34k req/s (per-thread
     * /proc figures, 2026-12-04), 5 % of the request's whole cost, to watch 2, 10 and 60 s deadlines.
     */
    static long deadlineTickMs(long deadlineMs) {
        return Math.max(FINEST_DEADLINE_TICK_MS, Math.min(COARSEST_DEADLINE_TICK_MS, deadlineMs / TICKS_PER_DEADLINE));
    }

    /** {@code tickMs} when positive; else an IllegalArgumentException naming the engine. */
    static long positiveTick(String engine, long tickMs) {
        if (tickMs <= 0) {
            throw new IllegalArgumentException(engine + ": deadline tick must be positive, not " + tickMs + " ms");
        }
        return tickMs;
    }

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
