package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.MapMemory;
import io.nexuscore.kernel.libbpf.StructLayout;
import io.netty.util.concurrent.FastThreadLocal;
import io.nexuscore.classify.FourTuple;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A verdict slot array (verdict_slots or verdict_slots6, BPF_F_MMAPABLE), the primary verdict store,
 * mapped into this process: a verdict read is a few plain loads, no syscall.
 *
 * <p>The XDP program writes a slot under a seqlock (nexus_shared.h): seq odd while it writes. A read
 * takes seq (acquire), the key and the 8-byte verdict, then seq again after a load-load fence, and
 * trusts the slot only when both seq values are equal and even; otherwise it retries a few times
 * and then reports {@link #INCONSISTENT}. A slot holding another key (a collision, or an empty slot)
 * reports {@link #MISS}. Either way the caller asks the fallback map (routing_decisions), where XDP
 * moves a slot's holder before another connection takes the slot.
 *
 * <p>Thread-safe. Reads share the mapping; the one write from Java, {@link #clear}, follows the
 * kernel writer's compare-and-swap protocol.
 */
public final class VerdictSlots implements AutoCloseable {

    /** Read results that are not a verdict word: the tier byte (bits 40..47) of a verdict is 0..2. */
    public static final long MISS = 0xff00_0000_0000L;
    public static final long INCONSISTENT = 0xfe00_0000_0000L;
    private static final int RETRIES = 4;

    private static final VarHandle SEQ = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final MapMemory memory;
    private final ByteBuffer slots;
    private final int slotCount;
    private final int slotSize;
    private final int keyOffset;
    private final int keySize;
    private final int verdictOffset;

    private VerdictSlots(MapMemory memory, int slotCount, StructLayout layout) {
        this.memory = memory;
        this.slots = memory.buffer();
        this.slotCount = slotCount;
        this.slotSize = layout.size();
        this.keyOffset = layout.offset("key");
        this.keySize = layout.offset("verdict") - keyOffset;
        this.verdictOffset = layout.offset("verdict");
    }

    /**
     * Maps {@code map} (its fd stays the caller's) after checking it is the slot array this code
     * reads: value size, slot count and BPF_F_MMAPABLE, so a stale pin fails here and not in a read.
     */
    public static VerdictSlots map(BpfMap map, StructLayout layout, int slotCount) {
        return new VerdictSlots(MapMemory.map(map, layout, slotCount, "slot array"), slotCount, layout);
    }

    int slotCount() {
        return slotCount;
    }

    /**
     * Per-thread key words of the connection being read: a read allocates nothing. A Netty
     * FastThreadLocal, an array index on the event loops: a JDK ThreadLocal there probes a map that
     * Vert.x, Netty and Jackson share, and cost 0.3 µs per request in the c=64 profile (2026-12-06).
     */
    private static final FastThreadLocal<int[]> KEY_WORDS = new FastThreadLocal<>() {
        @Override
        protected int[] initialValue() {
            return new int[SharedStructs.KEY_WORDS_MAX];
        }
    };

    /**
     * The verdict word (routing_decision as a little-endian long) of the connection's slot, or
     * {@link #MISS} / {@link #INCONSISTENT}. The key is compared word by word in place.
     */
    long read(FourTuple connection) {
        int[] words = KEY_WORDS.get();
        int count = SharedStructs.keyWords(connection, words);
        if (words[count - 1] >>> 16 == 0) {
            return MISS; // destination port 0: the key of an empty slot, never a connection's
        }
        int at = SharedStructs.slotIndex(words, count, slotCount) * slotSize;
        int key = at + keyOffset;
        for (int attempt = 0; attempt < RETRIES; attempt++) {
            int before = (int) SEQ.getAcquire(slots, at);
            if ((before & 1) != 0) {
                Thread.onSpinWait(); // the XDP program is writing this slot right now
                continue;
            }
            boolean same = true;
            for (int w = 0; w < count; w++) {
                same &= slots.getInt(key + 4 * w) == words[w];
            }
            long word = slots.getLong(at + verdictOffset);
            VarHandle.loadLoadFence();
            int after = slots.getInt(at);
            if (before == after) {
                return same ? word : MISS;
            }
        }
        return INCONSISTENT;
    }

    /**
     * A verdict word: its tier byte names a tier. MISS and INCONSISTENT are not, and neither is a
     * word another tool wrote into the pinned array with a tier byte past large (the kernel never
     * does): that connection reads as having no verdict, as in the kernel's own tier checks.
     */
    public static boolean isVerdict(long word) {
        return SharedStructs.namesATier(word);
    }

    /**
     * Empties the connection's slot when it holds the connection, as a kernel writer would write it
     * (compare-and-swap of seq from even to odd, key and verdict zeroed, seq even again); a slot
     * another connection holds, or one a writer holds right now, is left alone (false).
     * For tests and diagnostics: the data plane never clears a verdict.
     */
    boolean clear(FourTuple connection) {
        int[] words = new int[SharedStructs.KEY_WORDS_MAX];
        int at = SharedStructs.slotIndex(words, SharedStructs.keyWords(connection, words), slotCount) * slotSize;
        byte[] key = SharedStructs.flowKey(connection);
        int seq = (int) SEQ.getAcquire(slots, at);
        if ((seq & 1) != 0 || !java.util.Arrays.equals(key, keyAt(at)) || !SEQ.compareAndSet(slots, at, seq, seq + 1)) {
            return false;
        }
        slots.put(at + keyOffset, new byte[keySize]);
        WORD.setVolatile(slots, at + verdictOffset, 0L);
        SEQ.setRelease(slots, at, seq + 2);
        return true;
    }

    private byte[] keyAt(int at) {
        byte[] key = new byte[keySize];
        slots.get(at + keyOffset, key);
        return key;
    }

    /** Every slot that holds a connection, read consistently (a slot being written is skipped): for diagnostics. */
    void forEach(java.util.function.BiConsumer<FourTuple, Long> action) {
        for (int at = 0; at < slotCount * slotSize; at += slotSize) {
            int before = (int) SEQ.getAcquire(slots, at);
            if (before == 0 || (before & 1) != 0) {
                continue; // never written, or being written
            }
            byte[] key = keyAt(at);
            long word = slots.getLong(at + verdictOffset);
            VarHandle.loadLoadFence();
            boolean empty = key[keySize - 2] == 0 && key[keySize - 1] == 0; // destination port 0
            if ((int) SEQ.getAcquire(slots, at) == before && !empty && isVerdict(word)) {
                action.accept(SharedStructs.decodeFlowKey(key), word);
            }
        }
    }

    /**
     * Retires the mapping (anonymous zero pages over the same range): a reader racing this close then
     * sees empty slots (a miss) instead of faulting on an unmapped page.
     */
    @Override
    public void close() {
        memory.close();
    }
}
