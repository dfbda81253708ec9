package io.nexuscore.classify;

/**
 * The complexity score, in Java. The kernel computes the same function in nexus_classify.bpf.c and
 * a parity test keeps the two equal; change both or neither.
 *
 * <pre>
 * request line   bytes of the head up to the first CR or LF, at most REQUEST_LINE_MAX bytes
 * keyword pass   for each keyword (sum, ref, gen, ana) that occurs anywhere in the request line,
 *                ASCII case-insensitive, add its weight once
 * token pass     tokens = body length &gt;&gt; 2 (body length: Content-Length when the head has it)
 * score          min(255, tokens + keyword bonus)
 * </pre>
 *
 * The request-line hash (FNV-1a 32 over the same bounded line) and the body length are stored with
 * the kernel verdict, so the data plane can check that a verdict belongs to the request it serves.
 * How the kernel finds the request line and the body length in raw segment bytes (1024-byte
 * window, method token, Content-Length syntax, end of head) is {@link RequestHeadParser}'s javadoc.
 */
public final class Scorer {

    public static final int MAX_SCORE = 255;
    /** Bytes of the request line the kernel scans and hashes (REQUEST_LINE_MAX in nexus_shared.h). */
    public static final int REQUEST_LINE_MAX = 256;

    private static final int FNV_OFFSET = 0x811c9dc5;
    private static final int FNV_PRIME = 0x01000193;

    private final ScoreWeights weights;
    private final TokenGain tokenGain;

    public Scorer(ScoreWeights weights) {
        this(weights, TokenGain.UNIT);
    }

    /** @param tokenGain the token estimate's gain in force (kernel mode: the pinned token_model) */
    public Scorer(ScoreWeights weights, TokenGain tokenGain) {
        this.weights = weights;
        this.tokenGain = tokenGain;
    }

    public ScoreWeights weights() {
        return weights;
    }

    public TokenGain tokenGain() {
        return tokenGain;
    }

    /** Score of a request given its raw request line (e.g. {@code POST /v1/tasks/summarize HTTP/1.1}). */
    public int score(byte[] requestLine, long bodyLength) {
        int length = Math.min(requestLine.length, REQUEST_LINE_MAX);
        long total = (bodyLength >>> 2) + keywordBonus(requestLine, length);
        return (int) Math.min(MAX_SCORE, total);
    }

    /** FNV-1a 32-bit over the first {@link #REQUEST_LINE_MAX} bytes of the request line. */
    public static int requestLineHash(byte[] requestLine) {
        int length = Math.min(requestLine.length, REQUEST_LINE_MAX);
        int hash = FNV_OFFSET;
        for (int i = 0; i < length; i++) {
            hash ^= requestLine[i] & 0xff;
            hash *= FNV_PRIME;
        }
        return hash;
    }

    private int keywordBonus(byte[] line, int length) {
        int bonus = 0;
        if (contains(line, length, 's', 'u', 'm')) {
            bonus += weights.sum();
        }
        if (contains(line, length, 'r', 'e', 'f')) {
            bonus += weights.ref();
        }
        if (contains(line, length, 'g', 'e', 'n')) {
            bonus += weights.gen();
        }
        if (contains(line, length, 'a', 'n', 'a')) {
            bonus += weights.ana();
        }
        return bonus;
    }

    /** ASCII case-insensitive search for a lower-case three-letter keyword, as the kernel does it. */
    private static boolean contains(byte[] line, int length, char a, char b, char c) {
        for (int i = 0; i + 2 < length; i++) {
            if ((line[i] | 0x20) == a && (line[i + 1] | 0x20) == b && (line[i + 2] | 0x20) == c) {
                return true;
            }
        }
        return false;
    }
}
