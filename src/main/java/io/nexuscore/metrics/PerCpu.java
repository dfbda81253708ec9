package io.nexuscore.metrics;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Sums of per-CPU map values: a lookup returns ncpu copies, each rounded up to 8 bytes. */
final class PerCpu {

    private PerCpu() {
    }

    /** Sum over CPUs of the u64 at {@code offset} of a value {@code valueSize} bytes long. */
    static long sumU64(byte[] perCpu, int valueSize, int offset) {
        int stride = (valueSize + 7) & ~7;
        ByteBuffer b = ByteBuffer.wrap(perCpu).order(ByteOrder.nativeOrder());
        long sum = 0;
        for (int cpu = 0; cpu + stride <= perCpu.length; cpu += stride) {
            sum += b.getLong(cpu + offset);
        }
        return sum;
    }

    /** A 4-byte array-map key in host order. */
    static byte[] key(int index) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(index).array();
    }
}
