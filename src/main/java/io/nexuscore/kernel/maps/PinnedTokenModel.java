package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.MappedMapValue;
import io.nexuscore.classify.TokenGain;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The pinned {@code token_model} array (one entry, BPF_F_MMAPABLE) mapped into this process: the
 * gain of the prompt token estimate that the XDP program applies and the kernel's calibration stage
 * refits. {@link #gainQ10()} is one 32-bit load from the shared page (opaque: never cached across
 * calls, no fence, no syscall), so the Java scorer reads it per request and stays equal to the kernel.
 */
public final class PinnedTokenModel implements TokenGain, AutoCloseable {

    private static final int OFF_GAIN = SharedStructs.TOKEN_MODEL.offset("gain");
    private static final int OFF_VERSION = SharedStructs.TOKEN_MODEL.offset("version");
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final MappedMapValue mapped;
    private final ByteBuffer value;

    private PinnedTokenModel(MappedMapValue mapped) {
        this.mapped = mapped;
        this.value = mapped.value();
    }

    /** Maps {@code map} (its fd stays the caller's) after checking it is the one-entry mmapable array this build reads. */
    public static PinnedTokenModel map(BpfMap map) {
        return new PinnedTokenModel(MappedMapValue.map(map, SharedStructs.TOKEN_MODEL, "token model"));
    }

    /** The gain in force, Q10, as the kernel applies it ({@link TokenGain#effective}: 0 is one, a tool's huge value the max). */
    @Override
    public int gainQ10() {
        return TokenGain.effective((int) INT.getOpaque(value, OFF_GAIN));
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

    @Override
    public void close() {
        mapped.close();
    }
}
