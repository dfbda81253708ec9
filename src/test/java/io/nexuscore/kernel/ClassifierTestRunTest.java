package io.nexuscore.kernel;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.SocketMarks;
import io.nexuscore.kernel.maps.TenantPolicyMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.RequestHeadParser;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Table-driven BPF_PROG_TEST_RUN of the XDP classifier and the TC chain in the real kernel:
 * crafted frame -> return code, routing_decisions(6) entry and verdict slot, tier_counters delta,
 * and skb->mark of the TC chain run after XDP on the same frame (as on ingress).
 * Expected scores are worked out by hand from the spec (weights 10/15/20/25, thresholds 60/130;
 * PromptEstimate's features and coefficients, worked out with an independent reading of the spec;
 * a body without a visible prompt string counts (length - 64) * 241 / 1024 tokens, and its verdict
 * is blind).
 */
class ClassifierTestRunTest {

    private static final int PORT = 8080;
    private static final String CHAT_HEAD = "POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n\r\n";
    private static final int SECOND_PORT = 18080;
    private static final int XDP_PASS = 2;
    /** TC_ACT_UNSPEC (tcx: TCX_NEXT): the chain marks and leaves the verdict to whatever runs after it. */
    private static final int TC_NEXT = -1;
    /** sizeof(struct __sk_buff); mark at offset 8. */
    private static final int SKB_CTX_SIZE = 192;
    private static final int SKB_MARK = 8;

    private static KernelDataPath kernel;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(PORT, SECOND_PORT));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @BeforeEach
    void defaults() {
        kernel.thresholds().write(Thresholds.DEFAULT);
        kernel.routingDecisions().snapshot().keySet().forEach(kernel.routingDecisions()::remove);
        kernel.tenantPolicy().entries().keySet().forEach(kernel.tenantPolicy()::remove);
    }

    /** Expected verdict: score, tier, body length, the request line whose hash is stored, blind. */
    record Expect(int score, Tier tier, long bodyLength, String requestLine, boolean blind) {
        Expect(int score, Tier tier, long bodyLength, String requestLine) {
            this(score, tier, bodyLength, requestLine, bodyLength > 0); // no prompt string in these bodies
        }
    }

    record Case(String description, byte[] frame, Optional<Expect> expect) {
        @Override
        public String toString() {
            return description;
        }
    }

    static Case verdict(String description, int port, String payload, int score, Tier tier, long body, String line) {
        return new Case(description, Packets.tcp(port, payload), Optional.of(new Expect(score, tier, body, line)));
    }

    /** A head whose segment holds a prompt string: the estimate counts it (not blind). */
    static Case prompt(String description, String head, String body, int score, Tier tier, long contentLength) {
        String line = head.substring(0, head.indexOf('\r'));
        return new Case(description, Packets.tcp(PORT, head + body),
                Optional.of(new Expect(score, tier, contentLength, line, false)));
    }

    static Case none(String description, byte[] frame) {
        return new Case(description, frame, Optional.empty());
    }

    static Stream<Case> cases() {
        String pad248 = "x".repeat(248);
        String longPath = "/" + "a".repeat(300) + "/summarize";
        return Stream.of(
                verdict("short GET", PORT, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0, Tier.NANO, 0, "GET / HTTP/1.1"),
                verdict("keyword sum", PORT, "GET /v1/summarize HTTP/1.1\r\nHost: x\r\n\r\n",
                        10, Tier.NANO, 0, "GET /v1/summarize HTTP/1.1"),
                verdict("keyword ref, Content-Length 400 (body in packet ignored)", PORT,
                        "POST /v1/refine HTTP/1.1\r\nHost: a\r\nContent-Length: 400\r\n\r\n" + "b".repeat(40),
                        79 + 15, Tier.SMALL, 400, "POST /v1/refine HTTP/1.1"),
                verdict("keyword gen, no Content-Length: payload after head", PORT,
                        "POST /generate HTTP/1.1\r\nHost: a\r\n\r\n" + "x".repeat(300),
                        56 + 20, Tier.SMALL, 300, "POST /generate HTTP/1.1"),
                verdict("keyword ana, upper case", PORT, "GET /ANALYZE HTTP/1.1\r\n\r\n",
                        25, Tier.NANO, 0, "GET /ANALYZE HTTP/1.1"),
                verdict("all keywords, clamped to 255", PORT,
                        "POST /sum/ref/gen/ana HTTP/1.1\r\nContent-Length: 1000\r\n\r\n",
                        255, Tier.LARGE, 1000, "POST /sum/ref/gen/ana HTTP/1.1"),
                verdict("keywords only in User-Agent: no bonus", PORT,
                        "GET / HTTP/1.1\r\nUser-Agent: generator-summary-analysis-ref\r\n\r\n",
                        0, Tier.NANO, 0, "GET / HTTP/1.1"),
                verdict("lower-case content-length with spaces", PORT,
                        "POST /x HTTP/1.1\r\ncontent-length: \t 800\r\n\r\n", 173, Tier.LARGE, 800, "POST /x HTTP/1.1"),
                verdict("Content-Length after the head is body", PORT,
                        "POST /x HTTP/1.1\r\nHost: a\r\n\r\nContent-Length: 999\r\n", 0, Tier.NANO, 21, "POST /x HTTP/1.1"),
                verdict("truncated head: no end, no Content-Length", PORT,
                        "POST /x HTTP/1.1\r\nHost: a\r\nAccept: */*", 0, Tier.NANO, 0, "POST /x HTTP/1.1"),
                verdict("Content-Length digits cut by the segment end: ignored", PORT,
                        "POST /x HTTP/1.1\r\nContent-Length: 12", 0, Tier.NANO, 0, "POST /x HTTP/1.1"),
                verdict("Content-Length without digits: ignored", PORT,
                        "POST /x HTTP/1.1\r\nContent-Length: abc\r\n\r\nxxxx", 0, Tier.NANO, 4, "POST /x HTTP/1.1"),
                verdict("request line over 256 bytes: keyword past the limit ignored", PORT,
                        "GET " + longPath + " HTTP/1.1\r\n\r\n", 0, Tier.NANO, 0, "GET " + longPath + " HTTP/1.1"),
                verdict("keyword ending at byte 256 counts", PORT,
                        "GET /" + pad248 + "sum HTTP/1.1\r\n\r\n", 10, Tier.NANO, 0, "GET /" + pad248 + "sum HTTP/1.1"),
                verdict("keyword ending at byte 257 does not", PORT,
                        "GET /" + pad248 + "xsum HTTP/1.1\r\n\r\n", 0, Tier.NANO, 0, "GET /" + pad248 + "xsum HTTP/1.1"),
                verdict("OPTIONS: seven-letter method", PORT, "OPTIONS /gen HTTP/1.1\r\n\r\n",
                        20, Tier.NANO, 0, "OPTIONS /gen HTTP/1.1"),
                verdict("bare LF line ends", PORT, "GET /gen HTTP/1.0\nContent-Length: 40\n\n",
                        20, Tier.NANO, 40, "GET /gen HTTP/1.0"),
                verdict("Content-Length saturates at 2^40", PORT,
                        "POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                        255, Tier.LARGE, 1L << 40, "POST /x HTTP/1.1"),
                verdict("Content-Length beyond the 1024-byte window: not seen", PORT,
                        "POST /x HTTP/1.1\r\nX-Pad: " + "p".repeat(1100) + "\r\nContent-Length: 100\r\n\r\n",
                        0, Tier.NANO, 0, "POST /x HTTP/1.1"),
                verdict("second data-plane port", SECOND_PORT, "GET /ref HTTP/1.1\r\n\r\n", 15, Tier.NANO, 0, "GET /ref HTTP/1.1"),
                new Case("TCP options (doff 8)", Packets.tcpWithOptions(PORT, 3, "GET /summ HTTP/1.1\r\n\r\n"),
                        Optional.of(new Expect(10, Tier.NANO, 0, "GET /summ HTTP/1.1"))),
                prompt("chat: the first message's content: 3 words, 2 punctuation runs, 1 digit run, 11 letters", CHAT_HEAD,
                        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi there, 2 cats!\"}]}",
                        7, Tier.NANO, 72),
                // 3 words, 3 punctuation runs, 16 letters and twice the Latin-1 letters' block weight
                // (token-blocks.tsv: 2116): 10,634 / 1024 = 10 tokens
                // Be|brief and Hi|there|cats: 5 words, 18 letters; '.', ',', '!': 3 punctuation runs; '2': a digit
                // run: 9,739 / 1024 = 10 tokens; the envelope between the strings counts for nothing
                prompt("chat with a system prompt: both messages' contents", CHAT_HEAD,
                        "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi there, 2 cats!\"}]}", 10, Tier.NANO, 100),
                prompt("prompt with escapes (\\u00e9: a letter of 2 bytes) and a keyword in its first bytes",
                        "POST /v1/completions HTTP/1.1\r\nContent-Length: 46\r\n\r\n",
                        "{\"prompt\": \"Summarize:\\n\\u00e9t\\u00e9 \\\"ok\\\"\"}", 10 + 10, Tier.NANO, 46),
                // the body window (256 B) holds 245 prompt bytes: 49 words of 4 letters = 51,597 / 1024;
                // a flat body ("prompt" first), so the rest is 1100 - 256 - 16 (FLAT_TRAILER) = 828 bytes
                // at that mix: 51,597 + 828 * 51,597 / 245 = 225,973 / 1024 = 221 tokens
                prompt("prompt past the window: the unseen rest counted at the seen mix",
                        "POST /v1/completions HTTP/1.1\r\nContent-Length: 1100\r\n\r\n",
                        "{\"prompt\":\"" + "word ".repeat(240), 221, Tier.LARGE, 1100),
                // the list is passed over, then "text" (the value of "type") is, then the part's "text" is
                // scanned: hello, 1 word of 5 letters = 1,182 / 1024 = 1 token
                prompt("content parts: the text part's string", CHAT_HEAD,
                        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}]}", 1, Tier.NANO, 73),
                verdict("a prompt that is a list of strings: from the length, blind", PORT,
                        "POST /v1/completions HTTP/1.1\r\nHost: a\r\n\r\n{\"prompt\":[\"a list of \",\"strings of the prompt\"],\"model\":\"m\"}",
                        0, Tier.NANO, 61, "POST /v1/completions HTTP/1.1"),
                none("lower-case method", Packets.tcp(PORT, "get / HTTP/1.1\r\n\r\n")),
                none("method of 8 letters", Packets.tcp(PORT, "PROPFINDX / HTTP/1.1\r\n\r\n")),
                none("binary payload (TLS hello)", Packets.tcp(PORT, "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u01fc")),
                none("payload of 3 bytes", Packets.tcp(PORT, "GET")),
                none("empty payload (pure ACK)", Packets.tcp(PORT, "")),
                none("SYN", Packets.tcp(Packets.CLIENT, Packets.CLIENT_PORT, PORT, Packets.TCP_SYN, new byte[0])),
                none("wrong port", Packets.tcp(9999, "GET /sum HTTP/1.1\r\n\r\n")),
                none("UDP", Packets.udp(PORT, "GET /sum HTTP/1.1\r\n\r\n")),
                new Case("IPv6: keyed by the v6 4-tuple", Packets.ipv6Tcp(PORT, "GET /sum HTTP/1.1\r\n\r\n"),
                Optional.of(new Expect(10, Tier.NANO, 0, "GET /sum HTTP/1.1"))),
        new Case("IPv6 POST with Content-Length", Packets.ipv6Tcp(PORT, "POST /v1/generate HTTP/1.1\r\nContent-Length: 600\r\n\r\n"),
                Optional.of(new Expect(126 + 20, Tier.LARGE, 600, "POST /v1/generate HTTP/1.1"))),
        none("IPv6 with an extension header before TCP (not classified)", Packets.ipv6WithHopByHop(PORT, "GET /sum HTTP/1.1\r\n\r\n")),
                none("IPv4 fragment", Packets.fragment(PORT, "GET /sum HTTP/1.1\r\n\r\n")),
                none("total length beyond the frame", Packets.lyingTotalLength(PORT, "GET /sum HTTP/1.1\r\n\r\n")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void xdpClassifier(Case c) {
        Map<Tier, Long> before = kernel.tierCounters().counts();

        BpfProgram.TestRun run = kernel.program(KernelDataPath.XDP_PROGRAM).testRun(c.frame(), null, 1);

        assertEquals(XDP_PASS, run.returnValue(), "XDP always passes");
        Map<FourTuple, SharedStructs.RoutingDecision> entries = kernel.routingDecisions().snapshot();
        Map<Tier, Long> after = kernel.tierCounters().counts();
        if (c.expect().isEmpty()) {
            assertEquals(Map.of(), entries, "no verdict stored");
            assertEquals(before, after, "no tier counted");
            return;
        }
        Expect e = c.expect().get();
        byte[] line = e.requestLine().getBytes(StandardCharsets.ISO_8859_1);
        FourTuple tuple = Packets.tuple(c.frame());
        assertEquals(Set.of(tuple), entries.keySet(), "one verdict, keyed by the packet's 4-tuple");
        KernelVerdict verdict = entries.get(tuple).verdict();
        assertEquals(new KernelVerdict(e.score(), e.tier(), KernelVerdict.check(Scorer.requestLineHash(line), e.bodyLength()),
                e.blind()), verdict);
        assertTrue(verdict.belongsTo(Scorer.requestLineHash(line), e.bodyLength()), "verifies against its own request");
        assertEquals(1, entries.get(tuple).heads(), "first head on the connection");
        assertEquals(Optional.of(verdict), kernel.verdicts().fromSlot(tuple), "the mmap'ed slot holds the same verdict");
        assertEquals(verdict, kernel.verdicts().lookup(tuple).orElseThrow(), "VerdictSource sees the same verdict");
        // A head alone that announces a body awaits it (pending_bodies): counted when the body is scored.
        boolean awaits = e.blind() && new String(c.frame(), StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n");
        for (Tier t : Tier.values()) {
            assertEquals(before.get(t) + (t == e.tier() && !awaits ? 1 : 0), after.get(t), "tier_counters[" + t + "]");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void tcChainMarksWithTheStoredVerdict(Case c) {
        assertEquals(0, runTc(c.frame()), "before XDP stored a verdict: unmarked");
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(c.frame(), null, 1);
        int mark = runTc(c.frame());
        int expected = c.expect().map(e -> SocketMarks.encode(SocketMarks.KIND_REQUEST, e.tier())).orElse(0);
        assertEquals(expected, mark, String.format("skb->mark 0x%08x", mark));
    }

    /**
     * token_model is a pinned map any tool can write: a gain of 0xffffffff (or any u32 above the max)
     * must not overflow the estimate into a small score. The kernel and the Java twin both read it as
     * TOKEN_GAIN_MAX, and 0 as one.
     */
    @Test
    void aGainAnotherToolWroteIsClampedAlikeInTheKernelAndInJava() {
        String body = "{\"prompt\":\"" + "Explain the proof in detail, step by step. ".repeat(15) + "\"}";
        String payload = "POST /v1/completions HTTP/1.1\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        byte[] frame = Packets.tcp(PORT, payload);
        RequestHeadParser.HeadFacts head = RequestHeadParser.parse(payload.getBytes(StandardCharsets.ISO_8859_1)).orElseThrow();
        BpfMap model = BpfMap.openPinned(kernel.pinDir(), "token_model", 4, 8);
        try (model) {
            int[] gains = {0xffffffff, 0x80000000, 9000, 8192, 0, 512};
            int[] scores = new int[gains.length];
            for (int i = 0; i < gains.length; i++) {
                byte[] value = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(gains[i]).putInt(7).array();
                model.update(new byte[4], value, BpfMap.BPF_ANY);
                kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame, null, 1);
                int stored = gains[i];
                scores[i] = onlyVerdict().score();
                assertEquals(head.score(new Scorer(ScoreWeights.DEFAULT, () -> stored)), scores[i],
                        String.format("gain 0x%08x: kernel and Java", stored));
            }
            assertEquals(scores[3], scores[0], "0xffffffff reads as the max gain");
            assertEquals(scores[3], scores[1], "0x80000000 reads as the max gain");
            assertEquals(scores[3], scores[2], "9000 reads as the max gain");
            assertTrue(scores[3] > scores[4] && scores[4] > scores[5], "the gain scales the estimate: " + java.util.Arrays.toString(scores));
        } finally {
            byte[] one = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(1024).putInt(1).array();
            BpfMap reset = BpfMap.openPinned(kernel.pinDir(), "token_model", 4, 8);
            try (reset) {
                reset.update(new byte[4], one, BpfMap.BPF_ANY);
            }
        }
    }

    @Test
    void liveThresholdChangeMovesTheNextVerdict() {
        byte[] frame = Packets.tcp(PORT, "GET /v1/summarize HTTP/1.1\r\n\r\n"); // score 10
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame, null, 1);
        assertEquals(Tier.NANO, onlyVerdict().tier());

        kernel.thresholds().write(new Thresholds(5, 9));
        assertEquals(new Thresholds(5, 9), kernel.thresholds().read());
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame, null, 1);
        assertEquals(Tier.LARGE, onlyVerdict().tier());
        assertEquals(SocketMarks.encode(SocketMarks.KIND_REQUEST, Tier.LARGE), runTc(frame));
    }

    /** A tool wrote nano_max above small_max: the program clamps nano_max below small_max, never sends a high score to nano. */
    @Test
    void outOfOrderThresholdsAreClampedSoAHighScoreNeverLandsInNano() {
        byte[] frame = Packets.tcp(PORT, "GET /v1/summarize HTTP/1.1\r\n\r\n"); // score 10
        io.nexuscore.classify.ThresholdState current = kernel.thresholds().state();
        // As `bpftool map update ... value 200 9 0 0 0 0 0 0` would: nano_max 200, small_max 9.
        assertTrue(kernel.thresholds().compareAndSet(current, new io.nexuscore.classify.ThresholdState(200, 9, 0, 0)));
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame, null, 1);
        assertEquals(Tier.LARGE, onlyVerdict().tier(), "score 10 > small_max 9: large, not nano (nano_max 200)");
        assertEquals(new Thresholds(8, 9), kernel.thresholds().read(), "the Java reader clamps the same way");
    }

    @Test
    void synFromTenantPrefixCarriesTheFloor() {
        byte[] syn = Packets.tcp(Packets.CLIENT, Packets.CLIENT_PORT, PORT, Packets.TCP_SYN, new byte[0]);
        assertEquals(0, runTc(syn), "no tenant rule: SYN unmarked");

        kernel.tenantPolicy().put(io.nexuscore.net.Ipv4Prefix.parse("192.0.2.0/24"), Tier.SMALL);
        kernel.tenantPolicy().put(io.nexuscore.net.Ipv4Prefix.host(SharedStructs.inet4(Packets.CLIENT)), Tier.LARGE);
        assertEquals(SocketMarks.encode(SocketMarks.KIND_FLOOR, Tier.LARGE), runTc(syn), "longest prefix wins");
        assertEquals(Optional.of(Tier.LARGE), SocketMarks.tenantFloor(runTc(syn)));

        byte[] otherClient = Packets.tcp(new byte[] {(byte) 192, 0, 2, 99}, 40001, PORT, Packets.TCP_SYN, new byte[0]);
        assertEquals(SocketMarks.encode(SocketMarks.KIND_FLOOR, Tier.SMALL), runTc(otherClient), "/24 rule");

        byte[] synAck = Packets.tcp(Packets.CLIENT, Packets.CLIENT_PORT, PORT, Packets.TCP_SYN_ACK, new byte[0]);
        assertEquals(0, runTc(synAck), "SYN-ACK is not a connection request");

        byte[] nanoRequest = Packets.tcp(PORT, "GET / HTTP/1.1\r\n\r\n");
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(nanoRequest, null, 1);
        assertEquals(SocketMarks.encode(SocketMarks.KIND_REQUEST, Tier.LARGE), runTc(nanoRequest),
                "a request mark is raised to the tenant floor");
    }

    @Test
    void tcChainWithoutPolicySlotPassesUnmarked() {
        // Deleting the tail-call slot shows the chain really runs through tc_chain.
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(Packets.tcp(PORT, "GET /gen HTTP/1.1\r\n\r\n"), null, 1);
        BpfMap chain = BpfMap.openPinned(kernel.pinDir(), "tc_chain", 4, 4);
        try (chain) {
            chain.delete(new byte[] {1, 0, 0, 0});
            assertEquals(0, runTc(Packets.tcp(PORT, "GET /gen HTTP/1.1\r\n\r\n")));
        } finally {
            kernel.reload(Optional.empty()); // reinstalls the chain
        }
        assertEquals(SocketMarks.encode(SocketMarks.KIND_REQUEST, Tier.NANO), runTc(Packets.tcp(PORT, "GET /gen HTTP/1.1\r\n\r\n")));
    }

    @Test
    void keepAliveHeadsOverwriteTheConnectionsVerdictAndContinuationSegmentsCarryItsTier() {
        byte[] first = Packets.tcp(PORT, "GET /v1/models HTTP/1.1\r\n\r\n"); // nano
        byte[] second = Packets.tcp(PORT, "POST /v1/x HTTP/1.1\r\nContent-Length: 800\r\n\r\n"); // 200: large
        byte[] bodyBytes = Packets.tcp(PORT, "{\"prompt\":\"" + "z".repeat(300)); // not a head
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(first, null, 1);
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(second, null, 1);
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(bodyBytes, null, 1);

        SharedStructs.RoutingDecision latest = kernel.routingDecisions().snapshot().get(Packets.tuple(second));
        assertEquals(2, latest.heads(), "two heads on the connection; the body segment is none");
        assertEquals(Tier.LARGE, latest.verdict().tier());
        assertTrue(latest.verdict().belongsTo(Scorer.requestLineHash("POST /v1/x HTTP/1.1".getBytes(StandardCharsets.US_ASCII)), 800));
        assertEquals(SocketMarks.encode(SocketMarks.KIND_REQUEST, Tier.LARGE), runTc(bodyBytes),
                "a body segment carries the tier of its head");
        byte[] pureAck = Packets.tcp(PORT, "");
        assertEquals(0, runTc(pureAck), "no request bytes: unmarked");
    }

    private static KernelVerdict onlyVerdict() {
        Map<FourTuple, SharedStructs.RoutingDecision> entries = kernel.routingDecisions().snapshot();
        assertEquals(1, entries.size());
        return entries.values().iterator().next().verdict();
    }

    private static int runTc(byte[] frame) {
        BpfProgram.TestRun run = kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM).testRun(frame, new byte[SKB_CTX_SIZE], 1);
        assertEquals(TC_NEXT, run.returnValue(), "TC always hands the packet on (TCX_NEXT)");
        return ByteBuffer.wrap(run.contextOut()).order(ByteOrder.LITTLE_ENDIAN).getInt(SKB_MARK);
    }
}
