package io.nexuscore.classify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The block table's file format: overrides, the surrogate rule, and the errors a bad line gets. */
class TokenBlocksTest {

    private static short[] parse(String text) throws IOException {
        return TokenBlocks.parse(new BufferedReader(new StringReader(text)));
    }

    @Test
    void laterLinesOverrideEarlierOnesAndSurrogatesFollowTheSupplementaryWeight() throws IOException {
        short[] w = parse("# comment\n0000\tFFFF\t600\tall\n0380\t03FF\t755\tGreek\n\n10000\t10FFFF\t2319\tabove\n");
        assertEquals(600, w[0x0370 >> 6]);
        assertEquals(755, w[0x0380 >> 6]);
        assertEquals(755, w[0x03C0 >> 6]);
        assertEquals(600, w[0x0400 >> 6]);
        assertEquals(2319, w[TokenBlocks.SUPPLEMENTARY]);
        assertEquals(2319, w[0xD83D >> 6], "a high surrogate carries its pair's weight");
        assertEquals(0, w[0xDE00 >> 6], "a low surrogate weighs nothing");
        assertEquals(600, w[0xE000 >> 6]);
    }

    @Test
    void aCharactersBlockIsItsCodePointOver64AndOneBlockHoldsAllAboveTheBmp() {
        assertEquals(0x03B1 >> 6, TokenBlocks.blockOf(0x03B1));
        assertEquals(1023, TokenBlocks.blockOf(0xFFFF));
        assertEquals(TokenBlocks.SUPPLEMENTARY, TokenBlocks.blockOf(0x1F600));
        assertEquals(TokenBlocks.SUPPLEMENTARY, TokenBlocks.blockOf(0x10FFFF));
    }

    @Test
    void aBadLineIsRejectedWithItsNumber() {
        for (String[] bad : new String[][] {
                {"0000\t0FFF\t9000\tx\n10000\t10FFFF\t1\tx\n", "line 1: weight 9000"},
                {"10000\t10FFFF\t1\tx\n0380\t03FE\t7\tx\n", "line 2: 0380-03FE"},
                {"0380\t03FF\tmany\tx\n", "line 1: 'many' is not a weight"},
                {"038G\t03FF\t7\tx\n", "line 1: '038G' is not a hex code point"},
                {"0380 03FF 7\n", "line 1: want first, last, weight"},
                {"0380\t03FF\t7\tx\n", "no line for 10000-10FFFF"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(bad[0]));
            assertTrue(e.getMessage().contains(bad[1]), e.getMessage());
        }
    }

    @Test
    void theShippedTableCoversEveryBlockAndTheKernelGetsItInNativeOrder() {
        ByteBuffer rodata = ByteBuffer.wrap(TokenBlocks.rodata()).order(ByteOrder.nativeOrder());
        assertEquals(TokenBlocks.TABLE_ENTRIES * 2, rodata.capacity());
        for (int block = 0; block < TokenBlocks.BLOCKS; block++) {
            int weight = rodata.getShort(block * 2) & 0xffff;
            assertEquals(TokenBlocks.weightQ10(block), weight);
            boolean lowSurrogate = block >= 0xDC00 >> 6 && block < 0xE000 >> 6;
            assertTrue(lowSurrogate ? weight == 0 : weight > 0 && weight <= TokenBlocks.MAX_WEIGHT_Q10, "block " + block);
        }
    }

    /** The kernel's wide entry: the shipped table weighs CJK, kana and Hangul alike, so its fast path may. */
    @Test
    void theWideEntryIsTheOneWeightOfTheThreeByteBlocksFromU2000() {
        ByteBuffer rodata = ByteBuffer.wrap(TokenBlocks.rodata()).order(ByteOrder.nativeOrder());
        int wide = rodata.getShort(TokenBlocks.WIDE * 2) & 0xffff;
        assertEquals(TokenBlocks.weightQ10(TokenBlocks.blockOf('中')), wide);
        assertEquals(TokenBlocks.weightQ10(TokenBlocks.blockOf('한')), wide);
        assertEquals(TokenBlocks.weightQ10(TokenBlocks.blockOf('\uD7A3')), wide); // 0xed 0x9e 0xa3: Hangul, not a surrogate
    }

    @Test
    void oneDifferentBlockAboveU2000TurnsTheWideEntryOff() throws IOException {
        String table = "0080\tFFFF\t613\tx\n10000\t10FFFF\t2319\tx\n";
        assertEquals(613, TokenBlocks.wideWeightQ10(parse(table)));
        // The surrogates' blocks (their own weights) and the blocks below U+2000 do not count.
        assertEquals(613, TokenBlocks.wideWeightQ10(parse(table + "0800\t1FFF\t1800\tx\n")));
        assertEquals(TokenBlocks.WIDE_NOT_UNIFORM, TokenBlocks.wideWeightQ10(parse(table + "FF00\tFF3F\t700\tx\n")));
        assertEquals(TokenBlocks.WIDE_NOT_UNIFORM, TokenBlocks.wideWeightQ10(parse(table + "2000\t203F\t700\tx\n")));
    }
}
