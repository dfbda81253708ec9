package io.nexuscore.kernel.libbpf;

import com.kenai.jffi.MemoryIO;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.ffi.Pointer;

/**
 * The values of a BPF_F_MMAPABLE array map, mapped shared into this process: the kernel's own pages,
 * read and written with plain loads and stores, never a syscall. The one place that maps such a map
 * (after checking it is the array this build reads) and retires the mapping.
 */
public final class MapMemory implements AutoCloseable {

    private static final int BPF_F_MMAPABLE = 1 << 10;
    private static final long PAGE = 4096;

    private final String name;
    private final long address;
    private final long length;
    private final ByteBuffer buffer;
    private boolean closed;

    private MapMemory(String name, long address, long length) {
        this.name = name;
        this.address = address;
        this.length = length;
        this.buffer = MemoryIO.getInstance().newDirectByteBuffer(address, (int) length).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Maps every value of {@code map} (its fd stays the caller's) after checking its value size, entry
     * count and BPF_F_MMAPABLE, so a stale pin fails here and not in a read; {@code what} names it.
     */
    public static MapMemory map(BpfMap map, StructLayout layout, int entries, String what) {
        BpfMap.Info info = map.info();
        if (info.valueSize() != layout.size() || info.maxEntries() != entries || (info.flags() & BPF_F_MMAPABLE) == 0) {
            throw new IllegalStateException(map.name() + " is not the " + what + " this build reads: " + info
                    + ", want value " + layout.size() + " B x " + entries + ", BPF_F_MMAPABLE (a pin left by "
                    + "another version? ./cleanup.sh removes it)");
        }
        long length = ((long) layout.size() * entries + PAGE - 1) / PAGE * PAGE;
        Pointer mapped = LibC.get().mmap(null, length, LibC.PROT_READ | LibC.PROT_WRITE, LibC.MAP_SHARED, map.fd(), 0);
        if (mapped == null || mapped.address() == LibC.MAP_FAILED || mapped.address() == 0) {
            Native.check(-1, "mmap", map.name());
        }
        return new MapMemory(map.name(), mapped.address(), length);
    }

    /** The mapped values, little-endian, from the first value's first byte, page-rounded. */
    public ByteBuffer buffer() {
        return buffer;
    }

    /**
     * Maps anonymous zero pages over the range instead of unmapping it: a reader or writer racing this
     * close touches a private page (a read sees zeros), never freed memory.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Pointer over = LibC.get().mmap(Pointer.wrap(LibBpf.runtime(), address), length, LibC.PROT_READ | LibC.PROT_WRITE,
                LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_FIXED, -1, 0);
        if (over == null || over.address() != address) {
            Native.check(-1, "mmap(MAP_FIXED | MAP_ANONYMOUS)", name);
        }
    }
}
