package io.nexuscore.tiers.wasm;

import com.dylibso.chicory.runtime.ByteArrayMemory;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.wasm.types.DataSegment;
import com.dylibso.chicory.wasm.types.MemoryLimits;

/**
 * A Chicory guest's linear memory that remembers which 4 KiB blocks were written since it was last
 * {@link #restore restored} or {@link #forget forgotten}, so that putting memory back to its
 * pristine image after a request copies those blocks only.
 *
 * <p>Why: every guest carries the cl100k tables (~1.3 MB of data segment), and copying the whole
 * image after every request took more CPU than the request itself (~18 µs of a nano worker's
 * ~33 µs per request). A request writes its strings, the guest's stack and its heap: a few blocks.
 *
 * <p>Soundness: the compiled guest code and the host reach memory only through this object (the
 * guests import their memory), and every mutator marks each block it touched once the write has
 * succeeded (a write outside memory throws and changes nothing). So after {@link #restore} every
 * byte written since the last restore is the image's again, whatever the guest did.
 *
 * <p>Over 400 lines on purpose: it implements every method of Chicory's {@link Memory} (most of them
 * writes, each marking its blocks), and the soundness argument above holds only if all of them are
 * checked together, in one place.
 */
final class DirtyTrackingMemory implements Memory {

    static final int BLOCK_SHIFT = 12;
    static final int BLOCK = 1 << BLOCK_SHIFT;

    private final ByteArrayMemory memory;
    /** One bit per block, for the whole maximum size (so growing needs no resize). */
    private final long[] dirty;

    DirtyTrackingMemory(MemoryLimits limits) {
        this.memory = new ByteArrayMemory(limits);
        long maxBytes = (long) limits.maximumPages() * PAGE_SIZE;
        this.dirty = new long[(int) ((maxBytes >>> BLOCK_SHIFT) + 63 >>> 6)];
    }

    /**
     * Copies the image back over every block written since the last restore (or {@link #forget}).
     *
     * @throws IllegalStateException when the memory is not the image's size (it grew: replace the
     *                               instance instead, memory cannot shrink)
     */
    void restore(byte[] image) {
        long size = (long) memory.pages() * PAGE_SIZE;
        if (size != image.length) {
            throw new IllegalStateException("memory is " + size + " bytes, the image " + image.length);
        }
        for (int w = 0; w < dirty.length; w++) {
            long bits = dirty[w];
            while (bits != 0) {
                int block = (w << 6) + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
                int from = block << BLOCK_SHIFT;
                memory.write(from, image, from, Math.min(BLOCK, image.length - from));
            }
            dirty[w] = 0;
        }
    }

    /** Forgets every mark: the memory as it is now is what later restores start from. */
    void forget() {
        java.util.Arrays.fill(dirty, 0);
    }

    /** Blocks written since the last restore (for tests and gauges). */
    int dirtyBlocks() {
        int n = 0;
        for (long bits : dirty) {
            n += Long.bitCount(bits);
        }
        return n;
    }

    private void mark(int address) {
        int block = address >>> BLOCK_SHIFT;
        dirty[block >>> 6] |= 1L << block;
    }

    /** Marks [address, address + length); length > 0 and the range inside memory (checked by the write). */
    private void mark(int address, int length) {
        int last = (int) (((long) address + length - 1) >>> BLOCK_SHIFT);
        for (int block = address >>> BLOCK_SHIFT; block <= last; block++) {
            dirty[block >>> 6] |= 1L << block;
        }
    }

    /**
     * Marks a scalar write of {@code bytes} (2 to 8) at {@code address}: it spans at most two blocks,
     * its first and its last byte's, so two stores without a loop (the guests' stores, most of their
     * writes, each go through here).
     */
    private void markScalar(int address, int bytes) {
        int first = address >>> BLOCK_SHIFT;
        int last = (address + bytes - 1) >>> BLOCK_SHIFT; // the write succeeded: no overflow past memory
        dirty[first >>> 6] |= 1L << first;
        dirty[last >>> 6] |= 1L << last;
    }

    /** Marks the cell an atomic read-modify-write changed and returns its result (the old value). */
    private int wroteInt(int address, int old) {
        markScalar(address, Integer.BYTES);
        return old;
    }

    private long wroteLong(int address, long old) {
        markScalar(address, Long.BYTES);
        return old;
    }

    private short wroteShort(int address, short old) {
        markScalar(address, Short.BYTES);
        return old;
    }

    private byte wroteByte(int address, byte old) {
        mark(address);
        return old;
    }

    private void markAll() {
        long size = (long) memory.pages() * PAGE_SIZE;
        if (size > 0) {
            mark(0, (int) Math.min(size, Integer.MAX_VALUE));
        }
    }

    // --- mutators: write, then mark ---

    @Override
    public void write(int address, byte[] data, int offset, int length) {
        memory.write(address, data, offset, length);
        if (length > 0) {
            mark(address, length);
        }
    }

    @Override
    public void writeI32(int address, int value) {
        memory.writeI32(address, value);
        markScalar(address, 4);
    }

    @Override
    public void writeLong(int address, long value) {
        memory.writeLong(address, value);
        markScalar(address, 8);
    }

    @Override
    public void writeShort(int address, short value) {
        memory.writeShort(address, value);
        markScalar(address, 2);
    }

    @Override
    public void writeByte(int address, byte value) {
        memory.writeByte(address, value);
        mark(address);
    }

    @Override
    public void writeF32(int address, float value) {
        memory.writeF32(address, value);
        markScalar(address, 4);
    }

    @Override
    public void writeF64(int address, double value) {
        memory.writeF64(address, value);
        markScalar(address, 8);
    }

    @Override
    public void fill(byte value, int from, int to) {
        memory.fill(value, from, to);
        if (to > from) {
            mark(from, to - from);
        }
    }

    @Override
    public void copy(int dest, int src, int size) {
        memory.copy(dest, src, size);
        if (size > 0) {
            mark(dest, size);
        }
    }

    @Override
    public void initPassiveSegment(int segmentId, int dest, int offset, int size) {
        memory.initPassiveSegment(segmentId, dest, offset, size);
        if (size > 0) {
            mark(dest, size);
        }
    }

    @Override
    public void initialize(Instance instance, DataSegment[] dataSegments) {
        memory.initialize(instance, dataSegments);
        markAll();
    }

    @Override
    public void initialize(Instance instance, DataSegment[] dataSegments, int offset) {
        memory.initialize(instance, dataSegments, offset);
        markAll();
    }

    @Override
    public void zero() {
        memory.zero();
        markAll();
    }

    @Override
    public int grow(int pages) {
        return memory.grow(pages); // new pages read as zero; a grown memory is replaced, not restored
    }

    @Override
    public void atomicWriteInt(int address, int value) {
        memory.atomicWriteInt(address, value);
        markScalar(address, 4);
    }

    @Override
    public void atomicWriteLong(int address, long value) {
        memory.atomicWriteLong(address, value);
        markScalar(address, 8);
    }

    @Override
    public void atomicWriteShort(int address, short value) {
        memory.atomicWriteShort(address, value);
        markScalar(address, 2);
    }

    @Override
    public void atomicWriteByte(int address, byte value) {
        memory.atomicWriteByte(address, value);
        mark(address);
    }

    @Override
    public int atomicAddInt(int address, int value) {
        return wroteInt(address, memory.atomicAddInt(address, value));
    }

    @Override
    public int atomicAndInt(int address, int value) {
        return wroteInt(address, memory.atomicAndInt(address, value));
    }

    @Override
    public int atomicOrInt(int address, int value) {
        return wroteInt(address, memory.atomicOrInt(address, value));
    }

    @Override
    public int atomicXorInt(int address, int value) {
        return wroteInt(address, memory.atomicXorInt(address, value));
    }

    @Override
    public int atomicXchgInt(int address, int value) {
        return wroteInt(address, memory.atomicXchgInt(address, value));
    }

    @Override
    public int atomicCmpxchgInt(int address, int expected, int value) {
        return wroteInt(address, memory.atomicCmpxchgInt(address, expected, value));
    }

    @Override
    public long atomicAddLong(int address, long value) {
        return wroteLong(address, memory.atomicAddLong(address, value));
    }

    @Override
    public long atomicAndLong(int address, long value) {
        return wroteLong(address, memory.atomicAndLong(address, value));
    }

    @Override
    public long atomicOrLong(int address, long value) {
        return wroteLong(address, memory.atomicOrLong(address, value));
    }

    @Override
    public long atomicXorLong(int address, long value) {
        return wroteLong(address, memory.atomicXorLong(address, value));
    }

    @Override
    public long atomicXchgLong(int address, long value) {
        return wroteLong(address, memory.atomicXchgLong(address, value));
    }

    @Override
    public long atomicCmpxchgLong(int address, long expected, long value) {
        return wroteLong(address, memory.atomicCmpxchgLong(address, expected, value));
    }

    @Override
    public short atomicAddShort(int address, short value) {
        return wroteShort(address, memory.atomicAddShort(address, value));
    }

    @Override
    public short atomicAndShort(int address, short value) {
        return wroteShort(address, memory.atomicAndShort(address, value));
    }

    @Override
    public short atomicOrShort(int address, short value) {
        return wroteShort(address, memory.atomicOrShort(address, value));
    }

    @Override
    public short atomicXorShort(int address, short value) {
        return wroteShort(address, memory.atomicXorShort(address, value));
    }

    @Override
    public short atomicXchgShort(int address, short value) {
        return wroteShort(address, memory.atomicXchgShort(address, value));
    }

    @Override
    public short atomicCmpxchgShort(int address, short expected, short value) {
        return wroteShort(address, memory.atomicCmpxchgShort(address, expected, value));
    }

    @Override
    public byte atomicAddByte(int address, byte value) {
        return wroteByte(address, memory.atomicAddByte(address, value));
    }

    @Override
    public byte atomicAndByte(int address, byte value) {
        return wroteByte(address, memory.atomicAndByte(address, value));
    }

    @Override
    public byte atomicOrByte(int address, byte value) {
        return wroteByte(address, memory.atomicOrByte(address, value));
    }

    @Override
    public byte atomicXorByte(int address, byte value) {
        return wroteByte(address, memory.atomicXorByte(address, value));
    }

    @Override
    public byte atomicXchgByte(int address, byte value) {
        return wroteByte(address, memory.atomicXchgByte(address, value));
    }

    @Override
    public byte atomicCmpxchgByte(int address, byte expected, byte value) {
        return wroteByte(address, memory.atomicCmpxchgByte(address, expected, value));
    }

    // --- everything else: as the plain memory ---

    @Override
    public int pages() {
        return memory.pages();
    }

    @Override
    public int initialPages() {
        return memory.initialPages();
    }

    @Override
    public int maximumPages() {
        return memory.maximumPages();
    }

    @Override
    public boolean shared() {
        return memory.shared();
    }

    @Override
    public Object lock(int address) {
        return memory.lock(address);
    }

    @Override
    public int waitOn(int address, int expected, long timeout) {
        return memory.waitOn(address, expected, timeout);
    }

    @Override
    public int waitOn(int address, long expected, long timeout) {
        return memory.waitOn(address, expected, timeout);
    }

    @Override
    public int notify(int address, int maxThreads) {
        return memory.notify(address, maxThreads);
    }

    @Override
    public void atomicFence() {
        memory.atomicFence();
    }

    @Override
    public int atomicReadInt(int address) {
        return memory.atomicReadInt(address);
    }

    @Override
    public long atomicReadLong(int address) {
        return memory.atomicReadLong(address);
    }

    @Override
    public short atomicReadShort(int address) {
        return memory.atomicReadShort(address);
    }

    @Override
    public byte atomicReadByte(int address) {
        return memory.atomicReadByte(address);
    }

    @Override
    public byte read(int address) {
        return memory.read(address);
    }

    @Override
    public byte[] readBytes(int address, int length) {
        return memory.readBytes(address, length);
    }

    @Override
    public int readInt(int address) {
        return memory.readInt(address);
    }

    @Override
    public long readLong(int address) {
        return memory.readLong(address);
    }

    @Override
    public short readShort(int address) {
        return memory.readShort(address);
    }

    @Override
    public long readU16(int address) {
        return memory.readU16(address);
    }

    @Override
    public long readF32(int address) {
        return memory.readF32(address);
    }

    @Override
    public float readFloat(int address) {
        return memory.readFloat(address);
    }

    @Override
    public double readDouble(int address) {
        return memory.readDouble(address);
    }

    @Override
    public long readF64(int address) {
        return memory.readF64(address);
    }

    @Override
    public void drop(int segment) {
        memory.drop(segment);
    }
}
