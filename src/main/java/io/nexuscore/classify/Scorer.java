package io.nexuscore.classify;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The complexity score, in Java. The kernel computes the same function in nexus_head.bpf.h, nexus_prompt.bpf.h and nexus_score.bpf.h
 * and ParityTest keeps the two equal; change both or neither.
 *
 * <pre>
 * request line   bytes of the head up to the first CR or LF, at most REQUEST_LINE_MAX bytes
 * keywords       each of sum, ref, gen, ana that occurs, ASCII case-insensitive, in the request
 *                line or in the prompt string's first bytes ({@link PromptEstimate}): its weight, once
 * tokens         the prompt's token estimate under the calibrated gain ({@link PromptEstimate})
 * score          min(255, tokens + keyword bonus)
 * </pre>
 *
 * The score is what the guests compute from the true cl100k count (prompt tokens plus the same
 * keyword bonus), so a tier's own assessment judges the estimate on the same scale.
 * The request-line hash ({@link #requestLineHash}, over the same bounded line) and the body length are stored with
 * the kernel verdict, so the data plane can check that a verdict belongs to the request it serves.
 * How the kernel finds the request line and the body length in raw segment bytes (1024-byte
 * window, method token, Content-Length syntax, end of head) is {@link RequestHeadParser}'s javadoc.
 */
public final class Scorer {

    public static final int MAX_SCORE = 255;
    /** Bytes of the request line the kernel scans and hashes (REQUEST_LINE_MAX in nexus_shared.h). */
    public static final int REQUEST_LINE_MAX = 256;

    /** KW_BIT_* in nexus_head.bpf.h, and the windows that set them: three bytes, lower-cased. */
    static final int KW_BIT_SUM = 1;
    static final int KW_BIT_REF = 2;
    static final int KW_BIT_GEN = 4;
    static final int KW_BIT_ANA = 8;
    private static final int KW_SUM = 0x73756d;
    private static final int KW_REF = 0x726566;
    private static final int KW_GEN = 0x67656e;
    private static final int KW_ANA = 0x616e61;

    /** LINE_HASH_SEED and LINE_HASH_MULT in nexus_shared.h. */
    public static final long LINE_HASH_SEED = 0x6a09e667f3bcc908L;
    public static final long LINE_HASH_MULT = 0x9e3779b97f4a7c15L;
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final ScoreWeights weights;
    private final TokenGain gain;

    public Scorer(ScoreWeights weights) {
        this(weights, TokenGain.UNIT);
    }

    public Scorer(ScoreWeights weights, TokenGain gain) {
        this.weights = weights;
        this.gain = gain;
    }

    public ScoreWeights weights() {
        return weights;
    }

    public TokenGain tokenGain() {
        return gain;
    }

    /** Score of a request given its raw request line and its prompt's estimate. */
    public int score(byte[] requestLine, PromptEstimate estimate) {
        int length = Math.min(requestLine.length, REQUEST_LINE_MAX);
        int bits = keywordBits(requestLine, length) | estimate.keywordBits();
        long total = estimate.tokens(TokenGain.effective(gain.gainQ10())) + bonus(bits);
        return (int) Math.min(MAX_SCORE, total);
    }

    /** Score of a request whose body was not seen, only its length (see {@link PromptEstimate#fromLength}). */
    public int score(byte[] requestLine, long bodyLength) {
        return score(requestLine, PromptEstimate.fromLength(bodyLength));
    }

    /**
     * The request-line hash the kernel stores with its verdict (nexus_shared.h, LINE_HASH_*): the first
     * {@link #REQUEST_LINE_MAX} bytes of the line as little-endian 8-byte words, the last one
     * zero-padded, each mixed in by {@link #lineMix}, then their count.
     */
    public static int requestLineHash(byte[] requestLine) {
        int length = Math.min(requestLine.length, REQUEST_LINE_MAX);
        long hash = LINE_HASH_SEED;
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES) {
            hash = lineMix(hash, (long) LONG_LE.get(requestLine, i));
        }
        if (i < length) {
            long tail = 0;
            for (int j = 0; i + j < length; j++) {
                tail |= (requestLine[i + j] & 0xffL) << (8 * j);
            }
            hash = lineMix(hash, tail);
        }
        return (int) lineMix(hash, length);
    }

    /** One step of the request-line hash and of the verdict check (line_mix in verdict_store.bpf.h). */
    public static long lineMix(long hash, long word) {
        long h = (hash ^ word) * LINE_HASH_MULT;
        return h ^ (h >>> 32);
    }

    /** The keyword bit a three-byte, lower-cased window spells, or 0. */
    static int keywordBit(int window) {
        return switch (window) {
            case KW_SUM -> KW_BIT_SUM;
            case KW_REF -> KW_BIT_REF;
            case KW_GEN -> KW_BIT_GEN;
            case KW_ANA -> KW_BIT_ANA;
            default -> 0;
        };
    }

    private int bonus(int bits) {
        int bonus = 0;
        if ((bits & KW_BIT_SUM) != 0) {
            bonus += weights.sum();
        }
        if ((bits & KW_BIT_REF) != 0) {
            bonus += weights.ref();
        }
        if ((bits & KW_BIT_GEN) != 0) {
            bonus += weights.gen();
        }
        if ((bits & KW_BIT_ANA) != 0) {
            bonus += weights.ana();
        }
        return bonus;
    }

    /** ASCII case-insensitive keyword scan of the request line, as the kernel does it. */
    private static int keywordBits(byte[] line, int length) {
        int window = 0;
        int bits = 0;
        for (int i = 0; i < length; i++) {
            window = ((window << 8) | ((line[i] & 0xff) | 0x20)) & 0xffffff;
            bits |= keywordBit(window);
        }
        return bits;
    }
}
