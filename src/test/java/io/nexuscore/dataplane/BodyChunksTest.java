package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BodyChunksTest {

    @Test
    void aBodyInOneChunkIsThatChunk() {
        BodyChunks chunks = new BodyChunks();
        Buffer only = Buffer.buffer("{\"prompt\":\"hi\"}");
        chunks.add(only);
        assertSame(only, chunks.whole(), "no copy of a body that came in one chunk");
        assertEquals(15, chunks.length());
    }

    @Test
    void noChunkIsAnEmptyBody() {
        assertEquals(0, new BodyChunks().whole().length());
    }

    /** Chunks of every size, in any order, join to the bytes as they came. */
    @Test
    void chunksOfEverySizeJoinInOrder() {
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            BodyChunks chunks = new BodyChunks();
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            int count = 1 + random.nextInt(40);
            for (int i = 0; i < count; i++) {
                // small ones (merged), ones at the threshold's edge, large ones (kept)
                int size = switch (random.nextInt(4)) {
                    case 0 -> random.nextInt(8);
                    case 1 -> BodyChunks.KEEP_FROM - 1 + random.nextInt(3);
                    case 2 -> random.nextInt(200);
                    default -> BodyChunks.KEEP_FROM + random.nextInt(70_000);
                };
                byte[] bytes = new byte[size];
                random.nextBytes(bytes);
                expected.writeBytes(bytes);
                chunks.add(Buffer.buffer(bytes));
            }
            assertEquals(expected.size(), chunks.length());
            assertArrayEquals(expected.toByteArray(), chunks.whole().getBytes(), "round " + round);
        }
    }

    /**
     * A body sent a byte at a time holds a few buffers, not one per byte: each kept chunk costs
     * objects beside its bytes, which the held-body budget does not count.
     */
    @Test
    void aBodyOneByteAtATimeHoldsFewBuffers() {
        BodyChunks chunks = new BodyChunks();
        for (int i = 0; i < 100_000; i++) {
            chunks.add(Buffer.buffer(new byte[] {(byte) ('a' + i % 26)}));
        }
        assertTrue(chunks.pieces() <= 2, "pieces: " + chunks.pieces());
        Buffer whole = chunks.whole();
        assertEquals(100_000, whole.length());
        assertEquals('z', whole.getByte(25));
    }

    /** Large chunks are kept as they came: at most one buffer per KEEP_FROM bytes whatever the mix. */
    @Test
    void largeChunksAreKeptAndSmallOnesBetweenThemMerged() {
        BodyChunks chunks = new BodyChunks();
        for (int i = 0; i < 100; i++) {
            chunks.add(Buffer.buffer(new byte[BodyChunks.KEEP_FROM]));
            for (int j = 0; j < 50; j++) {
                chunks.add(Buffer.buffer(new byte[] {1}));
            }
        }
        assertEquals(200, chunks.pieces(), "each large chunk, and one merge buffer after each");
        assertEquals(100L * (BodyChunks.KEEP_FROM + 50), chunks.length());
    }
}
