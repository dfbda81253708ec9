package io.nexuscore.classify;

/**
 * The prompt's token estimate, in Java. The kernel computes the same in nexus_classify.bpf.c
 * (find_prompt_key, prompt_string_start, scan_prompt, prompt_tokens_q10) and ParityTest keeps the
 * two equal; change both or neither. It estimates the prompt's tokens, not the envelope's bytes:
 *
 * <pre>
 * visible body    the body bytes inside the first HEAD_WINDOW bytes of the request (in the kernel:
 *                 after the end of the head in the segment that starts it)
 * prompt keys     "prompt", "content" or "text" keys, quotes included, starting at least 8 bytes
 *                 (9 for "content") before the visible body's end, the first PROMPT_STRINGS (8)
 *                 of them in order, each searched for after the previous one's string (so a
 *                 chat's messages, a system prompt's and the question's, content parts' texts; a
 *                 completion's or a task's prompt)
 * prompt string   after a key, within 16 bytes: blanks, ':', blanks, '"'; otherwise (a list of
 *                 content parts, the "text" of "type":"text", null, a key too near the end) that
 *                 key has none and the search goes on
 * scan            each string from its opening to its closing quote or the end of the visible body
 *                 (which ends the scan), its first character starting a run, byte by byte
 *                 ({@link Features}): letter runs (words), punctuation runs, digit runs, the
 *                 second blank of each blank run, letters (bytes &gt;= 0x80 are letters), and each
 *                 non-ASCII character's block weight ({@link TokenBlocks}); keywords sum, ref, gen,
 *                 ana ending in the KEYWORD_SCAN_BYTES bytes from the first string's start (raw,
 *                 ASCII case-insensitive, the window of three bytes starting afresh in each
 *                 string), as the guests scan the prompt
 * tokens seen     537 words + 657 second blanks + 909 punctuation runs + 2005 digit runs
 *                 + 129 letters + the characters' block weights, in 1/1024 tokens
 * rest            body bytes after the scan (past the last string's closing quote, or past the
 *                 window) beyond TRAILER_ALLOWANCE: more messages or the prompt's unseen part,
 *                 counted at the seen rate (tokens seen * rest / bytes scanned); with nothing
 *                 scanned, 241 per byte; the envelope between the strings counts for nothing
 * no string       (body length - ENVELOPE_GUESS) * 241, at least 0; the kernel marks such a
 *                 verdict blind (VERDICT_F_BLIND) when the body is not empty
 * tokens          (tokens seen and rest * gain + 2^19) &gt;&gt; 20, gain in Q10 (TokenGain)
 * </pre>
 *
 * The coefficients follow cl100k_base's pre-tokenizer: a word with the blank before it is about a
 * token (long or non-English words more, hence the per-letter term), a digit run is the blank
 * before it plus its digits in groups of three, a punctuation run is about one. They are one
 * weighted least-squares fit on real text (GSM8K, MT-Bench, Chinese, German and Russian manual
 * pages, Java source) and were checked on text they were not fitted to (bench/data, C, YAML,
 * English, Spanish and Japanese manual pages): mean relative error 3-10 %. What a non-ASCII
 * character costs depends on its script (about 0.6 tokens beyond its letters for CJK, 2.5 for
 * Oriya): {@link TokenBlocks} has a weight per block of 64 code points, fitted per script on
 * translations of one half of Debian's packages and checked on the other half (bench/estimator-fit.sh).
 * Latin-script languages other than English still come out 0-20 % low (their words split into more
 * tokens than English words of the same length); the calibrated gain corrects that for traffic that
 * is mostly of one language.
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
    /** TOKEN_PER_*_Q10 in nexus_shared.h: tokens per feature, Q10. */
    public static final int TOKEN_PER_WORD_Q10 = 537;
    public static final int TOKEN_PER_BLANK_RUN_Q10 = 657;
    public static final int TOKEN_PER_PUNCT_RUN_Q10 = 909;
    public static final int TOKEN_PER_DIGIT_RUN_Q10 = 2005;
    public static final int TOKEN_PER_LETTER_Q10 = 129;
    /** TOKEN_PER_BYTE_Q10: a byte of unseen text, ~4.25 bytes per token. */
    public static final int TOKEN_PER_BYTE_Q10 = 241;
    /** PROMPT_EXTRA_MAX in nexus_shared.h: unseen bytes counted at most. */
    public static final long EXTRA_MAX = 1L << 24;
    /** PROMPT_Q10_MAX in nexus_shared.h (far above 255 tokens). */
    public static final long Q10_MAX = 1L << 40;
    /** PROMPT_COLON_MAX in nexus_shared.h. */
    public static final int COLON_MAX = 16;
    /** PROMPT_STRINGS in nexus_shared.h: the prompt keys a scan looks at, at most (a chat's first messages). */
    public static final int PROMPT_STRINGS = 8;

    private static final byte[] PROMPT_KEY = "\"prompt\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] CONTENT_KEY = "\"content\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] TEXT_KEY = "\"text\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** A request whose body the scorer did not see at all: the estimate from its length alone. */
    public static PromptEstimate fromLength(long bodyLength) {
        long bytes = Math.min(EXTRA_MAX, Math.max(0, bodyLength - ENVELOPE_GUESS));
        return new PromptEstimate(bytes * TOKEN_PER_BYTE_Q10, 0, bodyLength > 0);
    }

    /** What {@link #ofPrompt} writes before the prompt: its key and the string's opening quote. */
    private static final byte[] PROMPT_STRING_START = "\"prompt\":\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** The most of a prompt {@link #ofPrompt} scans; the rest is counted at the rate seen, as past the window. */
    public static final int PROMPT_SCAN_MAX = 16 * 1024;

    /**
     * The estimate of a prompt known as text (the data plane's parse of the body): the same scan over
     * the prompt alone, written as a JSON string the way clients write it (quotes, backslashes and
     * control characters escaped, other characters as UTF-8), every byte visible up to
     * {@link #PROMPT_SCAN_MAX}. Nothing else of the body counts.
     */
    public static PromptEstimate ofPrompt(String prompt) {
        // Only the scanned part is written out; the rest is only measured (a prompt can be a megabyte).
        StringBuilder visible = new StringBuilder(Math.min(prompt.length(), PROMPT_SCAN_MAX) + 16);
        long length = PROMPT_STRING_START.length + 1; // and the closing quote
        for (int i = 0; i < prompt.length(); i++) {
            char c = prompt.charAt(i);
            int escaped = escapedLength(c);
            length += escaped != 0 ? escaped : utf8Bytes(c);
            if (length > PROMPT_SCAN_MAX) {
                continue; // past the scanned part only the length counts: nothing is written (or allocated) per char
            }
            if (escaped == 0) {
                visible.append(c);
            } else if (escaped == 2) {
                visible.append('\\').append(c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c);
            } else {
                visible.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        byte[] key = PROMPT_STRING_START;
        byte[] text = visible.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] bytes = java.util.Arrays.copyOf(key, key.length + text.length + 1);
        System.arraycopy(text, 0, bytes, key.length, text.length);
        boolean whole = length <= PROMPT_SCAN_MAX;
        bytes[bytes.length - 1] = (byte) (whole ? '"' : ' ');
        return scan(bytes, 0, whole ? bytes.length : bytes.length - 1, length);
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** The bytes {@code c} takes as a client's JSON library escapes it inside a string; 0 when it is not escaped. */
    private static int escapedLength(char c) {
        return c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' ? 2 : c < 0x20 ? 6 : 0;
    }

    /** The bytes of {@code prompt} in UTF-8, counted without encoding it. */
    public static long utf8Length(String prompt) {
        long length = 0;
        for (int i = 0; i < prompt.length(); i++) {
            length += utf8Bytes(prompt.charAt(i));
        }
        return length;
    }

    /** A char's share of its UTF-8 bytes: a surrogate is half of a four-byte character. */
    private static int utf8Bytes(char c) {
        return c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
    }

    /**
     * Scans {@code bytes[bodyFrom, visibleEnd)}, the visible part of a body of {@code bodyLength} bytes.
     */
    public static PromptEstimate scan(byte[] bytes, int bodyFrom, int visibleEnd, long bodyLength) {
        int end = Math.min(visibleEnd, bytes.length);
        Features f = new Features();
        int first = -1; // the first string's start: keywords count in the bytes up to KEYWORD_SCAN_BYTES after it
        int scanEnd = -1; // just past the last string scanned, or end when one ran into it
        int keywords = 0;
        int from = bodyFrom;
        for (int key = 0; key < PROMPT_STRINGS && from < end; key++) {
            int keyEnd = keyEnd(bytes, from, end);
            if (keyEnd < 0) {
                break;
            }
            int start = stringStart(bytes, keyEnd, end);
            if (start < 0) {
                from = keyEnd; // content parts, null: look for the next key
                continue;
            }
            if (first < 0) {
                first = start;
            }
            f.startString();
            int window = 0;
            int closing = -1;
            for (int i = start; i < end; i++) {
                int c = bytes[i] & 0xff;
                if (f.escape == 0 && c == '"') {
                    closing = i;
                    break;
                }
                f.raw++;
                if (i - first < KEYWORD_SCAN_BYTES) {
                    window = ((window << 8) | (c | 0x20)) & 0xffffff;
                    keywords |= Scorer.keywordBit(window);
                }
                f.add(c);
            }
            if (closing < 0) {
                scanEnd = end;
                break;
            }
            scanEnd = closing + 1;
            from = closing + 1;
        }
        if (first < 0) {
            return fromLength(bodyLength);
        }
        long seen = f.tokensQ10();
        long consumed = scanEnd - bodyFrom;
        long extra = Math.min(EXTRA_MAX, Math.max(0, bodyLength - consumed - TRAILER_ALLOWANCE));
        long q10 = f.raw > 0 ? seen + extra * seen / f.raw : extra * TOKEN_PER_BYTE_Q10;
        return new PromptEstimate(Math.min(q10, Q10_MAX), keywords, false);
    }

    /**
     * The features of the prompt string's characters, byte by byte (scan_prompt in the kernel):
     * runs of letters, of punctuation, of digits, second blanks of blank runs, letters, and the
     * block weights of non-ASCII characters ({@link TokenBlocks}): a two-byte character's at its
     * lead byte, a three-byte one's at its second byte, a four-byte one's at its lead. An escape is
     * one character: backslash-u XXXX a letter standing for the 2 or 3 UTF-8 bytes of its code
     * point, weighed at its third hex digit; \n and \r a line break, \t a blank, any other a
     * punctuation mark.
     */
    static final class Features {
        static final int LETTER = 0;
        static final int DIGIT = 1;
        static final int BLANK = 2;
        static final int BREAK = 3;
        static final int PUNCT = 4;
        /** escape: right after the backslash; 4..1: the backslash-u's hex digits still to come. */
        static final int ESCAPE_STARTED = 5;

        long words;
        long secondBlanks;
        long punctRuns;
        long digitRuns;
        long letters;
        /** The block weights of the non-ASCII characters seen, in 1/1024 tokens. */
        long charsQ10;
        long raw;
        int prev = BREAK;
        int prev2 = BREAK;
        int escape;
        int hexA;
        int hexB;
        /** The lead byte of a three-byte character whose second byte comes next; 0 otherwise. */
        int lead;

        /** A new prompt string: its first character starts a run, as after the line break the guests join messages with. */
        void startString() {
            prev = BREAK;
            prev2 = BREAK;
            lead = 0;
        }

        void add(int c) {
            int pendingLead = lead;
            lead = 0;
            if (escape == ESCAPE_STARTED) {
                if (c == 'u') {
                    unit(LETTER);
                    escape = 4;
                } else {
                    unit(c == 'n' || c == 'r' ? BREAK : c == 't' ? BLANK : PUNCT);
                    escape = 0;
                }
            } else if (escape == 4) {
                hexA = c;
                escape = 3;
            } else if (escape == 3) {
                hexB = c;
                letters += hexA == '0' && c >= '0' && c <= '7' ? 1 : 2; // below U+0800: two UTF-8 bytes
                escape = 2;
            } else if (escape == 2) {
                charsQ10 += TokenBlocks.weightQ10(hexValue(hexA) << 6 | hexValue(hexB) << 2 | hexValue(c) >> 2);
                escape = 1;
            } else if (escape != 0) {
                escape--;
            } else if (c == '\\') {
                escape = ESCAPE_STARTED;
            } else if (c >= 0x80) {
                unit(LETTER);
                if (c >= 0xf0) {
                    charsQ10 += TokenBlocks.weightQ10(TokenBlocks.SUPPLEMENTARY);
                } else if (c >= 0xe0) {
                    lead = c;
                } else if (c >= 0xc0) {
                    charsQ10 += TokenBlocks.weightQ10(c & 0x1f);
                } else if (pendingLead != 0) {
                    charsQ10 += TokenBlocks.weightQ10((pendingLead & 0x0f) << 6 | (c & 0x3f));
                }
            } else {
                int lower = c | 0x20;
                unit(lower >= 'a' && lower <= 'z' ? LETTER : c >= '0' && c <= '9' ? DIGIT : c == ' ' ? BLANK : PUNCT);
            }
        }

        /** A hex digit's value; anything else counts as 0 (a malformed escape still ends four bytes on). */
        static int hexValue(int c) {
            int lower = c | 0x20;
            return c >= '0' && c <= '9' ? c - '0' : lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : 0;
        }

        private void unit(int cls) {
            if (cls == LETTER) {
                letters++;
                words += prev != LETTER ? 1 : 0;
            } else if (cls == DIGIT) {
                digitRuns += prev != DIGIT ? 1 : 0;
            } else if (cls == PUNCT) {
                punctRuns += prev != PUNCT ? 1 : 0;
            } else if (cls == BLANK) {
                secondBlanks += prev == BLANK && prev2 != BLANK ? 1 : 0;
            }
            prev2 = prev;
            prev = cls;
        }

        long tokensQ10() {
            return TOKEN_PER_WORD_Q10 * words + TOKEN_PER_BLANK_RUN_Q10 * secondBlanks + TOKEN_PER_PUNCT_RUN_Q10 * punctRuns
                    + TOKEN_PER_DIGIT_RUN_Q10 * digitRuns + TOKEN_PER_LETTER_Q10 * letters + charsQ10;
        }
    }

    /** Index just past the first prompt key ("prompt", "content", "text") starting at most 8 bytes before end, or -1. */
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
            if (matches(b, i, TEXT_KEY)) { // a content part's text; like every key, only where 8 bytes are left
                return i + TEXT_KEY.length;
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

    /** Estimated tokens under {@code gainQ10}, rounded (the token part of the score, before keywords). */
    public long tokens(int gainQ10) {
        return (tokensQ10 * gainQ10 + (1L << 19)) >> 20;
    }

    /** The estimate at unit gain in 1/16 tokens (latency_event.estimate_q4), saturating. */
    public int estimateQ4() {
        return (int) Math.min(Integer.MAX_VALUE, tokensQ10 >> 6);
    }
}
