package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.RequestHeadParser;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.config.ScoringConfig;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Parity: for thousands of generated request heads, the kernel's verdict (XDP, via
 * BPF_PROG_TEST_RUN) equals RequestHeadParser + Scorer in Java, with non-default weights and
 * thresholds so that the load-time settings are exercised too.
 */
class ParityTest {

    private static final int PORT = 8080;
    private static final int REQUESTS = 3000;
    /** The kernel's word: its fast paths read the prompt CHUNK bytes at a time. */
    private static final int CHUNK = 8;
    private static final ScoringConfig SCORING = new ScoringConfig(new Thresholds(40, 90), new ScoreWeights(7, 31, 64, 3));

    private static KernelDataPath kernel;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(SCORING, Set.of(PORT));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @Test
    void kernelVerdictEqualsJavaScorer() {
        Random random = new Random(20261129);
        RequestGenerator generator = new RequestGenerator(random);
        int withVerdict = 0;
        for (int i = 0; i < REQUESTS; i++) {
            if (assertParity(generator.next(), 10000 + i).isPresent()) {
                withVerdict++;
            }
        }
        // The generator must mostly produce scoreable heads, or the parity would prove little.
        assertTrue(withVerdict > REQUESTS * 3 / 4, "heads with a verdict: " + withVerdict);
    }

    /**
     * The prompt's keywords are matched a word (8 bytes) at a time in the kernel's fast path and a
     * byte at a time in Java: every keyword, in mixed case, ending at every offset around the
     * word boundaries and the KEYWORD_SCAN_BYTES limit, after plain filler or right after an escape.
     */
    @Test
    void promptKeywordsMatchAtEveryOffset() {
        String[] keywords = {"sUm", "REF", "gen", "AnA"};
        int srcPort = 30000;
        int seen = 0;
        for (String keyword : keywords) {
            for (int at = 0; at <= PromptEstimate.KEYWORD_SCAN_BYTES + 8; at++) {
                int offset = at;
                for (String before : new String[] {"", "\\n"}) {
                    String filler = "x1 ".repeat(40).substring(0, offset);
                    String prompt = (before + filler).substring(0, offset) + keyword + " 7 xx".repeat(30);
                    String body = "{\"prompt\":\"" + prompt + "\"}";
                    String head = "POST /v1/completions HTTP/1.1\r\nHost: r\r\nContent-Length: " + body.length()
                            + "\r\n\r\n";
                    Optional<KernelVerdict> verdict = assertParity((head + body).getBytes(StandardCharsets.ISO_8859_1),
                            srcPort++);
                    boolean inWindow = offset + keyword.length() <= PromptEstimate.KEYWORD_SCAN_BYTES;
                    int withoutKeyword = assertParity((head + body.replace(keyword, "xxx"))
                            .getBytes(StandardCharsets.ISO_8859_1), srcPort++).orElseThrow().score();
                    assertEquals(inWindow, verdict.orElseThrow().score() != withoutKeyword,
                            () -> "keyword " + keyword + " at " + offset + " in " + body);
                    seen++;
                }
            }
        }
        assertTrue(seen > 500, "cases: " + seen);
    }

    /**
     * Non-ASCII characters are weighed per block on the kernel's byte path while ASCII runs take the
     * fast path: every character (2, 3 and 4 bytes, a 3-byte lead before ASCII, a lone continuation
     * byte) at every offset around the 8-byte words, after ASCII filler, gets the Java scorer's score.
     */
    @Test
    void nonAsciiBytesMatchAtEveryOffset() {
        byte[][] pieces = {
            {(byte) 0xce, (byte) 0xb1}, {(byte) 0xe0, (byte) 0xa4, (byte) 0xb9}, {(byte) 0xe4, (byte) 0xb8, (byte) 0xad},
            {(byte) 0xf0, (byte) 0x9f, (byte) 0x98, (byte) 0x80}, {(byte) 0xe0, 'a', (byte) 0xa4}, {(byte) 0x85},
            {(byte) 0xe1, (byte) 0xba}};
        int srcPort = 40000;
        for (byte[] piece : pieces) {
            for (int at = 0; at <= 20; at++) {
                java.io.ByteArrayOutputStream prompt = new java.io.ByteArrayOutputStream();
                prompt.writeBytes("ab cd ef gh ij kl mn op qr".substring(0, at).getBytes(StandardCharsets.US_ASCII));
                prompt.writeBytes(piece);
                prompt.writeBytes(" and then some plain words".getBytes(StandardCharsets.US_ASCII));
                prompt.writeBytes(piece);
                java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
                body.writeBytes("{\"prompt\":\"".getBytes(StandardCharsets.US_ASCII));
                body.writeBytes(prompt.toByteArray());
                body.writeBytes("\"}".getBytes(StandardCharsets.US_ASCII));
                byte[] head = ("POST /v1/completions HTTP/1.1\r\nHost: r\r\nContent-Length: " + body.size() + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII);
                java.io.ByteArrayOutputStream payload = new java.io.ByteArrayOutputStream();
                payload.writeBytes(head);
                payload.writeBytes(body.toByteArray());
                assertTrue(assertParity(payload.toByteArray(), srcPort++).isPresent());
            }
        }
    }

    /**
     * The request line is hashed and searched for keywords a word (8 bytes) at a time in the kernel
     * and a byte at a time in Java: a line ending (CR, LF, the segment's end) at every lane, every
     * keyword ending at every lane after ASCII or non-ASCII bytes, and lines around REQUEST_LINE_MAX
     * (hashed up to it, keywords up to it, the end still found past it) get the Java check and score.
     */
    @Test
    void requestLineMatchesAtEveryLane() {
        String[] keywords = {"sUm", "REF", "gen", "AnA"};
        String[] befores = {"", "x", "\u00e9", "\u00e9\u00e9", "\u4e2d"};
        int srcPort = 50000;
        for (int pathLength = 1; pathLength <= 24; pathLength++) {
            for (String eol : new String[] {"\r\n", "\n"}) {
                String line = "POST /" + "p".repeat(pathLength - 1) + " HTTP/1.1";
                assertTrue(assertParity(bytes(line + eol + "Content-Length: 2" + eol + eol + "{}"), srcPort++).isPresent());
            }
            // No end of line in the segment: the whole segment is the line.
            assertParity(bytes("GET /" + "q".repeat(pathLength)), srcPort++);
        }
        for (String keyword : keywords) {
            for (String before : befores) {
                // Past 40: a keyword cut by the end of scan_line's first iteration (LINE_WORDS words).
                for (int at = 0; at <= 41; at++) {
                    String line = "GET /" + "v".repeat(at) + before + keyword + "/x HTTP/1.1";
                    Optional<KernelVerdict> withKeyword = assertParity(bytes(line + "\r\nHost: r\r\n\r\n"), srcPort++);
                    Optional<KernelVerdict> without = assertParity(
                            bytes(line.replace(keyword, "zzz") + "\r\nHost: r\r\n\r\n"), srcPort++);
                    assertTrue(withKeyword.orElseThrow().score() > without.orElseThrow().score(),
                            () -> "keyword counted in " + line);
                }
            }
        }
        for (int length = Scorer.REQUEST_LINE_MAX - 12; length <= Scorer.REQUEST_LINE_MAX + 12; length++) {
            String path = "/" + "w".repeat(length - "GET  HTTP/1.1".length() - 4) + "gen";
            String line = "GET " + path + " HTTP/1.1";
            assertParity(bytes(line + "\r\nHost: r\r\n\r\n"), srcPort++);
            assertParity(bytes("GET " + path.replace("gen", "ana") + "\r\nHost: r\r\n\r\n"), srcPort++);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * UTF-8 text takes the kernel's fast path (a word of 8 bytes at a time, the 2-byte leads'
     * weights counted against the pair of leads kept from the words before): runs of characters of
     * each width, starting at every lane around the words, between ASCII, escapes and keywords,
     * malformed sequences, and scripts that change the kept pair, get the Java scorer's score. Each
     * body is sent whole and as the first part of a body three times its length, whose estimate
     * extrapolates the visible features (a weight the kernel missed would show there three-fold).
     */
    @Test
    void utf8TextMatchesAtEveryOffset() {
        String[] texts = {
            "Πόσα αυγά πουλάει, με 2 δολάρια το καθένα;", // Greek: leads 0xce, 0xcf
            "Сколько яиц она продаёт, по 2 доллара?", // Cyrillic: 0xd0, 0xd1
            "كم بيضة تبيع كل يوم؟", // Arabic: 0xd8, 0xd9
            "כמה ביצים היא מוכרת", // Hebrew: 0xd7
            "Ça coûte déjà très cher, naïve façon", // Latin accents: 0xc3 between ASCII
            "αβγ абв αβγ ÀÉ абв ξψω", // scripts changing within words: the kept pair changes
            "她每天卖多少个鸡蛋，每个2美元", // CJK: the wide copy, the byte path where ASCII shares a word
            "नमस्ते दुनिया", // Devanagari: 3 bytes
            "ok 😀 fine 🎉🎉 done", // 4-byte characters
            "a\\u00e9b ώ\\n ё\\\"ψ\\t Ж", // escapes between 2-byte characters
            "Περίληψη: sum of REF and gen ana", // keywords after 2-byte text
        };
        byte[][] raw = {
            {(byte) 0x85, (byte) 0xbf, 'a', (byte) 0x80}, // continuation bytes without a lead
            {(byte) 0xce, 'a', (byte) 0xce, (byte) 0xce, (byte) 0xb1}, // a lead followed by ASCII, by a lead
            {(byte) 0xe4, (byte) 0xb8, 'x', (byte) 0xe4, 'y', (byte) 0xad}, // 3-byte sequences cut short
            {(byte) 0xf0, (byte) 0x9f, 'z', (byte) 0xc3}, // a 4-byte sequence cut short, a lone lead
            {(byte) 0xc0, (byte) 0xc1, (byte) 0xdf, (byte) 0xde, (byte) 0xc2, (byte) 0xc3, (byte) 0xcc, (byte) 0xcd}, // leads only
        };
        int srcPort = 42000;
        int cases = assertPiecesAtEveryOffset(texts, raw, " x ", srcPort);
        srcPort += cases;
        // The keyword window's edge (KEYWORD_SCAN_BYTES after the string's start) inside and after 2-byte text.
        for (int at = 40; at <= PromptEstimate.KEYWORD_SCAN_BYTES + 8; at++) {
            byte[] greek = "αβγδεζηθικλμνξοπρστυφχψω".repeat(3).getBytes(StandardCharsets.UTF_8);
            java.io.ByteArrayOutputStream prompt = new java.io.ByteArrayOutputStream();
            prompt.write(greek, 0, at);
            prompt.writeBytes("sUm ref αβ GEN".getBytes(StandardCharsets.UTF_8));
            prompt.writeBytes(greek);
            assertTrue(assertParity(promptRequest(prompt.toByteArray(), 1), srcPort++).isPresent());
            cases++;
        }
        assertTrue(cases > 400, "cases: " + cases);
    }

    /**
     * Wide text (3- and 4-byte characters: CJK, kana, Hangul, emoji) is counted eight bytes at a
     * time by the kernel's wide copy, which weighs a 3-byte character at its lead when the byte
     * after it continues it, and refuses what needs a lookup per block. Runs of such text at every
     * offset, with the bytes it must refuse or weigh apart inside it (a 3-byte character below
     * U+2000, a raw surrogate, Hangul just below the surrogates, a 2-byte letter, ASCII, keywords,
     * leads cut short or followed by another lead, stray continuation and 0xf8+ bytes), and the body
     * window's end at every lane of such a run (a lead in its last lane, its continuation past it).
     */
    @Test
    void wideTextMatchesAtEveryOffset() {
        String cjk = "她每天卖多少个鸡蛋每个鸡蛋两美元";
        byte[][] inserts = {
            {},
            "ひらがなカタカナ".getBytes(StandardCharsets.UTF_8),
            "힘힣한국어".getBytes(StandardCharsets.UTF_8), // U+D798, U+D7A3: lead 0xed before 0x9e
            "😀🎉".getBytes(StandardCharsets.UTF_8),
            "，？【】".getBytes(StandardCharsets.UTF_8), // full-width punctuation, lead 0xef
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, // a raw high surrogate: the table's surrogate block
            {(byte) 0xe0, (byte) 0xa4, (byte) 0xb9}, // Devanagari: a block below U+2000
            {(byte) 0xe1, (byte) 0xba, (byte) 0xa1}, // Vietnamese: lead 0xe1
            {(byte) 0xce, (byte) 0xb1}, // a 2-byte letter
            {'2'}, // ASCII
            "sUm".getBytes(StandardCharsets.US_ASCII), // a keyword right after and before wide text, inside the keyword window
            "rEF gen ".getBytes(StandardCharsets.US_ASCII),
            {(byte) 0xe4, (byte) 0xe4, (byte) 0xb8, (byte) 0xad}, // a lead followed by a lead
            {(byte) 0xe4, (byte) 0xb8}, // a character cut short
            {(byte) 0x80, (byte) 0xbf}, // continuation bytes without a lead
            {(byte) 0xf8, (byte) 0xff, (byte) 0xf0}, // bytes no UTF-8 holds
        };
        int srcPort = 44000;
        int cases = 0;
        for (byte[] insert : inserts) {
            for (int at = 0; at < 16; at++) {
                java.io.ByteArrayOutputStream prompt = new java.io.ByteArrayOutputStream();
                prompt.writeBytes("ab cd ef gh ij kl".substring(0, at).getBytes(StandardCharsets.US_ASCII));
                prompt.writeBytes(cjk.substring(0, 1 + at % 5).getBytes(StandardCharsets.UTF_8));
                prompt.writeBytes(insert);
                prompt.writeBytes(cjk.getBytes(StandardCharsets.UTF_8));
                prompt.writeBytes(insert);
                prompt.writeBytes(cjk.substring(at % 7).getBytes(StandardCharsets.UTF_8));
                for (long factor = 1; factor <= 3; factor += 2) {
                    assertTrue(assertParity(promptRequest(prompt.toByteArray(), factor), srcPort++).isPresent());
                    cases++;
                }
            }
        }
        // A keyword cut by wide text is none (the keyword window forgets what came before a wide
        // word), inside the first KEYWORD_SCAN_BYTES of the string, at every lane.
        for (int at = 0; at < 16; at++) {
            for (int chars = 3; chars <= 8; chars++) {
                String prompt = "x".repeat(at) + "su" + cjk.substring(0, chars) + "m an" + cjk.substring(0, chars) + "a ok";
                assertTrue(assertParity(promptRequest(prompt.getBytes(StandardCharsets.UTF_8), 1), srcPort++).isPresent());
                cases++;
            }
        }
        // The window's end at every lane of a long run of wide text.
        cases += assertWindowEndsAtEveryLane(cjk.repeat(8).getBytes(StandardCharsets.UTF_8), srcPort);
        assertTrue(cases > 400, "cases: " + cases);
    }

    /**
     * Text with 3-byte characters below U+2000 (leads 0xe0 and 0xe1: Devanagari, Bengali, Thai,
     * Georgian, Vietnamese), which the kernel's third fast copy counts beside ASCII: each character
     * weighed by its block, the pair of blocks last looked up kept (within a step and from one step
     * to the next). Words of such scripts with spaces, digits, punctuation and keywords between them,
     * the script (and so the kept pair) changing, CJK, 2-byte letters, emoji, raw surrogates and
     * broken sequences inside, at every offset; and the body window's end at every lane of a long
     * run (a lead in the window's last byte, its continuation past it).
     */
    @Test
    void indicAndThaiTextMatchesAtEveryOffset() {
        String[] texts = {
            "वह हर दिन कितने अंडे बेचती है, 2 डॉलर प्रति अंडा?", // Devanagari: blocks 0x24 and 0x25 (one pair)
            "সে প্রতিদিন কতগুলো ডিম বিক্রি করে?", // Bengali: 0x26, 0x27
            "เธอขายไข่วันละกี่ฟอง ฟองละ 2 ดอลลาร์", // Thai: 0x38, 0x39, no spaces between words
            "नमस्ते সে দিন ไข่ दिन ছে", // the kept pair changing word by word
            "ქართული ენა Tiếng Việt", // Georgian (lead 0xe1, 0x83), Vietnamese (0xe1 0xba/0xbb beside 0xc3)
            "हिंदी 中文 αβγ 😀 हिंदी", // every width in one run
            "summary संक्षेप ref जनरेट gen", // keywords between them
        };
        byte[][] raw = {
            {(byte) 0xe0, (byte) 0xa4, 'x', (byte) 0xe0, (byte) 0xe0, (byte) 0xa5, (byte) 0xa4}, // cut short, a lead after a lead
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80, ' ', (byte) 0xe0, (byte) 0xa4, (byte) 0xb9}, // a raw surrogate beside Devanagari
            {(byte) 0xe0, (byte) 0x80, (byte) 0x80, (byte) 0xe1, (byte) 0x80, (byte) 0xbf}, // overlong forms: blocks 0 and 64
            {(byte) 0xe0, (byte) 0xa4, (byte) 0xc3, (byte) 0xa9, (byte) 0xf0, (byte) 0xe0, (byte) 0xb8, (byte) 0x81}, // a 2-byte lead, a 4-byte lead after leads
        };
        int srcPort = 46000;
        int cases = assertPiecesAtEveryOffset(texts, raw, " 7 ", srcPort);
        srcPort += cases;
        cases += assertWindowEndsAtEveryLane("कितने अंडे बेचती है ".repeat(12).getBytes(StandardCharsets.UTF_8), srcPort);
        assertTrue(cases > 300, "cases: " + cases);
    }

    /**
     * The third fast copy keeps a pair of blocks (an even one and the next) and tells them apart by
     * the second byte's low bit. Below U+2000 the shipped table gives both blocks of a pair one
     * weight but for Myanmar's last block (U+1080, 1721/1024 tokens) and Georgian's (U+10C0,
     * 1727): runs of both, either first, long enough that 6/1024 of a token per character moves the
     * score (three times over, the body's unseen rest extrapolated), each length its own case.
     */
    @Test
    void threeByteBlockPairTellsItsBlocksApart() {
        String georgian = "ქართული"; // U+10D0-10FF: block 67, the odd one
        String myanmar = "႐႑႒႓႔႕႖"; // U+1090-1096: block 66, the even one
        int srcPort = 47000;
        for (int n = 1; n <= 9; n++) {
            for (String[] order : new String[][] {{georgian, myanmar}, {myanmar, georgian}}) {
                String prompt = order[0].repeat(n) + " " + order[1].repeat(n);
                for (long factor = 1; factor <= 3; factor += 2) {
                    assertTrue(assertParity(promptRequest(prompt.getBytes(StandardCharsets.UTF_8), factor), srcPort++).isPresent());
                }
            }
        }
    }

    /**
     * Each piece (the texts' UTF-8, then the raw byte runs) three times in a prompt, the first time
     * followed by {@code between}, after 0 to 15 bytes of ASCII (every offset against the kernel's
     * words), sent whole and as the first third of its body. Sources from srcPort on; returns the
     * cases run.
     */
    private static int assertPiecesAtEveryOffset(String[] texts, byte[][] raw, String between, int srcPort) {
        List<byte[]> pieces = new ArrayList<>();
        for (String text : texts) {
            pieces.add(text.getBytes(StandardCharsets.UTF_8));
        }
        pieces.addAll(List.of(raw));
        int cases = 0;
        for (byte[] piece : pieces) {
            for (int at = 0; at < 16; at++) {
                java.io.ByteArrayOutputStream prompt = new java.io.ByteArrayOutputStream();
                prompt.writeBytes("ab cd ef gh ij kl".substring(0, at).getBytes(StandardCharsets.US_ASCII));
                for (int i = 0; i < 3; i++) {
                    prompt.writeBytes(piece);
                    prompt.writeBytes(i == 0 ? between.getBytes(StandardCharsets.US_ASCII) : new byte[] {' '});
                }
                for (long factor = 1; factor <= 3; factor += 2) {
                    assertTrue(assertParity(promptRequest(prompt.toByteArray(), factor), srcPort + cases).isPresent());
                    cases++;
                }
            }
        }
        return cases;
    }

    /**
     * The body window (BODY_WINDOW bytes into the body) ending at every lane of the words of a long
     * run of non-ASCII text and after every byte of its characters: a pad before the prompt key
     * moves the string's start, and so its words, against the window's end. Sources from srcPort on;
     * returns the cases run.
     */
    private static int assertWindowEndsAtEveryLane(byte[] run, int srcPort) {
        int cases = 0;
        for (int pad = 0; pad < CHUNK; pad++) {
            for (int at = 0; at < 3; at++) {
                java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
                body.writeBytes(("{\"pad\":\"" + "p".repeat(pad) + "\",\"prompt\":\"" + "x".repeat(at))
                        .getBytes(StandardCharsets.US_ASCII));
                body.writeBytes(run);
                body.writeBytes("\"}".getBytes(StandardCharsets.US_ASCII));
                assertTrue(assertParity(completionRequest(body.toByteArray(), 1), srcPort + cases).isPresent());
                cases++;
            }
        }
        return cases;
    }

    /**
     * A completion request whose prompt string is {@code prompt} (raw bytes), sent whole in one
     * segment; its Content-Length is {@code factor} times the body's (the rest unseen).
     */
    private static byte[] promptRequest(byte[] prompt, long factor) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.writeBytes("{\"prompt\":\"".getBytes(StandardCharsets.US_ASCII));
        body.writeBytes(prompt);
        body.writeBytes("\"}".getBytes(StandardCharsets.US_ASCII));
        return completionRequest(body.toByteArray(), factor);
    }

    /** A completion request with this body, in one segment; its Content-Length {@code factor} times the body's. */
    private static byte[] completionRequest(byte[] body, long factor) {
        java.io.ByteArrayOutputStream payload = new java.io.ByteArrayOutputStream();
        payload.writeBytes(("POST /v1/completions HTTP/1.1\r\nHost: r\r\nContent-Length: " + body.length * factor + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        payload.writeBytes(body);
        return payload.toByteArray();
    }

    /** Runs payload through XDP from srcPort and asserts the kernel's verdict equals the Java scorer's. */
    private static Optional<KernelVerdict> assertParity(byte[] payload, int srcPort) {
        Scorer scorer = new Scorer(SCORING.weights());
        kernel.program(KernelDataPath.XDP_PROGRAM)
                .testRun(Packets.tcp(Packets.CLIENT, srcPort, PORT, Packets.TCP_ACK_PSH, payload), null, 1);
        FourTuple tuple = new FourTuple(SharedStructs.inet4(Packets.CLIENT), srcPort, SharedStructs.inet4(Packets.ROUTER), PORT);
        Optional<KernelVerdict> kernelVerdict = kernel.verdicts().lookup(tuple);
        Optional<KernelVerdict> javaVerdict = RequestHeadParser.parse(payload).map(head -> {
            int score = head.score(scorer);
            return new KernelVerdict(score, SCORING.thresholds().tierFor(score),
                    KernelVerdict.check(head.requestLineHash(), head.bodyLength()), head.estimate().blind());
        });
        assertEquals(javaVerdict, kernelVerdict, () -> "request #" + srcPort + ":\n"
                + new String(payload, StandardCharsets.ISO_8859_1));
        return kernelVerdict;
    }
}
