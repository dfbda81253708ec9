package io.nexuscore.bpf;

import com.kenai.jffi.MemoryIO;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.ThresholdStore;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.ffi.Pointer;

/**
 * The pinned {@code score_thresholds} array (one entry, BPF_F_MMAPABLE): the live thresholds the XDP
 * program reads for every verdict, mapped read-write into this process. A read is one 64-bit volatile
 * load and a write one 64-bit compare-and-set on the same memory the adaptive timer's
 * {@code __sync_val_compare_and_swap} uses, so neither loses the other's update (nexus_shared.h).
 * Writes by other tools (bpftool's syscall) land in the same bytes; the next CAS sees them.
 */
public final class ScoreThresholdsMap implements ThresholdStore, AutoCloseable {

    private static final int BPF_F_MMAPABLE = 1 << 10;
    private static final long PAGE = 4096;
    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final String name;
    private final long address;
    private final ByteBuffer value;
    private volatile boolean closed;

    private ScoreThresholdsMap(String name, long address) {
        this.name = name;
        this.address = address;
        this.value = MemoryIO.getInstance().newDirectByteBuffer(address, (int) PAGE).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Maps {@code map} (its fd stays the caller's) after checking it is the one-entry mmapable array this build writes. */
    public static ScoreThresholdsMap map(BpfMap map) {
        BpfMap.Info info = map.info();
        if (info.valueSize() != SharedStructs.SCORE_THRESHOLDS.size() || info.maxEntries() != 1
                || (info.flags() & BPF_F_MMAPABLE) == 0) {
            throw new IllegalStateException(map.name() + " is not the thresholds array this build writes: " + info
                    + ", want value " + SharedStructs.SCORE_THRESHOLDS.size() + " B x 1, BPF_F_MMAPABLE (a pin left by "
                    + "another version? ./cleanup.sh removes it)");
        }
        Pointer mapped = LibC.get().mmap(null, PAGE, LibC.PROT_READ | LibC.PROT_WRITE, LibC.MAP_SHARED, map.fd(), 0);
        if (mapped == null || mapped.address() == LibC.MAP_FAILED || mapped.address() == 0) {
            Native.check(-1, "mmap", map.name());
        }
        return new ScoreThresholdsMap(map.name(), mapped.address());
    }

    @Override
    public ThresholdState state() {
        return SharedStructs.decodeScoreThresholds((long) WORD.getVolatile(value, 0));
    }

    @Override
    public boolean compareAndSet(ThresholdState expected, ThresholdState next) {
        return WORD.compareAndSet(value, 0, SharedStructs.scoreThresholds(expected), SharedStructs.scoreThresholds(next));
    }

    /** True while the map still holds the all-zero contents of a freshly created array. */
    boolean isUnset() {
        return (long) WORD.getVolatile(value, 0) == 0;
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
