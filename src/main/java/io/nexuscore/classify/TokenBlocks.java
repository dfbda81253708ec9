package io.nexuscore.classify;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Tokens per non-ASCII character of a prompt, by block of 64 code points: cl100k_base spends about
 * 0.6 tokens on a Chinese character and 2.5 on an Oriya one, and one weight for every multi-byte
 * character (the estimate before this table) put Greek, Arabic or Indic prompts at half their
 * tokens. Block {@code cp >> 6} for a character of the Basic Multilingual Plane, {@link #SUPPLEMENTARY}
 * for one outside it. The byte scan finds the block without decoding: a two-byte character's lead
 * byte is {@code 0xc0 | cp >> 6}, a three-byte one's block is its lead's low nibble and its second
 * byte's low six bits, a backslash-u escape's the first three hex digits.
 *
 * <p>The weights live in {@code token-blocks.tsv} beside this class, the one copy: the kernel gets
 * this table at load ({@link #rodata()}, written into nexus_classify's {@code .rodata.tokens}).
 */
public final class TokenBlocks {

    /** TOKEN_BLOCKS in nexus_shared.h: the BMP's 1024 blocks, then one for everything above it. */
    public static final int BLOCKS = 1025;
    /** The block of every character outside the BMP (a four-byte UTF-8 character, an escaped surrogate pair). */
    public static final int SUPPLEMENTARY = 1024;
    /**
     * TOKEN_BLOCK_WIDE: the kernel's copy has one entry after the blocks, {@link #wideWeightQ10}, so
     * that its fast path weighs CJK, kana and Hangul characters without a lookup per character.
     */
    public static final int WIDE = 1025;
    /** TOKEN_TABLE_ENTRIES: the blocks and the wide entry. */
    public static final int TABLE_ENTRIES = 1026;
    /** TOKEN_WIDE_NOT_UNIFORM: the wide blocks' weights differ (the kernel then weighs each character by its block). */
    public static final int WIDE_NOT_UNIFORM = 0xffff;
    /** The blocks of the three-byte characters from U+2000 on, the wide entry's range (the surrogates' blocks aside). */
    private static final int WIDE_BLOCKS_FROM = 0x2000 >> 6;
    /** The largest weight a line may give (8 tokens per character). */
    public static final int MAX_WEIGHT_Q10 = 8192;
    /** Blocks of the UTF-16 surrogates: high ones carry the pair's weight, low ones weigh nothing. */
    private static final int HIGH_SURROGATE_BLOCKS_FROM = 0xD800 >> 6;
    private static final int LOW_SURROGATE_BLOCKS_FROM = 0xDC00 >> 6;
    private static final int SURROGATE_BLOCKS_END = 0xE000 >> 6;

    static final String RESOURCE = "token-blocks.tsv";

    private static final short[] WEIGHTS = load();

    private TokenBlocks() {
    }

    /** The block of a code point (a whole character, not a UTF-16 unit). */
    public static int blockOf(int codePoint) {
        return codePoint >= 0x10000 ? SUPPLEMENTARY : codePoint >> 6;
    }

    /** The weight of block {@code block} (0..BLOCKS-1), in 1/1024 tokens. */
    public static int weightQ10(int block) {
        return WEIGHTS[block];
    }

    /** The table as the kernel reads it: TABLE_ENTRIES __u16 values in native byte order, the wide entry last. */
    public static byte[] rodata() {
        ByteBuffer buffer = ByteBuffer.allocate(TABLE_ENTRIES * Short.BYTES).order(ByteOrder.nativeOrder());
        for (short weight : WEIGHTS) {
            buffer.putShort(weight);
        }
        buffer.putShort((short) wideWeightQ10(WEIGHTS));
        return buffer.array();
    }

    /**
     * The one weight of every block from U+2000 to U+FFFF but the surrogates' (every character a
     * three-byte UTF-8 sequence with a lead of 0xe2 and above encodes), or WIDE_NOT_UNIFORM when
     * two of them differ. The table weighs CJK, kana, Hangul and symbols alike (one fitted line).
     */
    static int wideWeightQ10(short[] weights) {
        int weight = weights[WIDE_BLOCKS_FROM];
        for (int block = WIDE_BLOCKS_FROM; block < SUPPLEMENTARY; block++) {
            boolean surrogate = block >= HIGH_SURROGATE_BLOCKS_FROM && block < SURROGATE_BLOCKS_END;
            if (!surrogate && weights[block] != weight) {
                return WIDE_NOT_UNIFORM;
            }
        }
        return weight;
    }

    private static short[] load() {
        try (InputStream in = TokenBlocks.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path");
            }
            return parse(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
    }

    /** Parses the table's lines (see token-blocks.tsv); a malformed line fails with its number. */
    static short[] parse(BufferedReader reader) throws IOException {
        short[] weights = new short[BLOCKS];
        boolean supplementary = false;
        int number = 0;
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            number++;
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\t", 4);
            if (fields.length < 3) {
                throw new IllegalArgumentException(RESOURCE + " line " + number + ": want first, last, weight");
            }
            int first = codePoint(fields[0], number);
            int last = codePoint(fields[1], number);
            int weight = weight(fields[2], number);
            if (first == 0x10000 && last == 0x10FFFF) {
                weights[SUPPLEMENTARY] = (short) weight;
                supplementary = true;
            } else if (first % 64 != 0 || (last + 1) % 64 != 0 || last < first || last > 0xFFFF) {
                throw new IllegalArgumentException(RESOURCE + " line " + number + ": " + fields[0] + "-" + fields[1]
                        + " is not a range of whole 64-code-point blocks inside the BMP (or 10000-10FFFF)");
            } else {
                Arrays.fill(weights, first >> 6, (last >> 6) + 1, (short) weight);
            }
        }
        if (!supplementary) {
            throw new IllegalArgumentException(RESOURCE + ": no line for 10000-10FFFF");
        }
        Arrays.fill(weights, HIGH_SURROGATE_BLOCKS_FROM, LOW_SURROGATE_BLOCKS_FROM, weights[SUPPLEMENTARY]);
        Arrays.fill(weights, LOW_SURROGATE_BLOCKS_FROM, SURROGATE_BLOCKS_END, (short) 0);
        return weights;
    }

    private static int codePoint(String field, int number) {
        try {
            return Integer.parseInt(field.trim(), 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(RESOURCE + " line " + number + ": '" + field + "' is not a hex code point");
        }
    }

    private static int weight(String field, int number) {
        int weight;
        try {
            weight = Integer.parseInt(field.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(RESOURCE + " line " + number + ": '" + field + "' is not a weight");
        }
        if (weight < 0 || weight > MAX_WEIGHT_Q10) {
            throw new IllegalArgumentException(RESOURCE + " line " + number + ": weight " + weight
                    + " is outside 0.." + MAX_WEIGHT_Q10);
        }
        return weight;
    }
}
