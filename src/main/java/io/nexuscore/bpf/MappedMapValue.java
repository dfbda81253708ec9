package io.nexuscore.bpf;

import com.kenai.jffi.MemoryIO;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.ffi.Pointer;

/**
 * The value of a one-entry BPF_F_MMAPABLE array map, mapped into this process: readers and writers
 * use plain (VarHandle) loads, stores and compare-and-sets on {@link #value()}, never a syscall.
 * Used for score_thresholds and token_model.
 */
public final class MappedMapValue implements AutoCloseable {

    private static final int BPF_F_MMAPABLE = 1 << 10;
    private static final long PAGE = 4096;

    private final String name;
    private final long address;
    private final ByteBuffer value;
    private boolean closed;

    private MappedMapValue(String name, long address) {
        this.name = name;
        this.address = address;
        this.value = MemoryIO.getInstance().newDirectByteBuffer(address, (int) PAGE).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Maps {@code map} (its fd stays the caller's) after checking it is the one-entry mmapable array of
     * {@code layout} this build reads; {@code what} names it in the error.
     */
    public static MappedMapValue map(BpfMap map, StructLayout layout, String what) {
        BpfMap.Info info = map.info();
        if (info.valueSize() != layout.size() || info.maxEntries() != 1 || (info.flags() & BPF_F_MMAPABLE) == 0) {
            throw new IllegalStateException(map.name() + " is not the " + what + " array this build reads: " + info
                    + ", want value " + layout.size() + " B x 1, BPF_F_MMAPABLE (a pin left by "
                    + "another version? ./cleanup.sh removes it)");
        }
        Pointer mapped = LibC.get().mmap(null, PAGE, LibC.PROT_READ | LibC.PROT_WRITE, LibC.MAP_SHARED, map.fd(), 0);
        if (mapped == null || mapped.address() == LibC.MAP_FAILED || mapped.address() == 0) {
            Native.check(-1, "mmap", map.name());
        }
        return new MappedMapValue(map.name(), mapped.address());
    }

    /** The mapped value (little-endian), offset 0 is the value's first byte. */
    public ByteBuffer value() {
        return value;
    }

    /** Maps anonymous memory over the range: a racing reader or writer touches a private page, never freed memory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Pointer over = LibC.get().mmap(Pointer.wrap(LibBpf.runtime(), address), PAGE, LibC.PROT_READ | LibC.PROT_WRITE,
                LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_FIXED, -1, 0);
        if (over == null || over.address() != address) {
            Native.check(-1, "mmap(MAP_FIXED | MAP_ANONYMOUS)", name);
        }
    }
}
