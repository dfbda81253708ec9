package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.RequestHeadParser;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.config.ScoringConfig;
import io.nexuscore.testing.Corpus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The kernel decides for every way a client writes a request: head and body in one segment (curl,
 * Node's fetch), the head and then the body (httpx and the OpenAI Python SDK, urllib, the JDK
 * client), the body in several segments (a body over the MTU). For real prompts, each shape's
 * kernel verdict (XDP through BPF_PROG_TEST_RUN, one flow per shape, consecutive sequence numbers)
 * equals the decision the data plane computes from the whole body
 * ({@link PromptEstimate#ofBody}, what DataPlaneHandler calls) whenever the segment that starts the
 * body shows min(body length, BODY_WINDOW) of it; when it shows less the verdict is blind (the data
 * plane decides). Segments out of order, lost or sent again leave a request blind, never decided
 * from the wrong bytes.
 */
class SegmentedBodyParityTest {

    private static final int PORT = 8080;
    /** A body segment at most this long, as on a 1500-byte MTU (and within one test-run frame). */
    private static final int MSS = 1448;
    private static final ScoringConfig SCORING = new ScoringConfig(new Thresholds(40, 90), new ScoreWeights(7, 31, 64, 3));
    private static final Scorer SCORER = new Scorer(SCORING.weights());
    private static final byte[] LINE = "POST /v1/chat/completions HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1);

    private static KernelDataPath kernel;
    private static int nextPort = 20000;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(SCORING, Set.of(PORT));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    /** Real prompts in chat bodies as the SDKs and curl write them, in every segment shape. */
    @Test
    void everyClientShapeGetsTheDataPlanesDecision() {
        List<String> prompts = new ArrayList<>(Corpus.prompts("mt-bench-questions.jsonl"));
        prompts.addAll(Corpus.everyNth(Corpus.prompts("gsm8k-test.jsonl"), 7));
        prompts.addAll(Corpus.everyNth(Corpus.unseen("unseen-scripts.jsonl"), 4));
        prompts.addAll(Corpus.unseen("unseen-structured.jsonl"));
        prompts.addAll(Corpus.unseen("unseen-passages.jsonl"));
        Random random = new Random(20261207);
        int decided = 0;
        int blind = 0;
        for (int i = 0; i < prompts.size(); i++) {
            byte[] body = chatBody(prompts.get(i), i % 3, random.nextInt(4) == 0);
            byte[] head = Packets.chatHead(body.length, i % 2 == 0);
            for (List<byte[]> shape : shapes(head, body, random)) {
                Optional<KernelVerdict> verdict = run(shape, false);
                KernelVerdict expected = decision(body);
                if (showsWindow(shape, head.length, body.length)) {
                    assertEquals(Optional.of(expected), verdict, () -> describe(shape, body));
                    decided++;
                } else {
                    assertTrue(verdict.orElseThrow().blind(), () -> "not blind: " + describe(shape, body));
                    assertEquals(expected.check(), verdict.get().check());
                    blind++;
                }
            }
        }
        // Most shapes must be decided in the kernel, or this would prove little about the body path
        // (the random cuts are blind when they fall inside the window: about one shape in four).
        assertTrue(decided > 2 * blind && decided > 600, "decided " + decided + ", blind " + blind);
    }

    /** The same over IPv6: the pending body is keyed by the IPv6 flow. */
    @Test
    void ipv6HeadThenBodyIsDecided() {
        String prompt = Corpus.prompts("mt-bench-questions.jsonl").get(3);
        byte[] body = chatBody(prompt, 0, false);
        byte[] head = Packets.chatHead(body.length, true);
        assertEquals(Optional.of(decision(body)), run(List.of(head, body), true));
    }

    /** One row: segments as they arrive (sequence offsets from the head's first byte) and what is stored. */
    private record Arrival(String description, int[] order, boolean blind) {
    }

    /**
     * Loss, reordering and retransmission: a segment counts as the body's start only when it starts
     * where the head ended and is the flow's next segment; anything else leaves the verdict blind.
     */
    @Test
    void segmentsOutOfOrderLeaveTheRequestBlind() {
        byte[] body = Corpus.prompts("mt-bench-questions.jsonl").stream().map(p -> chatBody(p, 0, false))
                .filter(b -> b.length > 700).findFirst().orElseThrow();
        byte[] head = Packets.chatHead(body.length, false);
        byte[] firstPart = Arrays.copyOf(body, 400);
        byte[] secondPart = Arrays.copyOfRange(body, 400, body.length);
        byte[][] segments = {head, firstPart, secondPart};
        int[] offsets = {0, head.length, head.length + 400};
        List<Arrival> table = List.of(
                new Arrival("in order", new int[] {0, 1, 2}, false),
                new Arrival("the body's first segment lost", new int[] {0, 2}, true),
                new Arrival("lost, then sent again after the next one", new int[] {0, 2, 1}, true),
                new Arrival("the body's first segment sent twice", new int[] {0, 1, 1, 2}, false),
                new Arrival("the body before the head", new int[] {1, 0}, true),
                new Arrival("the head sent again after the body", new int[] {0, 1, 0}, true));
        KernelVerdict expected = decision(body);
        assertTrue(firstPart.length >= PromptEstimate.BODY_WINDOW && !expected.blind());
        for (Arrival row : table) {
            int port = nextPort++;
            for (int index : row.order()) {
                send(port, 1000 + offsets[index], segments[index], false);
            }
            KernelVerdict verdict = lookup(port, false).orElseThrow();
            assertEquals(row.blind(), verdict.blind(), row.description());
            assertEquals(expected.check(), verdict.check(), row.description());
            if (!row.blind()) {
                assertEquals(expected, verdict, row.description());
            }
        }
    }

    /** Keep-alive: the second request's head and body give the second request's verdict. */
    @Test
    void eachRequestOnAKeepAliveConnectionGetsItsOwnVerdict() {
        List<String> prompts = Corpus.prompts("mt-bench-questions.jsonl");
        byte[] first = chatBody(prompts.get(0), 0, false);
        byte[] second = chatBody(prompts.get(41), 1, false);
        byte[] firstHead = Packets.chatHead(first.length, true);
        byte[] secondHead = Packets.chatHead(second.length, true);
        int port = nextPort++;
        int seq = 77;
        for (byte[] segment : List.of(firstHead, first)) {
            send(port, seq, segment, false);
            seq += segment.length;
        }
        assertEquals(Optional.of(decision(first)), lookup(port, false));
        for (byte[] segment : List.of(secondHead, second)) {
            send(port, seq, segment, false);
            seq += segment.length;
        }
        assertEquals(Optional.of(decision(second)), lookup(port, false));
        assertFalse(decision(first).equals(decision(second)), "the two requests must differ for this to prove anything");
    }

    /**
     * A chunked body has no Content-Length: the head does not await it, and the chunk that follows
     * is not scored (the head's verdict, for a body of 0 bytes, stays; the data plane decides).
     */
    @Test
    void aChunkedBodyIsNotScored() {
        byte[] head = ("POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        byte[] body = chatBody("Summarize the plot of Hamlet in three sentences.", 0, false);
        byte[] chunk = concat((Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.ISO_8859_1), body,
                "\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        int port = nextPort++;
        send(port, 5, head, false);
        Optional<KernelVerdict> afterHead = lookup(port, false);
        send(port, 5 + head.length, chunk, false);
        assertEquals(afterHead, lookup(port, false));
        assertEquals(KernelVerdict.check(Scorer.requestLineHash(LINE), 0), afterHead.orElseThrow().check());
    }

    /**
     * The Responses API (instructions and input, as a string or as input items) and the Messages
     * API (system and messages): their prompt strings are found in the kernel as chat contents are,
     * for one-write clients and for clients that write the body after the head.
     */
    @Test
    void responsesAndMessagesBodiesAreDecidedInTheKernel() {
        String instructions = "You are a patient tutor. Explain each step in plain words, check the arithmetic twice,"
                + " and end with the final answer on a line of its own.";
        int counted = 0;
        int whole = 0;
        List<String> prompts = Corpus.everyNth(Corpus.prompts("mt-bench-questions.jsonl"), 4);
        for (String prompt : prompts) {
            JsonObject text = new JsonObject().put("type", "input_text").put("text", prompt);
            List<JsonObject> bodies = List.of(
                    new JsonObject().put("model", "m").put("instructions", instructions).put("input", prompt),
                    new JsonObject().put("model", "m").put("input", new JsonArray().add(
                            new JsonObject().put("role", "user").put("content", new JsonArray().add(text)))),
                    new JsonObject().put("model", "m").put("max_tokens", 64).put("system", instructions)
                            .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", prompt))));
            for (JsonObject json : bodies) {
                String path = json.containsKey("messages") ? "/v1/messages" : "/v1/responses";
                byte[] line = ("POST " + path + " HTTP/1.1").getBytes(StandardCharsets.ISO_8859_1);
                byte[] body = json.encode().getBytes(StandardCharsets.UTF_8);
                byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
                KernelVerdict expected = decision(line, body);
                assertFalse(expected.blind(), json.encode());
                assertEquals(Optional.of(expected), run(List.of(concat(head, body)), false), json.encode());
                assertEquals(Optional.of(expected), run(List.of(head, body), false), json.encode());
                counted++;
            }
            // The instructions are prompt text: in a body the window sees whole, without them the estimate is smaller.
            byte[] bare = new JsonObject().put("model", "m").put("input", prompt).encode().getBytes(StandardCharsets.UTF_8);
            byte[] full = bodies.get(0).encode().getBytes(StandardCharsets.UTF_8);
            byte[] line = "POST /v1/responses HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1);
            if (full.length <= PromptEstimate.BODY_WINDOW) {
                assertTrue(decision(line, full).score() > decision(line, bare).score(), prompt);
                whole++;
            }
        }
        assertEquals(3 * prompts.size(), counted);
        assertTrue(whole >= 2, "short prompts compared with and without instructions: " + whole);
    }

    private static KernelVerdict decision(byte[] body) {
        return decision(LINE, body);
    }

    /** What the data plane decides from the whole body: the score, its tier, the check over line and length. */
    private static KernelVerdict decision(byte[] line, byte[] body) {
        PromptEstimate estimate = PromptEstimate.ofBody(Arrays.copyOf(body, Math.min(body.length, PromptEstimate.BODY_WINDOW)),
                body.length);
        int score = SCORER.score(line, estimate);
        return new KernelVerdict(score, SCORING.thresholds().tierFor(score),
                KernelVerdict.check(Scorer.requestLineHash(line), body.length), estimate.blind());
    }

    /**
     * True when the segment that starts the body shows min(body length, BODY_WINDOW) of it: the
     * head's segment up to HEAD_WINDOW bytes from its start, a body segment from its first byte.
     */
    private static boolean showsWindow(List<byte[]> shape, int headLength, int bodyLength) {
        int want = Math.min(bodyLength, PromptEstimate.BODY_WINDOW);
        byte[] first = shape.get(0);
        if (first.length > headLength) { // the body starts in the head's segment
            return Math.min(first.length, RequestHeadParser.HEAD_WINDOW) - headLength >= want;
        }
        return shape.size() > 1 && shape.get(1).length >= want;
    }

    /** One segment (when it fits a frame), head then body in MSS pieces, and head then body cut at a random place. */
    private static List<List<byte[]>> shapes(byte[] head, byte[] body, Random random) {
        List<List<byte[]>> shapes = new ArrayList<>();
        byte[] whole = concat(head, body);
        if (whole.length <= MSS) {
            shapes.add(List.of(whole));
        } else {
            shapes.add(pieces(whole, MSS)); // curl over a 1500-byte link: the head's segment carries the body's start
        }
        List<byte[]> headThenBody = new ArrayList<>(List.of(head));
        headThenBody.addAll(pieces(body, MSS));
        shapes.add(headThenBody);
        int cut = 1 + random.nextInt(Math.max(1, body.length - 1));
        List<byte[]> headThenCut = new ArrayList<>(List.of(head));
        headThenCut.add(Arrays.copyOf(body, Math.min(cut, MSS)));
        headThenCut.addAll(pieces(Arrays.copyOfRange(body, Math.min(cut, MSS), body.length), MSS));
        shapes.add(headThenCut);
        return shapes;
    }

    private static List<byte[]> pieces(byte[] bytes, int size) {
        List<byte[]> pieces = new ArrayList<>();
        for (int at = 0; at < bytes.length; at += size) {
            pieces.add(Arrays.copyOfRange(bytes, at, Math.min(bytes.length, at + size)));
        }
        return pieces;
    }

    /** Sends the segments of one request on a fresh flow, consecutive sequence numbers; the verdict after them. */
    private static Optional<KernelVerdict> run(List<byte[]> segments, boolean ipv6) {
        int port = nextPort++;
        int seq = 1 + port * 7919; // any start: the kernel only compares
        for (byte[] segment : segments) {
            send(port, seq, segment, ipv6);
            seq += segment.length;
        }
        return lookup(port, ipv6);
    }

    private static void send(int srcPort, int seq, byte[] payload, boolean ipv6) {
        byte[] frame = ipv6 ? Packets.ipv6TcpAt(Packets.CLIENT6, srcPort, PORT, seq, payload)
                : Packets.tcpAt(Packets.CLIENT, srcPort, PORT, seq, payload);
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame, null, 1);
    }

    private static Optional<KernelVerdict> lookup(int srcPort, boolean ipv6) {
        FourTuple tuple = ipv6
                ? new FourTuple(SharedStructs.inet(Packets.CLIENT6), srcPort, SharedStructs.inet(Packets.ROUTER6), PORT)
                : new FourTuple(SharedStructs.inet4(Packets.CLIENT), srcPort, SharedStructs.inet4(Packets.ROUTER), PORT);
        return kernel.verdicts().lookup(tuple);
    }

    /**
     * A chat body: 0 as RoutingEval writes it (model first), 1 as the OpenAI SDKs do (messages
     * first, options after), 2 with a system message before the question.
     */
    static byte[] chatBody(String prompt, int shape, boolean escapeNonAscii) {
        JsonArray messages = new JsonArray();
        if (shape == 2) {
            messages.add(new JsonObject().put("role", "system").put("content", "You are a careful assistant. Answer briefly."));
        }
        messages.add(new JsonObject().put("role", "user").put("content", prompt));
        JsonObject request = shape == 0
                ? new JsonObject().put("model", "nexus").put("max_tokens", 16).put("messages", messages)
                : new JsonObject().put("messages", messages).put("model", "gpt-4o-mini").put("max_tokens", 256)
                        .put("temperature", 0.2);
        String json = request.encode();
        if (escapeNonAscii) {
            StringBuilder escaped = new StringBuilder();
            json.chars().forEach(c -> escaped.append(c < 0x80 ? String.valueOf((char) c) : String.format("\\u%04x", c)));
            json = escaped.toString();
        }
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    private static String describe(List<byte[]> shape, byte[] body) {
        StringBuilder s = new StringBuilder("segments");
        shape.forEach(segment -> s.append(' ').append(segment.length));
        return s.append(": ").append(new String(body, 0, Math.min(body.length, 300), StandardCharsets.UTF_8)).toString();
    }
}
