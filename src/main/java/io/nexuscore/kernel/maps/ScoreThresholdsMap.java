package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.MappedMapValue;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.ThresholdStore;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The pinned {@code score_thresholds} array (one entry, BPF_F_MMAPABLE): the live thresholds the XDP
 * program reads for every verdict, mapped read-write into this process. A read is one 64-bit volatile
 * load and a write one 64-bit compare-and-set on the same memory the adaptive timer's
 * {@code __sync_val_compare_and_swap} uses, so neither loses the other's update (nexus_shared.h).
 * Writes by other tools (bpftool's syscall) land in the same bytes; the next CAS sees them.
 */
public final class ScoreThresholdsMap implements ThresholdStore, AutoCloseable {

    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final MappedMapValue mapped;
    private final ByteBuffer value;

    private ScoreThresholdsMap(MappedMapValue mapped) {
        this.mapped = mapped;
        this.value = mapped.value();
    }

    /** Maps {@code map} (its fd stays the caller's) after checking it is the one-entry mmapable array this build writes. */
    public static ScoreThresholdsMap map(BpfMap map) {
        return new ScoreThresholdsMap(MappedMapValue.map(map, SharedStructs.SCORE_THRESHOLDS, "thresholds"));
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
    public boolean isUnset() {
        return (long) WORD.getVolatile(value, 0) == 0;
    }

    @Override
    public void close() {
        mapped.close();
    }
}
