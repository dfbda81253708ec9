package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.maps.KernelVerdicts;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.SocketMarks;
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
 * Java reads the mapping. Slot placement (Java's slot hash = the kernel's), the slot as the primary
 * store and the collision fallback to routing_decisions(6), the TC chain reading both, reads racing
 * writers on both CPUs, and the maps' memory as bpftool shows it.
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
    record Connection(int clientPort, String head, KernelVerdict verdict, boolean ipv6) {
        Connection(int clientPort, String head, KernelVerdict verdict) {
            this(clientPort, head, verdict, false);
        }

        Connection v6() {
            return new Connection(clientPort, head, verdict, true);
        }

        byte[] frame() {
            byte[] payload = head.getBytes(StandardCharsets.ISO_8859_1);
            return ipv6 ? Packets.ipv6Tcp(Packets.CLIENT6, clientPort, PORT, Packets.TCP_ACK_PSH, payload)
                    : Packets.tcp(Packets.CLIENT, clientPort, PORT, Packets.TCP_ACK_PSH, payload);
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
        return KernelTestSupport.collidingClientPorts(count, SharedStructs.inet4(Packets.CLIENT),
                SharedStructs.inet4(Packets.ROUTER), PORT);
    }

    private static void xdp(Connection c, int repeat) {
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(c.frame(), null, repeat);
    }

    /** The TC chain's tier for a request segment of the connection, or -1 when it marks nothing. */
    private static int tcTier(Connection c) {
        byte[] ctx = kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM).testRun(c.frame(), new byte[192], 1).contextOut();
        int mark = java.nio.ByteBuffer.wrap(ctx).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(8); // __sk_buff.mark
        return SocketMarks.requestTier(mark).map(Tier::wire).orElse(-1);
    }

    @Test
    void theSlotIsThePrimaryStoreAndACollisionMovesTheHolderToTheLruMap() {
        List<Integer> ports = collidingPorts(2);
        Connection a = connection(ports.get(0), 1, 100);
        Connection b = connection(ports.get(1), 2, 900);
        Connection elsewhere = connection(ports.get(0) + 1, 3, 300);

        xdp(a, 1);
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().fromSlot(a.tuple()), "A's slot holds A");
        assertEquals(Optional.empty(), kernel.verdicts().fromMap(a.tuple()), "a verdict in its slot is nowhere else");
        xdp(b, 1);
        xdp(elsewhere, 1);

        assertEquals(Optional.of(b.verdict()), kernel.verdicts().fromSlot(b.tuple()), "the last writer owns the slot");
        assertEquals(Optional.empty(), kernel.verdicts().fromSlot(a.tuple()), "A's slot now holds B's key: no slot verdict for A");
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().fromMap(a.tuple()), "A moved to routing_decisions");
        assertEquals(Optional.empty(), kernel.verdicts().fromMap(b.tuple()), "B is only in the slot");
        assertEquals(Optional.of(elsewhere.verdict()), kernel.verdicts().fromSlot(elsewhere.tuple()), "another slot is untouched");

        KernelVerdicts.Stats before = kernel.verdicts().stats();
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().lookup(a.tuple()), "A's verdict comes from routing_decisions");
        assertEquals(Optional.of(b.verdict()), kernel.verdicts().lookup(b.tuple()));
        KernelVerdicts.Stats after = kernel.verdicts().stats();
        assertEquals(before.slotMisses() + 1, after.slotMisses(), "A's read missed its slot");
        assertEquals(before.slotHits() + 1, after.slotHits(), "B's read hit");
        assertEquals(a.verdict().tier().wire(), tcTier(a), "the TC chain finds A in routing_decisions");
        assertEquals(b.verdict().tier().wire(), tcTier(b), "and B in the slot");

        xdp(a, 1); // A's next head: A takes the slot back, B moves out
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().fromSlot(a.tuple()));
        assertEquals(Optional.of(b.verdict()), kernel.verdicts().fromMap(b.tuple()));
        assertEquals(Optional.of(b.verdict()), kernel.verdicts().lookup(b.tuple()));
        assertEquals(2, kernel.routingDecisions().decision(a.tuple()).orElseThrow().heads(),
                "A's head count carried over from routing_decisions into the slot");
        Map<FourTuple, SharedStructs.RoutingDecision> all = kernel.routingDecisions().snapshot();
        assertEquals(a.verdict(), all.get(a.tuple()).verdict(), "snapshot: the slot's verdict for A, not the older copy");
        assertEquals(b.verdict(), all.get(b.tuple()).verdict());

        FourTuple unknown = connection(ports.get(0) + 2, 4, 10).tuple();
        assertEquals(Optional.empty(), kernel.verdicts().lookup(unknown), "no verdict anywhere: empty");
        assertEquals(-1, tcTier(connection(ports.get(0) + 2, 4, 10)), "no verdict: TC marks nothing");
    }

    /**
     * routing_decisions is pinned, so any root tool can write it: an entry whose tier byte names no
     * tier (here 9) is no verdict, in a lookup and in the snapshot, instead of an exception per request.
     */
    @Test
    void aForeignEntryWhoseTierIsNoTierIsNoVerdict() {
        List<Integer> ports = collidingPorts(2);
        Connection a = connection(ports.get(0), 1, 100);
        xdp(a, 1);
        xdp(connection(ports.get(1), 2, 900), 1); // A moves to routing_decisions
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().fromMap(a.tuple()));

        byte[] foreign = new byte[SharedStructs.ROUTING_DECISION.size()];
        foreign[SharedStructs.ROUTING_DECISION.offset("score")] = 50;
        foreign[SharedStructs.ROUTING_DECISION.offset("tier")] = 9;
        try (BpfMap map = BpfMap.openPinned(kernel.pinDir(), "routing_decisions", SharedStructs.FLOW_KEY.size(),
                SharedStructs.ROUTING_DECISION.size())) {
            map.update(SharedStructs.flowKey(a.tuple()), foreign, 0);
        }
        assertEquals(Optional.empty(), kernel.verdicts().lookup(a.tuple()), "scored in Java instead");
        assertEquals(Optional.empty(), kernel.routingDecisions().decision(a.tuple()));
        assertTrue(!kernel.routingDecisions().snapshot().containsKey(a.tuple()), "left out of the snapshot");
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
        assertEquals(Optional.of(expected), kernel.verdicts().lookup(tuple));
        assertEquals(Optional.empty(), kernel.verdicts().fromMap(tuple), "in its slot, so not in routing_decisions6");
        FourTuple sameNumbersAsIpv4 = new FourTuple(SharedStructs.inet4(Packets.CLIENT), Packets.CLIENT_PORT,
                SharedStructs.inet4(Packets.ROUTER), PORT);
        assertEquals(Optional.empty(), kernel.verdicts().lookup(sameNumbersAsIpv4), "IPv4 maps untouched");
    }

    @Test
    void anIpv6CollisionMovesTheHolderToRoutingDecisions6() {
        List<Integer> ports = KernelTestSupport.collidingClientPorts(2, SharedStructs.inet(Packets.CLIENT6),
                SharedStructs.inet(Packets.ROUTER6), PORT);
        Connection a = connection(ports.get(0), 21, 150).v6();
        Connection b = connection(ports.get(1), 22, 700).v6();
        xdp(a, 1);
        xdp(b, 1);
        assertEquals(Optional.of(b.verdict()), kernel.verdicts().fromSlot(b.tuple()));
        assertEquals(Optional.empty(), kernel.verdicts().fromSlot(a.tuple()));
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().fromMap(a.tuple()), "A moved to routing_decisions6");
        assertEquals(Optional.of(a.verdict()), kernel.verdicts().lookup(a.tuple()));
        assertEquals(Optional.of(b.verdict()), kernel.verdicts().lookup(b.tuple()));
        assertEquals(a.verdict().tier().wire(), tcTier(a));
        assertEquals(b.verdict().tier().wire(), tcTier(b));
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
            xdp(c, 1); // each now in the slot or moved to routing_decisions: a full lookup always finds it
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

    /**
     * The verdict store's memory as bpftool prints it (docs/benchmarks.md, "Kernel data path"): 1M IPv4 slots of
     * 24 B are the store, the LRU maps only a collision fallback.
     */
    @Test
    void mapMemoryAsBpftoolShowsIt() {
        JsonObject slots = bpftoolMapShow("verdict_slots");
        assertEquals(SharedStructs.VERDICT_SLOT.size(), slots.getInteger("bytes_value"));
        assertEquals(24, slots.getInteger("bytes_value"), "verdict_slot is 24 bytes: seq, 12-byte key, 8-byte verdict");
        assertEquals(1 << 20, slots.getInteger("max_entries"), "1M IPv4 slots");
        assertNotEquals(0, slots.getInteger("flags") & (1 << 10), "BPF_F_MMAPABLE");
        JsonObject lru = bpftoolMapShow("routing_decisions");
        assertEquals(8, lru.getInteger("bytes_value"), "routing_decision is 8 bytes");
        assertEquals(12, lru.getInteger("bytes_key"));
        assertEquals(SharedStructs.VERDICT_FALLBACK, lru.getInteger("max_entries"));
        JsonObject slots6 = bpftoolMapShow("verdict_slots6");
        assertEquals(SharedStructs.VERDICT_SLOTS6, slots6.getInteger("max_entries"));
        JsonObject lru6 = bpftoolMapShow("routing_decisions6");
        assertEquals(SharedStructs.VERDICT_FALLBACK6, lru6.getInteger("max_entries"));

        long slotMemlock = memlock(slots);
        long ipv4 = slotMemlock + memlock(lru);
        long all = ipv4 + memlock(slots6) + memlock(lru6);
        System.out.printf("memlock: verdict_slots %,d B, routing_decisions %,d B, verdict_slots6 %,d B, "
                + "routing_decisions6 %,d B; IPv4 store (1M verdicts) %,d B, all four %,d B%n", slotMemlock, memlock(lru),
                memlock(slots6), memlock(lru6), ipv4, all);
        assertTrue(slotMemlock <= 25L << 20, "1M slots lock about 24 MiB: " + slotMemlock);
        // 1M verdicts were a 1M-entry LRU locking 88.8 MB; the fallback must stay a small part of the store.
        assertTrue(memlock(lru) <= 6_000_000L, "routing_decisions " + memlock(lru));
        assertTrue(ipv4 <= 31_000_000L, "IPv4 store " + ipv4);
        assertTrue(all <= 36_000_000L, "all four verdict maps " + all);
    }

    private static long memlock(JsonObject map) {
        return Long.parseLong(map.getValue("bytes_memlock").toString());
    }

    private static JsonObject bpftoolMapShow(String map) {
        return new JsonObject(Shell.ok("bpftool", "-j", "map", "show", "pinned", kernel.pinDir().resolve(map).toString()));
    }
}
