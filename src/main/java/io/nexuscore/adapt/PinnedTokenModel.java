package io.nexuscore.adapt;

import com.kenai.jffi.MemoryIO;
import io.nexuscore.bpf.BpfMap;
import io.nexuscore.bpf.LibBpf;
import io.nexuscore.bpf.LibC;
import io.nexuscore.bpf.Native;
import io.nexuscore.bpf.SharedStructs;
import io.nexuscore.classify.TokenGain;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jnr.ffi.Pointer;

/**
 * The pinned {@code token_model} array (one entry, BPF_F_MMAPABLE) mapped into this process: the
 * gain of the prompt token estimate that the XDP program applies and the kernel's calibration stage
 * refits. {@link #gainQ10()} is one 32-bit load from the shared page (opaque: never cached across
 * calls, no fence, no syscall), so the Java scorer reads it per request and stays equal to the kernel.
 */
public final class PinnedTokenModel implements TokenGain, AutoCloseable {

    private static final int BPF_F_MMAPABLE = 1 << 10;
    private static final long PAGE = 4096;
    private static final int OFF_GAIN = SharedStructs.TOKEN_MODEL.offset("gain");
    private static final int OFF_VERSION = SharedStructs.TOKEN_MODEL.offset("version");
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final String name;
    private final long address;
    private final ByteBuffer value;
    private boolean closed;

    private PinnedTokenModel(String name, long address) {
        this.name = name;
        this.address = address;
        this.value = MemoryIO.getInstance().newDirectByteBuffer(address, (int) PAGE).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Maps {@code map} (its fd stays the caller's) after checking it is the one-entry mmapable array this build reads. */
    public static PinnedTokenModel map(BpfMap map) {
        BpfMap.Info info = map.info();
        if (info.valueSize() != SharedStructs.TOKEN_MODEL.size() || info.maxEntries() != 1
                || (info.flags() & BPF_F_MMAPABLE) == 0) {
            throw new IllegalStateException(map.name() + " is not the token model array this build reads: " + info
                    + ", want value " + SharedStructs.TOKEN_MODEL.size() + " B x 1, BPF_F_MMAPABLE (a pin left by "
                    + "another version? ./cleanup.sh removes it)");
        }
        Pointer mapped = LibC.get().mmap(null, PAGE, LibC.PROT_READ | LibC.PROT_WRITE, LibC.MAP_SHARED, map.fd(), 0);
        if (mapped == null || mapped.address() == LibC.MAP_FAILED || mapped.address() == 0) {
            Native.check(-1, "mmap", map.name());
        }
        return new PinnedTokenModel(map.name(), mapped.address());
    }

    /** The gain in force, Q10; 0 (never written) reads as {@link TokenGain#ONE_Q10}. */
    @Override
    public int gainQ10() {
        int gain = (int) INT.getOpaque(value, OFF_GAIN);
        return gain == 0 ? ONE_Q10 : gain;
    }

    /** Bumped by every writer (the calibration stage, the loader). */
    public long version() {
        return Integer.toUnsignedLong((int) INT.getOpaque(value, OFF_VERSION));
    }

    /**
     * Writes the built-in gain ({@link TokenGain#ONE_Q10}, version 1) when the map is fresh (all zero);
     * a pinned map keeps its calibrated gain across reloads and restarts.
     *
     * @return true when this call wrote it
     */
    public boolean initialise() {
        long word = (ONE_Q10 & 0xffff_ffffL) << (8 * OFF_GAIN) | 1L << (8 * OFF_VERSION);
        return LONG.compareAndSet(value, 0, 0L, word);
    }

    /** Maps anonymous memory over the range: a racing reader touches a private page, never freed memory. */
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
