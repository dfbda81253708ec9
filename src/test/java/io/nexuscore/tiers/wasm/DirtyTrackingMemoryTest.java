package io.nexuscore.tiers.wasm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import io.nexuscore.tiers.TierRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Restoring a guest's memory copies back only the blocks written since the last restore, and still
 * leaves every byte as the image has it: through each kind of write, across block edges, and
 * through real calls of the real nano guest (its own stores, the host's strings).
 */
class DirtyTrackingMemoryTest {

    private static final int PAGES = 4;
    private static final int BYTES = PAGES * Memory.PAGE_SIZE;

    @Test
    void everyKindOfWriteIsUndoneAndOnlyTouchedBlocksAreCopied() {
        DirtyTrackingMemory memory = new DirtyTrackingMemory(new MemoryLimits(PAGES, PAGES));
        byte[] image = new byte[BYTES];
        new Random(7).nextBytes(image);
        memory.write(0, image, 0, image.length);
        memory.forget();
        assertEquals(0, memory.dirtyBlocks());

        int edge = 3 * DirtyTrackingMemory.BLOCK; // a block boundary: multi-byte writes straddle it
        memory.writeI32(edge - 2, 0x11223344);
        memory.writeLong(edge + DirtyTrackingMemory.BLOCK - 3, -1L);
        memory.writeShort(9 * DirtyTrackingMemory.BLOCK - 1, (short) 0x5566);
        memory.writeByte(BYTES - 1, (byte) 0x77);
        memory.writeF32(20 * DirtyTrackingMemory.BLOCK + 1, 1.5f);
        memory.writeF64(30 * DirtyTrackingMemory.BLOCK - 4, 2.5);
        memory.fill((byte) 0, 40 * DirtyTrackingMemory.BLOCK - 10, 42 * DirtyTrackingMemory.BLOCK + 10);
        memory.copy(50 * DirtyTrackingMemory.BLOCK - 100, 0, 300);
        memory.write(60 * DirtyTrackingMemory.BLOCK - 1, new byte[] {1, 2}, 0, 2);
        memory.atomicAddInt(62 * DirtyTrackingMemory.BLOCK, 5); // atomics are aligned: one block
        assertFalse(Arrays.equals(image, memory.readBytes(0, BYTES)), "the writes must change memory");
        // Blocks 2,3 / 3,4 / 8,9 / 63 / 20 / 29,30 / 39..42 / 49,50 / 59,60 / 62: 18 of 64.
        assertEquals(18, memory.dirtyBlocks());

        memory.restore(image);

        assertArrayEquals(image, memory.readBytes(0, BYTES));
        assertEquals(0, memory.dirtyBlocks());
    }

    @Test
    void aWriteOutsideMemoryMarksNothing() {
        DirtyTrackingMemory memory = new DirtyTrackingMemory(new MemoryLimits(1, 2));
        assertThrows(RuntimeException.class, () -> memory.writeLong(Memory.PAGE_SIZE - 4, 1L));
        assertEquals(0, memory.dirtyBlocks());
    }

    @Test
    void aGrownMemoryIsNotRestored() {
        DirtyTrackingMemory memory = new DirtyTrackingMemory(new MemoryLimits(1, 2));
        byte[] image = memory.readBytes(0, Memory.PAGE_SIZE);
        memory.grow(1);
        assertThrows(IllegalStateException.class, () -> memory.restore(image));
    }

    /** The nano guest on Chicory: after real requests and a restore, memory is the fresh image again. */
    @Test
    void realGuestCallsLeaveNothingAfterRestore() throws IOException {
        byte[] wasm;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("guests/nano.wasm")) {
            wasm = in.readAllBytes();
        }
        try (ChicoryEngine engine = new ChicoryEngine()) {
            CoreInstance instance = engine.compile("nano", wasm).instantiate(1, 1024);
            int size = instance.memoryPages() * Memory.PAGE_SIZE;
            byte[] image = instance.read(0, size);
            Random random = new Random(11);
            for (int round = 0; round < 5; round++) {
                for (int call = 0; call < 3; call++) {
                    String prompt = "tenant " + round + " secret " + random.nextLong() + " " + "word ".repeat(random.nextInt(200));
                    GuestAbi.call(instance, new TierRequest("summarize", prompt, 0, TierRequest.Simulation.NONE));
                }
                byte[] noise = new byte[1 + random.nextInt(9000)];
                random.nextBytes(noise);
                instance.write(random.nextInt(size - noise.length), noise);
                assertFalse(Arrays.equals(image, instance.read(0, size)), "the calls must have written memory");
                assertEquals(size, instance.memoryPages() * Memory.PAGE_SIZE, "the guest grew its memory");

                instance.restore(image);

                assertArrayEquals(image, instance.read(0, size), "round " + round);
            }
            instance.close();
        }
    }
}
