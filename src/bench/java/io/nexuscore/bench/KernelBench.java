package io.nexuscore.bench;

import com.sun.net.httpserver.HttpServer;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.EmptyPrograms;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.maps.KernelVerdicts;
import io.nexuscore.kernel.Packets;
import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.kernel.VethNetns;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.RequestHeadParser;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.config.KernelConfig;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kernel data path figures (not a test; run with bench/kernel-bench.sh, as root):
 * <ol>
 * <li>ns per packet for XDP nexus_classify and the TC chain, BPF_PROG_TEST_RUN with repeat 1e6,
 *     for heads of several sizes and for a packet that is not scored;</li>
 * <li>the same programs under real traffic (veth + netns + curl keep-alive), from
 *     BPF_ENABLE_STATS run_time_ns / run_cnt: a form POST and a chat request with a 250 B prompt;</li>
 * <li>one verdict read from Java: the mmap'ed slot (plain loads), the LRU fallback by bpf(2) through
 *     jnr-ffi, a collided connection and a miss; median, p99 and bytes allocated per call, against the
 *     Java parser + scorer on the same head.</li>
 * </ol>
 */
public final class KernelBench {

    private static final int PORT = 8080;
    private static final int REPEAT = 1_000_000;
    private static final int SKB_CTX_SIZE = 192;

    private KernelBench() {
    }

    public static void main(String[] args) throws Exception {
        int repeat = args.length > 0 ? Integer.parseInt(args[0]) : REPEAT;
        String only = args.length > 2 ? args[2] : "all"; // table | traffic: quick runs while tuning the programs
        if (!List.of("all", "table", "traffic", "ab", "frames").contains(only)) {
            throw new IllegalArgumentException("third argument: all, table, traffic, ab or frames, not " + only);
        }
        if (only.equals("frames")) {
            writeFrames(Path.of(args[3]));
            return;
        }
        if (only.equals("ab")) {
            abTable(Path.of(args[3]), Path.of(args[4]), args.length > 5 ? Integer.parseInt(args[5]) : 4, repeat);
            return;
        }
        boolean tableOnly = only.equals("table");
        if (only.equals("traffic")) {
            realTraffic(args.length > 1 ? Integer.parseInt(args[1]) : 20_000);
            return;
        }
        Map<String, String> heads = testRunHeads();
        // Loaded as the router attaches it: the in-kernel timing on, one packet in metrics.kernelTimingSample.
        int timingSample = io.nexuscore.config.MetricsConfig.DEFAULT.kernelTimingEvery();
        KernelDataPath kernel = KernelDataPath.loadWithoutAttaching(KernelTestSupport.uniquePinDir(),
                KernelTestSupport.DEFAULT_SCORING, Set.of(PORT), KernelConfig.XdpMode.GENERIC, timingSample);
        try {
            System.out.printf("BPF_PROG_TEST_RUN, repeat %,d in %d runs (mean ns per packet of the quietest run);"
                    + " programs loaded as the router loads them (in-kernel timing of one packet in %d)%n", repeat, RUNS, timingSample);
            System.out.printf("%-46s %10s %10s%n", "packet", "XDP", "TC chain");
            for (Map.Entry<String, String> head : heads.entrySet()) {
                byte[] frame = Packets.tcp(PORT, head.getValue());
                long xdp = quietestMean(kernel.program(KernelDataPath.XDP_PROGRAM), frame, null, repeat);
                long tc = quietestMean(kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM), frame, new byte[SKB_CTX_SIZE], repeat);
                System.out.printf("%-46s %10d %10d%n", head.getKey(), xdp, tc);
            }
            headThenBody(kernel, repeat);
            tenantLimitCost(kernel, heads.get("chat, 250 B prompt in the segment"), repeat);
            if (!tableOnly) {
                lookupCost(kernel, heads.get("POST + Content-Length (180 B head)"));
            }
        } finally {
            KernelTestSupport.dispose(kernel);
        }
        if (!tableOnly) {
            realTraffic(args.length > 1 ? Integer.parseInt(args[1]) : 20_000);
        }
    }

    /**
     * A/B of two XDP objects on the test_run table's packets, for changes smaller than this VM's
     * drift: one data path whose object is swapped (KernelDataPath.reload) round after round, A then
     * B, each packet the quietest of RUNS runs; printed: each round, then the lowest per packet and object.
     */
    private static void abTable(Path a, Path b, int rounds, int repeat) {
        List<Path> objects = List.of(a, b);
        Map<String, String> heads = testRunHeads();
        Map<String, long[]> best = new java.util.LinkedHashMap<>();
        heads.keySet().forEach(k -> best.put(k, new long[] {Long.MAX_VALUE, Long.MAX_VALUE}));
        KernelDataPath kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(PORT));
        try {
            for (int round = 0; round < rounds; round++) {
                for (int o = 0; o < 2; o++) {
                    kernel.reload(java.util.Optional.of(objects.get(o)));
                    StringBuilder line = new StringBuilder("round " + round + (o == 0 ? " A:" : " B:"));
                    for (Map.Entry<String, String> head : heads.entrySet()) {
                        long ns = quietestMean(kernel.program(KernelDataPath.XDP_PROGRAM), Packets.tcp(PORT, head.getValue()),
                                null, repeat);
                        best.get(head.getKey())[o] = Math.min(best.get(head.getKey())[o], ns);
                        line.append(' ').append(ns);
                    }
                    System.out.println(line);
                }
            }
        } finally {
            KernelTestSupport.dispose(kernel);
        }
        System.out.printf("XDP test_run ns, A/B, lowest of %d rounds (repeat %,d per packet and round)%n", rounds, repeat);
        System.out.printf("%-46s %8s %8s%n", "packet", "A", "B");
        best.forEach((k, v) -> System.out.printf("%-46s %8d %8d%n", k, v[0], v[1]));
        System.out.println("A: " + a + ", B: " + b);
    }

    /**
     * The test_run table's frames as files (NN-row-label.bin), for {@code bpftool prog run id ID
     * data_in FILE repeat N} under perf: where a hot packet's time goes by source line
     * (docs/kernel-segments.md, "Sixth pass").
     */
    private static void writeFrames(Path dir) throws java.io.IOException {
        java.nio.file.Files.createDirectories(dir);
        int n = 0;
        for (Map.Entry<String, String> head : testRunHeads().entrySet()) {
            String name = String.format("%02d-%s.bin", n++, head.getKey().replaceAll("[^A-Za-z0-9]+", "-").replaceAll("-$", ""));
            java.nio.file.Files.write(dir.resolve(name), Packets.tcp(PORT, head.getValue()));
            System.out.println(dir.resolve(name));
        }
    }

    /** The test_run table's packets (payloads of one segment each, by row label). */
    static Map<String, String> testRunHeads() {
        Map<String, String> heads = new java.util.LinkedHashMap<>();
        heads.put("short GET (40 B head)", "GET /v1/models HTTP/1.1\r\nHost: r\r\n\r\n");
        heads.put("POST + Content-Length (180 B head)", "POST /v1/tasks/summarize HTTP/1.1\r\nHost: router:8080\r\n"
                + "User-Agent: curl/7.88.1\r\nAccept: */*\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n");
        heads.put("POST, 600 B of headers, no Content-Length", "POST /v1/chat/completions HTTP/1.1\r\nHost: r\r\nX-Pad: "
                + "p".repeat(560) + "\r\n\r\n" + "b".repeat(200));
        String chatHead = "POST /v1/chat/completions HTTP/1.1\r\nHost: router:8080\r\nContent-Type: application/json\r\n";
        for (int promptBytes : new int[] {250, 800}) {
            String body = chatBody(promptBytes);
            heads.put("chat, " + promptBytes + " B prompt in the segment",
                    chatHead + "Content-Length: " + body.length() + "\r\n\r\n" + body);
        }
        // Non-ASCII text: the fast path counts its words too and weighs its characters' blocks
        // (2-byte scripts; 3-byte CJK, by the wide copy; 3-byte text beside ASCII, by FAST_ANY); the window
        // scans the body's first 256 B whatever its size.
        String greek = "Πόσα αυγά πουλάει, με 2 δολάρια το καθένα; ";
        String[][] scripts = {
            {"250 B Greek", greek, "250"},
            {"250 B Cyrillic", "Сколько яиц она продаёт, по 2 доллара за каждое? ", "250"},
            {"250 B Chinese", "她每天卖多少个鸡蛋，每个鸡蛋2美元？", "250"},
            // GSM8K's first question in Chinese: digits among the characters, as real prompts have
            // (a word with an ASCII byte takes FAST_ANY, not the wide copy)
            {"250 B GSM8K Chinese", "珍妮特的鸭子每天下16个蛋。她每天早上吃3个，每天用4个给朋友烤松饼。"
                + "她以每个2美元的价格出售剩下的鸭蛋。她每天能赚多少美元？", "250"},
            // Devanagari and Thai: 3-byte characters below U+2000 (blocks weighed apart), by FAST_ANY
            {"250 B Hindi", "वह हर दिन कितने अंडे बेचती है, 2 डॉलर प्रति अंडा? ", "250"},
            {"250 B Thai", "เธอขายไข่วันละกี่ฟอง ฟองละ 2 ดอลลาร์ ", "250"},
            {"1300 B Greek", greek, "1300"},
        };
        for (String[] script : scripts) {
            String body = chatBody(script[1], Integer.parseInt(script[2]));
            heads.put("chat, " + script[0] + " prompt in the segment",
                    chatHead + "Content-Length: " + body.length() + "\r\n\r\n" + body);
        }
        // What the real-traffic phase sends (curl --data-binary of 400 B): its test_run figure beside
        // its figure under real traffic shows what a cold cache adds.
        heads.put("real-traffic request (POST, 400 B form body)", "POST /v1/tasks/summarize HTTP/1.1\r\nHost: 169.254.1.1:8080\r\n"
                + "User-Agent: curl/7.88.1\r\nAccept: */*\r\nContent-Length: 400\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\n\r\n" + "x".repeat(400));
        heads.put("not scored (binary payload)", "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u01fc");
        return heads;
    }

    /**
     * The lowest of RUNS test runs' means: this VM's vCPUs drift between a fast and a slow state for
     * seconds at a time (the same program measured 192 and 332 ns a minute apart), so one long run
     * measures the host as much as the program.
     */
    private static long quietestMean(BpfProgram program, byte[] frame, byte[] ctx, int repeat) {
        long best = Long.MAX_VALUE;
        for (int run = 0; run < RUNS; run++) {
            best = Math.min(best, program.testRun(frame, ctx, Math.max(1, repeat / RUNS)).meanDurationNs());
        }
        return best;
    }

    private static final int RUNS = 10;

    /**
     * What counting a request against its tenant's minute limits adds (nexus_limits.bpf.h): the same
     * chat packet from a source no prefix limits (one LPM lookup that misses) and from a limited
     * prefix (the lookup, the window read and two atomic adds), in turn, so a slow phase of the VM
     * falls on both. The limits are far above what the runs send, so every run counts.
     */
    private static void tenantLimitCost(KernelDataPath kernel, String chat, int repeat) {
        BpfProgram xdp = kernel.program(KernelDataPath.XDP_PROGRAM);
        byte[] frame = Packets.tcp(PORT, chat);
        io.nexuscore.net.Ipv4Prefix clients = io.nexuscore.net.Ipv4Prefix.covering(0xc0000200, 24); // Packets.CLIENT's /24
        io.nexuscore.kernel.maps.TenantWindows.Limit limit =
                new io.nexuscore.kernel.maps.TenantWindows.Limit(0, Integer.MAX_VALUE, Long.MAX_VALUE / 4, 0, 256);
        List<Long> off = new java.util.ArrayList<>();
        List<Long> on = new java.util.ArrayList<>();
        for (int round = 0; round < 4; round++) {
            kernel.tenantLimits().remove(clients);
            off.add(quietestMean(xdp, frame, null, repeat / 4));
            kernel.tenantLimits().put(clients, limit);
            on.add(quietestMean(xdp, frame, null, repeat / 4));
        }
        kernel.tenantLimits().remove(clients);
        kernel.tenantLimits().windows().clear(0);
        java.util.Collections.sort(off);
        java.util.Collections.sort(on);
        long offNs = (off.get(1) + off.get(2)) / 2;
        long onNs = (on.get(1) + on.get(2)) / 2;
        System.out.printf("%-46s %10d%n", "chat 250 B, source without tenant limits", offNs);
        System.out.printf("%-46s %10d   (+%d ns: counted against a limited prefix)%n", "chat 250 B, source with tenant limits",
                onNs, onNs - offNs);
    }

    /**
     * A client that writes the head, then the body (the OpenAI Python SDK's head, ~470 B): the head's
     * segment (scored, awaiting its body) and the body's first segment (scored from pending_bodies)
     * each cost one run; a test run of the body alone would find no pending head after its first
     * repetition, so the two go in turn, one repetition each, and each figure is the median of the
     * pairs (one repetition carries the test run's own clock reads, ~20-40 ns, which the repeated
     * figures above spread over the repetitions).
     */
    private static void headThenBody(KernelDataPath kernel, int repeat) {
        BpfProgram xdp = kernel.program(KernelDataPath.XDP_PROGRAM);
        int pairs = Math.max(1000, Math.min(50_000, repeat / 20));
        for (int promptBytes : new int[] {250, 1300}) {
            byte[] body = chatBody(promptBytes).getBytes(StandardCharsets.ISO_8859_1);
            byte[] head = Packets.chatHead(body.length, true);
            byte[] bodySegment = java.util.Arrays.copyOf(body, Math.min(body.length, 1448));
            long[] heads = new long[pairs];
            long[] bodies = new long[pairs];
            long[] floors = new long[pairs];
            byte[] get = Packets.tcp(PORT, "GET /v1/models HTTP/1.1\r\nHost: r\r\n\r\n");
            for (int i = 0; i < pairs; i++) {
                floors[i] = xdp.testRun(get, null, 1).meanDurationNs();
                int seq = 1 + i * 4096;
                heads[i] = xdp.testRun(Packets.tcpAt(Packets.CLIENT, 40000, PORT, seq, head), null, 1).meanDurationNs();
                bodies[i] = xdp.testRun(Packets.tcpAt(Packets.CLIENT, 40000, PORT, seq + head.length, bodySegment), null, 1)
                        .meanDurationNs();
            }
            java.util.Arrays.sort(heads);
            java.util.Arrays.sort(bodies);
            java.util.Arrays.sort(floors);
            System.out.printf("%-46s %10d%n", "short GET, one repetition (the floor)", floors[pairs / 2]);
            System.out.printf("%-46s %10d%n", "SDK head alone (" + head.length + " B, awaits body)", heads[pairs / 2]);
            System.out.printf("%-46s %10d%n", "its body segment, " + promptBytes + " B prompt (" + bodySegment.length
                    + " B)", bodies[pairs / 2]);
        }
        System.out.println("(head then body: one repetition each, median of " + pairs + " pairs; one repetition"
                + " costs more than the repeated figures above: compare with the floor, which is 'short GET' above)");
    }


    /**
     * Verdict reads from Java: B holds its slot, A shares B's slot and was moved to the LRU fallback
     * (routing_decisions) when B's head was stored, so both paths read a real verdict.
     */
    private static void lookupCost(KernelDataPath kernel, String head) throws Exception {
        Inet4Address client = (Inet4Address) InetAddress.getByAddress(Packets.CLIENT);
        Inet4Address router = (Inet4Address) InetAddress.getByAddress(Packets.ROUTER);
        List<Integer> ports = KernelTestSupport.collidingClientPorts(2, client, router, PORT);
        byte[] payload = head.getBytes(StandardCharsets.ISO_8859_1);
        for (int port : ports) {
            kernel.program(KernelDataPath.XDP_PROGRAM).testRun(Packets.tcp(Packets.CLIENT, port, PORT, Packets.TCP_ACK_PSH,
                    payload), null, 1);
        }
        FourTuple inFallback = new FourTuple(client, ports.get(0), router, PORT);
        FourTuple inSlot = new FourTuple(client, ports.get(1), router, PORT);
        FourTuple miss = new FourTuple(client, ports.get(1) + 1, router, PORT);
        byte[] frame6 = Packets.ipv6Tcp(PORT, head);
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame6, null, 1);
        FourTuple inSlot6 = Packets.tuple(frame6);
        KernelVerdicts verdicts = kernel.verdicts();
        if (verdicts.fromSlot(inSlot).isEmpty() || verdicts.fromMap(inFallback).isEmpty() || verdicts.fromSlot(inSlot6).isEmpty()) {
            throw new IllegalStateException("the slot and fallback verdicts to read are not there");
        }
        int n = 500_000;
        Runnable[] ops = {() -> verdicts.lookupInMemory(inSlot), () -> verdicts.lookupInMemory(inSlot6)};
        for (Runnable op : ops) {
            time(n / 5, op); // discarded: the first timing runs in on-stack-replaced code (IPv4 looked 2x slower)
        }
        Timing slot = time(n, () -> verdicts.lookupInMemory(inSlot));
        Timing slot6 = time(n, () -> verdicts.lookupInMemory(inSlot6));
        Timing syscall = time(n, () -> verdicts.fromMap(inFallback));
        Timing collided = time(n, () -> verdicts.lookup(inFallback));
        Timing none = time(n, () -> verdicts.lookup(miss));
        Scorer scorer = new Scorer(ScoreWeights.DEFAULT);
        Timing java = time(n, () -> RequestHeadParser.parse(payload).map(h -> h.score(scorer)));
        System.out.printf("%nverdict read from Java, %,d calls each, ns per call: the quietest %,d-call window; median and "
                + "p99 of %d-call batches; mean; thread CPU time (not counting time the thread waited for a core); bytes "
                + "allocated per call%n", n, WINDOW * BATCH, BATCH);
        System.out.printf("  %-58s %7s %7s %7s %7s %7s %7s%n", "", "best", "median", "p99", "mean", "cpu", "B/call");
        slot.print("mmap'ed slot, plain loads (the data plane's path)");
        slot6.print("the same, IPv6 connection");
        syscall.print("LRU fallback by bpf(2) BPF_MAP_LOOKUP_ELEM (jnr-ffi)");
        collided.print("collided connection: slot holds another, then bpf(2)");
        none.print("no verdict: slot miss, then bpf(2)");
        java.print("Java RequestHeadParser + Scorer on the same head");
    }

    private static final int BATCH = 100;
    /** Batches per window of the "best" column (10,000 calls). */
    private static final int WINDOW = 100;

    /** Per-call figures of one timed operation. */
    private record Timing(double bestNs, double medianNs, double p99Ns, double meanNs, double cpuNs, double bytesPerCall) {
        void print(String what) {
            System.out.printf("  %-58s %7.0f %7.0f %7.0f %7.0f %7.0f %7.1f%n", what, bestNs, medianNs, p99Ns, meanNs, cpuNs,
                    bytesPerCall);
        }
    }

    private static Timing time(int n, Runnable op) {
        // Warm-up: n calls and at least 2 s, so C2 has compiled the path on a busy machine too.
        long warmUntil = System.nanoTime() + Math.min(2_000_000_000L, n * 4_000L);
        for (int i = 0; i < n || System.nanoTime() < warmUntil; i++) {
            op.run();
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().getId();
        double[] batches = new double[n / BATCH];
        long allocatedBefore = threads.getThreadAllocatedBytes(thread);
        long cpuBefore = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        for (int b = 0; b < batches.length; b++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < BATCH; i++) {
                op.run();
            }
            batches[b] = (System.nanoTime() - t0) / (double) BATCH;
        }
        long elapsed = System.nanoTime() - start;
        long cpu = threads.getCurrentThreadCpuTime() - cpuBefore;
        double bestWindow = Double.MAX_VALUE; // the quietest WINDOW consecutive batches: the code's cost on a busy machine
        for (int w = 0; w + WINDOW <= batches.length; w += WINDOW) {
            double sum = 0;
            for (int b = w; b < w + WINDOW; b++) {
                sum += batches[b];
            }
            bestWindow = Math.min(bestWindow, sum / WINDOW);
        }
        long allocated = threads.getThreadAllocatedBytes(thread) - allocatedBefore;
        java.util.Arrays.sort(batches);
        int calls = batches.length * BATCH;
        return new Timing(bestWindow, batches[batches.length / 2], batches[(int) (batches.length * 0.99)],
                elapsed / (double) calls, cpu / (double) calls, allocated / (double) calls);
    }

    /** The floor's object, built by bench/kernel-bench.sh from bench/bpf/nexus_empty.bpf.c. */
    private static final Path EMPTY_PROGRAMS = Path.of("target/bench-bpf/nexus_empty.bpf.o");

    /**
     * run_time_ns / run_cnt per program while curl sends {@code requests} keep-alive requests through a
     * veth: the router's programs, then, with the same traffic, two programs that do nothing (the
     * floor: what bpf_stats reports for any program on this interface and machine).
     */
    private static void realTraffic(int requests) throws Exception {
        // A form body (no prompt key: the body phase only searches for one) and a chat request with
        // a 250 B prompt, as an OpenAI client sends it (the body phase counts the prompt's features).
        realTraffic(requests, "POST of a 400 B form body", "/v1/tasks/summarize", List.of("--data-binary", "x".repeat(400)));
        realTraffic(requests, "chat request, 250 B prompt", "/v1/chat/completions",
                List.of("-H", "Content-Type: application/json", "--data-binary", chatBody(250)));
    }

    /** A chat request's body whose one user message is promptBytes of English. */
    private static String chatBody(int promptBytes) {
        return "{\"model\":\"m\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\""
                + "How many eggs does she sell, at 2 dollars each? ".repeat(promptBytes / 48 + 1).substring(0, promptBytes)
                + "\"}]}";
    }

    /**
     * A chat request's body whose one user message is promptBytes of text's UTF-8 repeated (cut
     * after promptBytes bytes, even inside a character), as a string of its bytes (ISO-8859-1).
     */
    private static String chatBody(String text, int promptBytes) {
        byte[] utf8 = text.repeat(promptBytes / text.length() + 1).getBytes(StandardCharsets.UTF_8);
        return "{\"model\":\"m\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\""
                + new String(java.util.Arrays.copyOf(utf8, promptBytes), StandardCharsets.ISO_8859_1) + "\"}]}";
    }

    private static void realTraffic(int requests, String label, String path, List<String> payload) throws Exception {
        Path pinDir = KernelTestSupport.uniquePinDir();
        try (VethNetns veth = VethNetns.create()) {
            HttpServer server = HttpServer.create(new InetSocketAddress(veth.hostAddress, PORT), 64);
            server.createContext("/", exchange -> {
                exchange.getRequestBody().readAllBytes();
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            server.start();
            AutoCloseable stats = KernelDataPath.enableStats(); // fd-scoped: off again when closed
            try {
                String url = "http://" + veth.hostAddress.getHostAddress() + ":" + PORT + path;
                List<String> command = new ArrayList<>(List.of("curl", "-s", "-o", "/dev/null"));
                command.addAll(payload);
                for (int i = 0; i < TRAFFIC_BATCH; i++) {
                    command.add(url);
                }
                KernelDataPath kernel = KernelDataPath.load(new KernelConfig(KernelConfig.Mode.KERNEL, pinDir,
                        List.of(veth.hostInterface), KernelConfig.XdpMode.GENERIC), KernelTestSupport.DEFAULT_SCORING, Set.of(PORT),
                        io.nexuscore.config.MetricsConfig.DEFAULT.kernelTimingEvery()); // as the router loads it
                Traffic ours;
                try {
                    ours = send(veth, command, requests, kernel::programStats, KernelDataPath.XDP_PROGRAM,
                            KernelDataPath.TC_CLASSIFY_PROGRAM);
                    System.out.printf("%nreal traffic, %s: %,d HTTP requests over veth in %.1f s (BPF_ENABLE_STATS), %d batches of %d%n",
                            label, requests, ours.seconds, ours.xdpBatches.length, TRAFFIC_BATCH);
                    System.out.printf("%-20s %12s %12s %10s %12s %12s%n", "program", "run_cnt", "run_time_ns", "ns/run",
                            "batch P50", "batch min");
                    ours.print();
                    System.out.printf("%-20s %s%n", KernelDataPath.TC_POLICY_PROGRAM + ", " + KernelDataPath.TC_MARK_PROGRAM,
                            "(tail-called: their time is in nexus_tc_classify's)");
                    System.out.printf("tier counters: %s%n", kernel.tierCounters().counts());
                } finally {
                    KernelTestSupport.dispose(kernel);
                }
                if (Files.isRegularFile(EMPTY_PROGRAMS)) {
                    floorBeside(ours, veth, command, requests);
                } else {
                    System.out.println("(no floor measured: " + EMPTY_PROGRAMS + " is missing; bench/kernel-bench.sh builds it)");
                }
            } finally {
                stats.close();
                server.stop(0);
            }
        } finally {
            KernelDataPath.removePins(pinDir);
        }
        System.out.println("(batch P50, min: ns/run over each curl batch; this VM's vCPUs have slow phases lasting seconds)");
        System.out.println("(run_cnt counts every packet on the interface: SYNs, ACKs and requests)");
    }

    /** The same traffic through programs that do nothing, and the router's programs' figures above it. */
    private static void floorBeside(Traffic ours, VethNetns veth, List<String> command, int requests) {
        Traffic floor;
        try (EmptyPrograms empty = EmptyPrograms.attach(EMPTY_PROGRAMS, veth.hostInterface)) {
            floor = send(veth, command, requests, empty::stats, EmptyPrograms.XDP_PROGRAM, EmptyPrograms.TC_PROGRAM);
        }
        System.out.printf("floor, the same traffic through programs that do nothing (%.1f s):%n", floor.seconds);
        floor.print();
        System.out.printf("router's programs above the floor: XDP %+.0f ns/run (batch P50 %+.0f), TC chain %+.0f (batch P50 %+.0f)%n",
                ours.xdp.meanRunNs() - floor.xdp.meanRunNs(), median(ours.xdpBatches) - median(floor.xdpBatches),
                ours.tc.meanRunNs() - floor.tc.meanRunNs(), median(ours.tcBatches) - median(floor.tcBatches));
    }

    /** URLs per curl run: one keep-alive connection each. */
    private static final int TRAFFIC_BATCH = 500;

    /** One program pair's figures over a traffic run: totals and each curl batch's ns/run. */
    private record Traffic(ProgramStats xdp, ProgramStats tc, double[] xdpBatches, double[] tcBatches, double seconds) {
        void print() {
            for (ProgramStats s : List.of(xdp, tc)) {
                double[] batches = s == xdp ? xdpBatches : tcBatches;
                System.out.printf("%-20s %,12d %,12d %10.0f %12.0f %12.0f%n", s.program(), s.runCount(), s.runTimeNs(),
                        s.meanRunNs(), median(batches), batches[0]);
            }
        }
    }

    private static Traffic send(VethNetns veth, List<String> command, int requests,
                                java.util.function.Supplier<List<ProgramStats>> stats, String xdpName, String tcName) {
        List<ProgramStats> first = stats.get();
        List<double[]> batchMeans = new ArrayList<>();
        long start = System.nanoTime();
        for (int sent = 0; sent < requests; sent += TRAFFIC_BATCH) {
            List<ProgramStats> before = stats.get();
            veth.inNamespace(command.toArray(String[]::new));
            List<ProgramStats> after = stats.get();
            batchMeans.add(new double[] {delta(before, after, xdpName).meanRunNs(), delta(before, after, tcName).meanRunNs()});
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        List<ProgramStats> last = stats.get();
        double[] xdp = batchMeans.stream().mapToDouble(m -> m[0]).sorted().toArray();
        double[] tc = batchMeans.stream().mapToDouble(m -> m[1]).sorted().toArray();
        return new Traffic(delta(first, last, xdpName), delta(first, last, tcName), xdp, tc, seconds);
    }

    private static ProgramStats find(List<ProgramStats> stats, String program) {
        return stats.stream().filter(s -> s.program().equals(program)).findFirst().orElseThrow();
    }

    private static ProgramStats delta(List<ProgramStats> before, List<ProgramStats> after, String program) {
        ProgramStats a = find(after, program);
        ProgramStats b = find(before, program);
        return new ProgramStats(program, a.id(), a.runTimeNs() - b.runTimeNs(), a.runCount() - b.runCount());
    }

    private static double median(double[] sorted) {
        return sorted[sorted.length / 2];
    }
}
