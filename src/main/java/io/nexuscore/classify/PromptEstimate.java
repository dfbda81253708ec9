package io.nexuscore.classify;

/**
 * The prompt's token estimate, in Java. The kernel computes the same in nexus_classify.bpf.c
 * (find_prompt_key, prompt_string_start, scan_prompt, prompt_tokens_q10) and ParityTest keeps the
 * two equal; change both or neither. It estimates the prompt's tokens, not the envelope's bytes:
 *
 * <pre>
 * visible body    the body bytes inside the first HEAD_WINDOW bytes of the request (in the kernel:
 *                 after the end of the head in the segment that starts it)
 * prompt key      the first "prompt" or "content" key, quotes included, wholly in the visible body
 *                 (so a chat's first message, a completion's or a task's prompt)
 * prompt string   after the key, within 16 bytes: blanks, ':', blanks, '"'; otherwise (content
 *                 parts, null, a key too near the end) there is no prompt string
 * scan            from there to the closing quote or the end of the visible body:
 *                   units   characters as the JSON string holds them, an escape ("\n", "\u2019") one
 *                   others  units that are not ASCII letters (digits, blanks, punctuation, bytes
 *                           of multi-byte characters, escapes)
 *                   keywords sum, ref, gen, ana in the string's first KEYWORD_SCAN_BYTES bytes
 *                           (raw bytes, ASCII case-insensitive), as the guests scan the prompt
 * rest            body bytes after the scan (past the closing quote, or past the window) beyond
 *                 TRAILER_ALLOWANCE: more messages or the prompt's unseen part, counted at the
 *                 scanned mix (units += rest * units / bytes scanned, the same for others)
 * no string       units = body length - ENVELOPE_GUESS (at least 0), others = units / 5; the
 *                 kernel marks such a verdict blind (VERDICT_F_BLIND) when the body is not empty
 * tokens          ((97 * units + 627 * others) * gain + 2^19) &gt;&gt; 20, gain in Q10 (TokenGain)
 * </pre>
 *
 * The two coefficients are one least-squares fit of cl100k_base counts over real prompts as a
 * whole (0.095 tokens per character plus 0.61 per non-letter: a word and its space come to about
 * one token, digits and punctuation to about one each); the gain is what the adaptive timer refits
 * from the guests' true counts.
 *
 * @param tokensQ10    the estimate at unit gain, in 1/1024 tokens
 * @param keywordBits  KW_BIT_* found in the prompt string ({@link Scorer}'s order: sum 1, ref 2, gen 4, ana 8)
 * @param blind        no prompt string was visible although the body was not empty
 */
public record PromptEstimate(long tokensQ10, int keywordBits, boolean blind) {

    /** KEYWORD_SCAN_BYTES in nexus_shared.h. */
    public static final int KEYWORD_SCAN_BYTES = 64;
    /** TRAILER_ALLOWANCE in nexus_shared.h. */
    public static final int TRAILER_ALLOWANCE = 48;
    /** ENVELOPE_GUESS in nexus_shared.h. */
    public static final int ENVELOPE_GUESS = 64;
    /** TOKEN_PER_UNIT_Q10 in nexus_shared.h. */
    public static final int TOKEN_PER_UNIT_Q10 = 97;
    /** TOKEN_PER_OTHER_Q10 in nexus_shared.h. */
    public static final int TOKEN_PER_OTHER_Q10 = 627;
    /** PROMPT_UNITS_MAX in nexus_classify.bpf.c. */
    static final long UNITS_MAX = 1L << 24;
    /** PROMPT_COLON_MAX in nexus_classify.bpf.c. */
    static final int COLON_MAX = 16;

    private static final byte[] PROMPT_KEY = "\"prompt\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] CONTENT_KEY = "\"content\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** A request whose body the scorer did not see at all: the estimate from its length alone. */
    public static PromptEstimate fromLength(long bodyLength) {
        long units = Math.max(0, bodyLength - ENVELOPE_GUESS);
        return of(units, units / 5, 0, bodyLength > 0);
    }

    /**
     * Scans {@code bytes[bodyFrom, visibleEnd)}, the visible part of a body of {@code bodyLength} bytes.
     */
    public static PromptEstimate scan(byte[] bytes, int bodyFrom, int visibleEnd, long bodyLength) {
        int end = Math.min(visibleEnd, bytes.length);
        int from = bodyFrom < end ? stringStart(bytes, keyEnd(bytes, bodyFrom, end), end) : -1;
        if (from < 0) {
            return fromLength(bodyLength);
        }
        long units = 0;
        long others = 0;
        long raw = 0;
        int escape = 0; // 0 none, 5 right after '\\', 1..4 hex digits left
        int window = 0;
        int keywords = 0;
        int closing = -1;
        for (int i = from; i < end; i++) {
            int c = bytes[i] & 0xff;
            if (escape == 0 && c == '"') {
                closing = i;
                break;
            }
            raw++;
            if (i - from < KEYWORD_SCAN_BYTES) {
                window = ((window << 8) | (c | 0x20)) & 0xffffff;
                keywords |= Scorer.keywordBit(window);
            }
            if (escape != 0) {
                escape = escape == 5 ? (c == 'u' ? 4 : 0) : escape - 1;
                continue;
            }
            units++;
            if (c == '\\') {
                others++;
                escape = 5;
            } else if (!isLetter(c)) {
                others++;
            }
        }
        long consumed = (closing >= 0 ? closing + 1 : end) - bodyFrom;
        long rest = Math.max(0, bodyLength - consumed);
        long extra = Math.max(0, rest - TRAILER_ALLOWANCE);
        long allUnits = units;
        long allOthers = others;
        if (raw > 0) {
            allUnits += extra * units / raw;
            allOthers += extra * others / raw;
        } else {
            allUnits += extra;
            allOthers += extra / 5;
        }
        return of(allUnits, allOthers, keywords, false);
    }

    private static PromptEstimate of(long units, long others, int keywords, boolean blind) {
        long q10 = TOKEN_PER_UNIT_Q10 * Math.min(units, UNITS_MAX) + TOKEN_PER_OTHER_Q10 * Math.min(others, UNITS_MAX);
        return new PromptEstimate(q10, keywords, blind);
    }

    /** Index just past the first prompt key wholly inside [from, end), or -1. */
    private static int keyEnd(byte[] b, int from, int end) {
        for (int i = from; i + PROMPT_KEY.length <= end; i++) {
            if (b[i] != '"') {
                continue;
            }
            if (matches(b, i, PROMPT_KEY)) {
                return i + PROMPT_KEY.length;
            }
            if (i + CONTENT_KEY.length <= end && matches(b, i, CONTENT_KEY)) {
                return i + CONTENT_KEY.length;
            }
        }
        return -1;
    }

    /** Index just past the opening quote of the key's string value, or -1. */
    private static int stringStart(byte[] b, int keyEnd, int end) {
        if (keyEnd < 0) {
            return -1;
        }
        boolean colon = false;
        for (int i = keyEnd; i < keyEnd + COLON_MAX && i < end; i++) {
            int c = b[i];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                continue;
            }
            if (c == ':' && !colon) {
                colon = true;
                continue;
            }
            return colon && c == '"' ? i + 1 : -1;
        }
        return -1;
    }

    private static boolean matches(byte[] b, int at, byte[] key) {
        for (int k = 0; k < key.length; k++) {
            if (b[at + k] != key[k]) {
                return false;
            }
        }
        return true;
    }

    private static boolean isLetter(int c) {
        int lower = c | 0x20;
        return c < 0x80 && lower >= 'a' && lower <= 'z';
    }

    /** Estimated tokens under {@code gainQ10}, rounded (the token part of the score, before keywords). */
    public long tokens(int gainQ10) {
        return (tokensQ10 * gainQ10 + (1L << 19)) >> 20;
    }

    /** The estimate at unit gain in 1/16 tokens (latency_event.estimate_q4), saturating. */
    public int estimateQ4() {
        return (int) Math.min(Integer.MAX_VALUE, tokensQ10 >> 6);
    }
}
