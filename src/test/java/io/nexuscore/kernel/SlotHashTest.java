package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.classify.FourTuple;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The flow key and slot hash Java computes in place (VarHandles, no buffers) against a plain
 * reference written from nexus_shared.h's description; no kernel needed (VerdictSlotsTest checks
 * the kernel puts a verdict where Java looks for it).
 */
class SlotHashTest {

    /** slot_hash as nexus_shared.h states it, over a key built field by field with a ByteBuffer. */
    private static int referenceSlot(FourTuple t, int slots) {
        byte[] src = t.srcAddress().getAddress();
        ByteBuffer key = ByteBuffer.allocate(2 * src.length + 4).order(ByteOrder.BIG_ENDIAN)
                .put(src).put(t.dstAddress().getAddress()).putShort((short) t.srcPort()).putShort((short) t.dstPort());
        ByteBuffer words = ByteBuffer.wrap(key.array()).order(ByteOrder.LITTLE_ENDIAN);
        int h = 0;
        for (int at = 0; at < key.capacity(); at += 4) {
            h = (h ^ words.getInt(at)) * 0x9e3779b1;
        }
        h ^= h >>> 15;
        return h & (slots - 1);
    }

    private static FourTuple random(SplittableRandom random, int addressBytes) throws Exception {
        byte[] src = new byte[addressBytes];
        byte[] dst = new byte[addressBytes];
        for (int i = 0; i < addressBytes; i++) {
            src[i] = (byte) random.nextInt(256);
            dst[i] = (byte) random.nextInt(256);
        }
        if (addressBytes == 16) {
            src[0] = dst[0] = 0x20; // not IPv4-mapped, which InetAddress would turn into an Inet4Address
        }
        return new FourTuple(InetAddress.getByAddress(src), random.nextInt(65536), InetAddress.getByAddress(dst),
                random.nextInt(65536));
    }

    @Test
    void slotIndexAndFlowKeyMatchTheReferenceForBothFamilies() throws Exception {
        SplittableRandom random = new SplittableRandom(13);
        for (int addressBytes : new int[] {4, 16}) {
            int slots = addressBytes == 4 ? SharedStructs.VERDICT_SLOTS : SharedStructs.VERDICT_SLOTS6;
            for (int i = 0; i < 10_000; i++) {
                FourTuple t = random(random, addressBytes);
                byte[] key = SharedStructs.flowKey(t);
                assertEquals(referenceSlot(t, slots), SharedStructs.slotIndex(key, slots), t.toString());
                int[] words = new int[SharedStructs.KEY_WORDS_MAX];
                int count = SharedStructs.keyWords(t, words);
                assertEquals(addressBytes == 4 ? 3 : 9, count);
                assertEquals(referenceSlot(t, slots), SharedStructs.slotIndex(words, count, slots), t.toString());
                assertEquals(t, SharedStructs.decodeFlowKey(key));
                assertEquals(addressBytes == 16, t.ipv6());
            }
        }
    }

    @Test
    void flowKeyIsNetworkOrder() throws Exception {
        FourTuple t = new FourTuple(InetAddress.getByName("10.1.2.3"), 0x1234, InetAddress.getByName("10.9.8.7"), 8080);
        assertArrayEquals(new byte[] {10, 1, 2, 3, 10, 9, 8, 7, 0x12, 0x34, 0x1f, (byte) 0x90}, SharedStructs.flowKey(t));
        assertEquals(0x901f_3412, SharedStructs.portsWord(t), "src_port | dst_port << 16 as a little-endian load");
    }
}
