package io.nexuscore.bpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The mmap'ed verdict slots against the real kernel: the XDP program (BPF_PROG_TEST_RUN) writes,
 * Java reads the mapping. Slot placement (Java's slot hash = the kernel's), collision fallback to
 * routing_decisions, reads racing writers on both CPUs, and the maps' memory as bpftool shows it.
 */
class VerdictSlotsTest {

    private static final int PORT = 8080;
    private static KernelDataPath kernel;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(PORT));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @BeforeEach
    void empty() {
        kernel.routingDecisions().snapshot().keySet().forEach(kernel.routingDecisions()::remove);
    }

    /** A connection (client source port) and the request head its XDP run stores. */
    record Connection(int clientPort, String head, KernelVerdict verdict) {
        byte[] frame() {
            return Packets.tcp(Packets.CLIENT, clientPort, PORT, Packets.TCP_ACK_PSH, head.getBytes(StandardCharsets.ISO_8859_1));
        }

        FourTuple tuple() {
            return Packets.tuple(frame());
        }
    }

    /** POST /cN with Content-Length body and no body bytes: scored from the length (blind), a distinct check per N. */
    private static Connection connection(int clientPort, int n, int body) {
        String line = "POST /c" + n + " HTTP/1.1";
        byte[] lineBytes = line.getBytes(StandardCharsets.ISO_8859_1);
        int score = new Scorer(KernelTestSupport.DEFAULT_SCORING.weights()).score(lineBytes, body);
        Tier tier = score <= 60 ? Tier.NANO : score <= 130 ? Tier.SMALL : Tier.LARGE;
        return new Connection(clientPort, line + "\r\nContent-Length: " + body + "\r\n\r\n",
                new KernelVerdict(score, tier, KernelVerdict.check(Scorer.requestLineHash(lineBytes), body), body > 0));
    }

    /** {@code count} client ports whose 4-tuples share one IPv4 slot, found with Java's slot hash. */
    private static List<Integer> collidingPorts(int count) {
        Map<Integer, List<Integer>> bySlot = new java.util.HashMap<>();
        for (int p = 1024; p < 65536; p++) {
            FourTuple t = new FourTuple(SharedStructs.inet4(Packets.CLIENT), p, SharedStructs.inet4(Packets.ROUTER), PORT);
            List<Integer> ports = bySlot.computeIfAbsent(SharedStructs.slotIndex(SharedStructs.flowKey(t),
                    SharedStructs.VERDICT_SLOTS), k -> new ArrayList<>());
            ports.add(p);
            if (ports.size() == count) {
                return ports;
            }
        }
        throw new AssertionError("no " + count + " colliding ports");
    }

    private static void xdp(Connection c, int repeat) {
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(c.frame(), null, repeat);
    }

    @Test
    void aCollisionFallsBackToTheLruMap() {
        List<Integer> ports = collidingPorts(2);
        Connection a = connection(ports.get(0), 1, 100);
        Connection b = connection(ports.get(1), 2, 900);
        Connection elsewhere = connection(ports.get(0) + 1, 3, 300);

        xdp(a, 1);
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().fromSlot(a.tuple()), "A's slot holds A");
        xdp(b, 1);
        xdp(elsewhere, 1);

        assertEquals(Optional.of(b.verdict()), kernel.verdicts().fromSlot(b.tuple()), "the last writer owns the slot");
        assertEquals(Optional.empty(), kernel.verdicts().fromSlot(a.tuple()), "A's slot now holds B's key: no slot verdict for A");
        assertEquals(Optional.of(elsewhere.verdict()), kernel.verdicts().fromSlot(elsewhere.tuple()), "another slot is untouched");

        KernelVerdicts.Stats before = kernel.verdicts().stats();
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().lookup(a.tuple()), "A's verdict comes from routing_decisions");
        assertEquals(Optional.of(b.verdict()), kernel.verdicts().lookup(b.tuple()));
        KernelVerdicts.Stats after = kernel.verdicts().stats();
        assertEquals(before.slotMisses() + 1, after.slotMisses(), "A's read missed its slot");
        assertEquals(before.slotHits() + 1, after.slotHits(), "B's read hit");

        FourTuple unknown = connection(ports.get(0) + 2, 4, 10).tuple();
        assertEquals(Optional.empty(), kernel.verdicts().lookup(unknown), "no verdict anywhere: empty");
    }

    @Test
    void ipv6VerdictsHaveTheirOwnSlots() {
        byte[] frame = Packets.ipv6Tcp(PORT, "POST /v1/refine HTTP/1.1\r\nContent-Length: 200\r\n\r\n");
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(frame, null, 1);
        FourTuple tuple = Packets.tuple(frame);
        // No body in the segment: 32 tokens from the length ((200 - 64) * 241 / 1024), + 15 for "ref"; blind.
        KernelVerdict expected = new KernelVerdict(47, Tier.NANO, KernelVerdict.check(
                Scorer.requestLineHash("POST /v1/refine HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1)), 200), true);
        assertEquals(Optional.of(expected), kernel.verdicts().fromSlot(tuple));
        assertEquals(Optional.of(expected), kernel.verdicts().fromMap(tuple));
        FourTuple sameNumbersAsIpv4 = new FourTuple(SharedStructs.inet4(Packets.CLIENT), Packets.CLIENT_PORT,
                SharedStructs.inet4(Packets.ROUTER), PORT);
        assertEquals(Optional.empty(), kernel.verdicts().lookup(sameNumbersAsIpv4), "IPv4 maps untouched");
    }

    /**
     * Two XDP writers on the two CPUs alternate three connections' verdicts in one slot (the kernel
     * runs each test_run's repeats back to back) while two Java threads read the slot: a read returns
     * the verdict of the connection asked for, or nothing; never another's, never a mix.
     */
    @Test
    void readsRacingWritersNeverReturnATornOrForeignVerdict() throws Exception {
        List<Integer> ports = collidingPorts(3);
        List<Connection> connections = List.of(connection(ports.get(0), 11, 100), connection(ports.get(1), 12, 404),
                connection(ports.get(2), 13, 1000));
        for (Connection c : connections) {
            xdp(c, 1); // every connection is in routing_decisions, so a full lookup always finds it
        }
        AtomicBoolean stop = new AtomicBoolean();
        Map<Integer, AtomicLong> slotHits = new ConcurrentHashMap<>();
        List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong reads = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int offset = w;
                writers.add(pool.submit(() -> {
                    for (int round = 0; round < 300; round++) {
                        xdp(connections.get((round + offset) % connections.size()), 2000);
                    }
                }));
            }
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    while (!stop.get()) {
                        for (Connection c : connections) {
                            reads.incrementAndGet();
                            Optional<KernelVerdict> slot = kernel.verdicts().fromSlot(c.tuple());
                            if (slot.isPresent()) {
                                slotHits.computeIfAbsent(c.clientPort(), k -> new AtomicLong()).incrementAndGet();
                                if (!slot.get().equals(c.verdict())) {
                                    wrong.add("slot gave " + slot.get() + " for " + c);
                                }
                            }
                            Optional<KernelVerdict> full = kernel.verdicts().lookup(c.tuple());
                            if (!full.equals(Optional.of(c.verdict()))) {
                                wrong.add("lookup gave " + full + " for " + c);
                            }
                        }
                    }
                }));
            }
            for (Future<?> w : writers) {
                w.get(120, TimeUnit.SECONDS);
            }
            stop.set(true);
            for (Future<?> r : readers) {
                r.get(30, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        KernelVerdicts.Stats stats = kernel.verdicts().stats();
        System.out.printf("slot race: %,d reads, slot hits per connection %s, %s%n", reads.get(), slotHits, stats);
        assertEquals(List.of(), wrong.subList(0, Math.min(10, wrong.size())), wrong.size() + " wrong reads");
        assertTrue(reads.get() > 1000, "the readers ran while the writers wrote: " + reads.get());
        assertEquals(3, slotHits.size(), "each connection was seen in the slot at some point: " + slotHits);
    }

    /** routing_decisions values are 8 bytes; the figure bpftool prints for the 1M-entry map (README). */
    @Test
    void mapMemoryAsBpftoolShowsIt() {
        JsonObject lru = bpftoolMapShow("routing_decisions");
        assertEquals(8, lru.getInteger("bytes_value"), "routing_decision is 8 bytes");
        assertEquals(12, lru.getInteger("bytes_key"));
        assertEquals(1_000_000, lru.getInteger("max_entries"));
        long memlock = Long.parseLong(lru.getValue("bytes_memlock").toString());
        // 24-byte values locked 104,778,176 B on the 6.x kernels here; each value byte less saves 1 MB.
        assertTrue(memlock < 104_778_176L - 15_000_000L, "memlock " + memlock);

        JsonObject slots = bpftoolMapShow("verdict_slots");
        assertEquals(SharedStructs.VERDICT_SLOT.size(), slots.getInteger("bytes_value"));
        assertEquals(SharedStructs.VERDICT_SLOTS, slots.getInteger("max_entries"));
        assertNotEquals(0, slots.getInteger("flags") & (1 << 10), "BPF_F_MMAPABLE");
        long slotMemlock = Long.parseLong(slots.getValue("bytes_memlock").toString());
        assertTrue(slotMemlock <= 2L * SharedStructs.VERDICT_SLOT.size() * SharedStructs.VERDICT_SLOTS, "slot memlock " + slotMemlock);
        JsonObject lru6 = bpftoolMapShow("routing_decisions6");
        JsonObject slots6 = bpftoolMapShow("verdict_slots6");
        System.out.printf("memlock: routing_decisions %,d B (%,d entries), routing_decisions6 %,d B, verdict_slots %,d B, "
                + "verdict_slots6 %,d B%n", memlock, lru.getInteger("max_entries"), lru6.getValue("bytes_memlock"),
                slotMemlock, slots6.getValue("bytes_memlock"));
    }

    private static JsonObject bpftoolMapShow(String map) {
        return new JsonObject(Shell.ok("bpftool", "-j", "map", "show", "pinned", kernel.pinDir().resolve(map).toString()));
    }
}
