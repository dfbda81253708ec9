package io.nexuscore.classify;

/**
 * The prompt's token estimate, in Java. The kernel computes the same in nexus_prompt.bpf.h and nexus_score.bpf.h
 * (find_prompt_key, prompt_string_start, scan_prompt, prompt_tokens_q10) and ParityTest keeps the
 * two equal; change both or neither. It estimates the prompt's tokens, not the envelope's bytes:
 *
 * <pre>
 * visible body    the body's first BODY_WINDOW (256) bytes, whichever segment carries them (in the
 *                 kernel: after the end of the head in the head's segment, or from the first
 *                 byte of the segment that follows a head without body bytes); the kernel's
 *                 verdict is blind when its segment shows fewer than min(body length, 256)
 * prompt keys     "prompt", "content", "text", "system", "input" or "instructions" keys (chat,
 *                 completions, the Messages and Responses APIs), quotes included, starting at
 *                 least 8 bytes (9 for "content", 14 for "instructions") before the visible body's end, the first PROMPT_STRINGS (8)
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
 * rest            body bytes after the scan beyond an allowance: past the last string's closing
 *                 quote TRAILER_ALLOWANCE (48); past the window's end, inside a string,
 *                 FLAT_TRAILER (16) when the first string is a "prompt" or "input" key's, else
 *                 PROMPT_ENVELOPE (80) less the bytes before the first string, at least 0;
 *                 more messages or the prompt's unseen part,
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
 *
 * <p>Over 400 lines for a reason: it is the kernel's prompt scan (nexus_prompt.bpf.h) mirrored step
 * for step, one file beside the C so a reader can hold the two side by side; ParityTest and
 * SegmentedBodyParityTest keep them equal.
 */
public record PromptEstimate(long tokensQ10, int keywordBits, boolean blind) {

    /** KEYWORD_SCAN_BYTES in nexus_shared.h. */
    public static final int KEYWORD_SCAN_BYTES = 64;
    /** TRAILER_ALLOWANCE in nexus_shared.h. */
    public static final int TRAILER_ALLOWANCE = 48;
    /** BODY_WINDOW in nexus_shared.h: the body bytes a scan reads; the rest is extrapolated. */
    public static final int BODY_WINDOW = 256;
    /** PROMPT_ENVELOPE in nexus_shared.h: a chat's envelope around its prompt, bytes before and after. */
    public static final int PROMPT_ENVELOPE = 80;
    /** FLAT_TRAILER in nexus_shared.h: what follows a cut top-level "prompt" or "input" string. */
    public static final int FLAT_TRAILER = 16;
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
    /** The Responses API's and the Messages API's prompt keys: their strings are prompt text too. */
    private static final byte[] SYSTEM_KEY = "\"system\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] INPUT_KEY = "\"input\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] INSTRUCTIONS_KEY = "\"instructions\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** A request whose body the scorer did not see at all: the estimate from its length alone. */
    public static PromptEstimate fromLength(long bodyLength) {
        long bytes = Math.min(EXTRA_MAX, Math.max(0, bodyLength - ENVELOPE_GUESS));
        return new PromptEstimate(bytes * TOKEN_PER_BYTE_Q10, 0, bodyLength > 0);
    }

    /** What {@link #ofPrompt} counts before the prompt: its key and the string's opening quote. */
    private static final int PROMPT_STRING_START = "\"prompt\":\"".length();

    /** The most of a prompt {@link #ofPrompt} scans; the rest is counted at the rate seen, as past the window. */
    public static final int PROMPT_SCAN_MAX = 16 * 1024;

    /**
     * The estimate of a prompt known as text (the data plane's parse of the body): the same scan as
     * over a body {@code {"prompt":"..."}} holding the prompt alone, written as a JSON string the way
     * clients write it (quotes, backslashes and control characters escaped, other characters as
     * UTF-8), every byte visible up to {@link #PROMPT_SCAN_MAX}. Nothing else of the body counts.
     * The scan reads the prompt's UTF-8 (the JDK's encoder) and takes each character a client
     * escapes as its escape, so the JSON string is never written out.
     */
    public static PromptEstimate ofPrompt(String prompt) {
        // The whole prompt's UTF-8: the JDK's encoder is faster than a walk over the characters, and
        // the body holding the prompt is as large and already in memory.
        byte[] text = prompt.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int cut = scannedPart(text, PROMPT_SCAN_MAX - PROMPT_STRING_START - 1); // the closing quote must fit too
        Features f = new Features();
        f.startString(KEYWORD_SCAN_BYTES);
        f.feed(text, 0, cut, true);
        long length = PROMPT_STRING_START + f.raw + 1;
        if (cut == text.length) {
            return estimate(f, length, length); // the whole string, closing quote included: nothing unseen
        }
        for (int i = cut; i < text.length; i++) {
            length += escapedBytes(text[i] & 0xff);
        }
        // Cut inside the string, as a scan of {"prompt":"..."} whose window ends there: a flat body.
        return estimate(f, PROMPT_STRING_START + f.raw, length, FLAT_TRAILER);
    }

    /**
     * How many bytes of the UTF-8 {@code text} a scan of at most {@code budget} bytes of its JSON
     * string takes: whole characters, each as many bytes as its escape takes.
     */
    private static int scannedPart(byte[] text, int budget) {
        if (text.length <= budget / 6) {
            return text.length; // no escape is longer than six bytes
        }
        long escaped = 0;
        int cut = 0;
        for (int i = 0; i < text.length; i++) {
            int c = text[i] & 0xff;
            if ((c & 0xc0) != 0x80) { // a character starts here
                if (escaped > budget) {
                    return cut;
                }
                cut = i;
            }
            escaped += escapedBytes(c);
        }
        return escaped > budget ? cut : text.length;
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** The bytes a UTF-8 byte takes inside a JSON string as clients write it: 2 or 6 for what they escape. */
    private static int escapedBytes(int c) {
        return c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' ? 2 : c < 0x20 ? 6 : 1;
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
     * The estimate of a body as the data plane holds it: its first {@link #BODY_WINDOW} bytes
     * scanned ({@code firstBytes} holds at least min(BODY_WINDOW, bodyLength) of them), the rest
     * extrapolated. The kernel scores the same bytes whichever segments carry them, so this is its
     * decision for any client that gets a verdict (SegmentedBodyParityTest).
     */
    public static PromptEstimate ofBody(byte[] firstBytes, long bodyLength) {
        return scan(firstBytes, 0, firstBytes.length, bodyLength);
    }

    /**
     * Scans the visible part of a body of {@code bodyLength} bytes that starts at {@code bodyFrom}:
     * {@code bytes[bodyFrom, visibleEnd)}, at most {@link #BODY_WINDOW} bytes of it. Blind when no
     * prompt string is visible in a body that is not empty, or when the visible part is shorter
     * than the window would be (the kernel's segment ended first).
     */
    public static PromptEstimate scan(byte[] bytes, int bodyFrom, int visibleEnd, long bodyLength) {
        return scan(bytes, bodyFrom, visibleEnd, bodyLength, BODY_WINDOW);
    }

    /** {@link #scan(byte[], int, int, long)} with another window (bench/sample-curve.sh's curve). */
    public static PromptEstimate scan(byte[] bytes, int bodyFrom, int visibleEnd, long bodyLength, int window) {
        int end = Math.min(Math.min(visibleEnd, bytes.length), bodyFrom + window);
        boolean cut = end - bodyFrom < Math.min(bodyLength, window);
        Features f = new Features();
        int first = -1; // the first string's start: keywords count in the bytes up to KEYWORD_SCAN_BYTES after it
        boolean flat = false; // the first string is a "prompt" or "input" key's: a top-level string (completions, tasks, Responses)
        int scanEnd = -1; // just past the last string scanned, or end when one ran into it
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
                flat = keyEnd >= PROMPT_KEY.length && matches(bytes, keyEnd - PROMPT_KEY.length, PROMPT_KEY)
                        || keyEnd >= INPUT_KEY.length && matches(bytes, keyEnd - INPUT_KEY.length, INPUT_KEY);
            }
            f.startString(Math.max(0, first + KEYWORD_SCAN_BYTES - start));
            int closing = f.feed(bytes, start, end, false);
            if (closing < 0) {
                scanEnd = end;
                break;
            }
            scanEnd = closing + 1;
            from = closing + 1;
        }
        if (first < 0) {
            return fromLength(bodyLength); // blind: the body is not empty
        }
        // A string cut by the window's end: what follows is its rest and the envelope's other part.
        int allowance = scanEnd != end ? TRAILER_ALLOWANCE
                : flat ? FLAT_TRAILER
                : Math.max(0, PROMPT_ENVELOPE - (first - bodyFrom));
        PromptEstimate seen = estimate(f, scanEnd - bodyFrom, bodyLength, allowance);
        return cut ? new PromptEstimate(seen.tokensQ10(), seen.keywordBits(), true) : seen;
    }

    /**
     * The estimate from the features of the strings scanned, the body's first {@code consumed} bytes
     * (the last string's closing quote included), and the rest counted at the rate seen.
     */
    private static PromptEstimate estimate(Features f, long consumed, long bodyLength) {
        return estimate(f, consumed, bodyLength, TRAILER_ALLOWANCE);
    }

    private static PromptEstimate estimate(Features f, long consumed, long bodyLength, int allowance) {
        long seen = f.tokensQ10();
        long extra = Math.min(EXTRA_MAX, Math.max(0, bodyLength - consumed - allowance));
        long q10 = f.raw > 0 ? seen + extra * seen / f.raw : extra * TOKEN_PER_BYTE_Q10;
        return new PromptEstimate(Math.min(q10, Q10_MAX), f.keywords, false);
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

        /** What each unit adds, in 1/1024 tokens, by its class and the two before it (index {@link #history}). */
        private static final long[] UNIT_Q10 = unitWeights(TOKEN_PER_WORD_Q10, TOKEN_PER_BLANK_RUN_Q10,
                TOKEN_PER_PUNCT_RUN_Q10, TOKEN_PER_DIGIT_RUN_Q10, TOKEN_PER_LETTER_Q10);

        private final long[] unitQ10;
        private final long letterQ10;
        /** The units' weights and the escapes' extra letters, in 1/1024 tokens. */
        long unitsQ10;
        /** The block weights of the non-ASCII characters seen, in 1/1024 tokens. */
        long charsQ10;
        /** The bytes of the prompt strings fed, each escape at its written length. */
        long raw;
        /** The classes of the last three units, three bits each, the latest lowest. */
        int history = BREAK << 3 | BREAK;
        int escape;
        int hexA;
        int hexB;
        /** The lead byte of a three-byte character whose second byte comes next; 0 otherwise. */
        int lead;
        /** The last three bytes fed to {@link #keyword}, lower-cased, in the string being scanned. */
        int window;
        /** KW_BIT_* found so far. */
        int keywords;
        /** The bytes still to come that go to the keyword window. */
        int keywordBytesLeft;

        /**
         * A new prompt string, whose first {@code keywordBytes} bytes go to the keyword window: its
         * first character starts a run, as after the line break the guests join messages with.
         */
        void startString(int keywordBytes) {
            history = BREAK << 3 | BREAK;
            lead = 0;
            window = 0;
            keywordBytesLeft = keywordBytes;
        }

        /** A byte inside the keyword window: a keyword ends at it when the last three spell one. */
        private void keyword(int c) {
            window = slide(window, c);
            keywords |= Scorer.keywordBit(window);
        }

        /** The keyword window after byte {@code c}: the last three bytes, ASCII lower-cased. */
        private static int slide(int window, int c) {
            return ((window << 8) | (c | 0x20)) & 0xffffff;
        }

        /**
         * Feeds the bytes of a prompt string from {@code b[from, end)}. With {@code text} false they
         * are the string as written (escapes included) and the feed stops at its closing quote,
         * whose index it returns (-1 when the string runs to {@code end}); with {@code text} true
         * they are the string's content as UTF-8, each byte a client escapes fed as its escape.
         * ASCII outside escapes (most bytes) takes a loop over locals: the fields' loads and stores
         * per byte cost more than the rest of the work. Every other byte goes through {@link #add}.
         */
        int feed(byte[] b, int from, int end, boolean text) {
            long[] weights = unitQ10;
            byte[] classes = ASCII_CLASS;
            int h = history;
            long units = unitsQ10;
            int keywordLeft = keywordBytesLeft;
            int w = window;
            long expanded = 0; // escapes' bytes beyond the one they stand for
            boolean plain = escape == 0 && lead == 0;
            int i = from;
            for (; i < end; i++) {
                int c = b[i] & 0xff;
                if (plain && c >= 0x20 && c < 0x80 && c != '\\' && c != '"') {
                    if (keywordLeft > 0) { // as keyword(c) does
                        keywordLeft--;
                        w = slide(w, c);
                        keywords |= Scorer.keywordBit(w);
                    }
                    h = (h << 3 | classes[c]) & 0x1ff;
                    units += weights[h];
                    continue;
                }
                if (!text && escape == 0 && c == '"') {
                    break;
                }
                history = h;
                unitsQ10 = units;
                keywordBytesLeft = keywordLeft;
                window = w;
                if (text && escapedBytes(c) > 1) {
                    expanded += addEscaped(c) - 1;
                } else {
                    add(c);
                }
                h = history;
                units = unitsQ10;
                keywordLeft = keywordBytesLeft;
                w = window;
                plain = escape == 0 && lead == 0;
            }
            history = h;
            unitsQ10 = units;
            keywordBytesLeft = keywordLeft;
            window = w;
            raw += i - from + expanded;
            return i < end ? i : -1;
        }

        /** Feeds the escape a client writes for {@code c}; returns its length. */
        private int addEscaped(int c) {
            add('\\');
            if (escapedBytes(c) == 2) {
                add(c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c);
                return 2;
            }
            add('u');
            add('0');
            add('0');
            add(HEX[c >> 4]);
            add(HEX[c & 0xf]);
            return 6;
        }

        /** The next byte of a prompt string (its closing quote excluded). */
        void add(int c) {
            if (keywordBytesLeft > 0) {
                keywordBytesLeft--;
                keyword(c);
            }
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
                unitsQ10 += letterQ10 * (hexA == '0' && c >= '0' && c <= '7' ? 1 : 2); // below U+0800: two UTF-8 bytes
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
                unit(ASCII_CLASS[c]);
            }
        }

        /** The class of each ASCII byte outside an escape: letters, digits, the blank; the rest is punctuation. */
        private static final byte[] ASCII_CLASS = asciiClasses();

        private static byte[] asciiClasses() {
            byte[] classes = new byte[0x80];
            for (int c = 0; c < classes.length; c++) {
                int lower = c | 0x20;
                classes[c] = (byte) (lower >= 'a' && lower <= 'z' ? LETTER : c >= '0' && c <= '9' ? DIGIT : c == ' ' ? BLANK : PUNCT);
            }
            return classes;
        }

        /** A hex digit's value; anything else counts as 0 (a malformed escape still ends four bytes on). */
        static int hexValue(int c) {
            int lower = c | 0x20;
            return c >= '0' && c <= '9' ? c - '0' : lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : 0;
        }

        /** The scan as the estimate weighs it. */
        Features() {
            this(UNIT_Q10, TOKEN_PER_LETTER_Q10);
        }

        /**
         * A scan whose units weigh {@code unitQ10} (from {@link #unitWeights}) and whose escapes'
         * extra letters weigh {@code letterQ10}: with one feature's weight 1 and the others' 0, it
         * counts that feature (the estimator's fit).
         */
        Features(long[] unitQ10, long letterQ10) {
            this.unitQ10 = unitQ10;
            this.letterQ10 = letterQ10;
        }

        /**
         * The weight of a unit of each class after each pair of classes: a letter starting a run is a
         * word, digits and punctuation count per run, a blank counts when it is the second of its run,
         * every letter counts.
         */
        static long[] unitWeights(long word, long secondBlank, long punctRun, long digitRun, long letter) {
            long[] weights = new long[1 << 9];
            for (int prev2 = 0; prev2 <= PUNCT; prev2++) {
                for (int prev = 0; prev <= PUNCT; prev++) {
                    for (int cls = 0; cls <= PUNCT; cls++) {
                        boolean fresh = prev != cls;
                        weights[prev2 << 6 | prev << 3 | cls] = cls == LETTER ? letter + (fresh ? word : 0)
                                : cls == DIGIT ? (fresh ? digitRun : 0)
                                : cls == PUNCT ? (fresh ? punctRun : 0)
                                : cls == BLANK && prev == BLANK && prev2 != BLANK ? secondBlank : 0;
                    }
                }
            }
            return weights;
        }

        /**
         * One character (or UTF-8 byte) of class {@code cls}: a table lookup, no branch on the class
         * (text changes class every few bytes, and a mispredicted branch per change cost more than
         * the rest of the scan).
         */
        private void unit(int cls) {
            history = (history << 3 | cls) & 0x1ff;
            unitsQ10 += unitQ10[history];
        }

        long tokensQ10() {
            return unitsQ10 + charsQ10;
        }
    }

    /** Index just past the first prompt key (see the class javadoc) starting at least 8 bytes before end, or -1. */
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
            if (matches(b, i, SYSTEM_KEY)) {
                return i + SYSTEM_KEY.length;
            }
            if (matches(b, i, INPUT_KEY)) {
                return i + INPUT_KEY.length;
            }
            if (i + INSTRUCTIONS_KEY.length <= end && matches(b, i, INSTRUCTIONS_KEY)) {
                return i + INSTRUCTIONS_KEY.length;
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
