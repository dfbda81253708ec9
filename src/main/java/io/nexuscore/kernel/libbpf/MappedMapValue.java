package io.nexuscore.kernel.libbpf;

import java.nio.ByteBuffer;

/**
 * The value of a one-entry BPF_F_MMAPABLE array map, mapped into this process: readers and writers
 * use plain (VarHandle) loads, stores and compare-and-sets on {@link #value()}, never a syscall.
 * Used for score_thresholds and token_model.
 */
public final class MappedMapValue implements AutoCloseable {

    private final MapMemory memory;

    private MappedMapValue(MapMemory memory) {
        this.memory = memory;
    }

    /**
     * Maps {@code map} (its fd stays the caller's) after checking it is the one-entry mmapable array of
     * {@code layout} this build reads; {@code what} names it in the error.
     */
    public static MappedMapValue map(BpfMap map, StructLayout layout, String what) {
        return new MappedMapValue(MapMemory.map(map, layout, 1, what + " array"));
    }

    /** The mapped value (little-endian), offset 0 is the value's first byte. */
    public ByteBuffer value() {
        return memory.buffer();
    }

    /** Retires the mapping: a racing reader or writer touches a private page, never freed memory. */
    @Override
    public void close() {
        memory.close();
    }
}
