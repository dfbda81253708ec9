package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.StructLayout;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.TokenGain;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Java mirrors of the structs in src/main/bpf/nexus_shared.h: layouts plus encoders/decoders.
 * Network-order fields are written big-endian, host-order fields little-endian (x86-64).
 */
public final class SharedStructs {

    public static final StructLayout FLOW_KEY = StructLayout.of("flow_key", 12,
            "src_ip", 0, "dst_ip", 4, "src_port", 8, "dst_port", 10);
    public static final StructLayout FLOW_KEY6 = StructLayout.of("flow_key6", 36,
            "src_ip", 0, "dst_ip", 16, "src_port", 32, "dst_port", 34);
    public static final StructLayout ROUTING_DECISION = StructLayout.of("routing_decision", 8,
            "check", 0, "score", 4, "tier", 5, "flags", 6, "heads", 7);
    /** VERDICT_F_BLIND in nexus_shared.h. */
    public static final int VERDICT_F_BLIND = 0x01;
    /** VERDICT_F_COUNTED, VERDICT_F_OVER_* in nexus_shared.h: XDP's tenant-limit decision. */
    public static final int VERDICT_F_COUNTED = 0x02;
    public static final int VERDICT_F_OVER_REQUESTS = 0x04;
    public static final int VERDICT_F_OVER_TOKENS = 0x08;
    public static final int VERDICT_F_OVER_FOR_GOOD = 0x10;
    public static final StructLayout VERDICT_SLOT = StructLayout.of("verdict_slot", 24,
            "seq", 0, "key", 4, "verdict", 16);
    public static final StructLayout VERDICT_SLOT6 = StructLayout.of("verdict_slot6", 48,
            "seq", 0, "key", 4, "verdict", 40);
    public static final StructLayout SCORE_THRESHOLDS = StructLayout.of("score_thresholds", 8,
            "nano_max", 0, "small_max", 1, "writer", 2, "version", 4);
    public static final StructLayout TENANT_KEY = StructLayout.of("tenant_key", 8,
            "prefixlen", 0, "addr", 4);
    public static final StructLayout TENANT_FLOOR = StructLayout.of("tenant_floor", 4,
            "tier_floor", 0, "pad", 1);
    public static final StructLayout LOAD_SETTINGS = StructLayout.of("load_settings", 32,
            "weight_sum", 0, "weight_ref", 4, "weight_gen", 8, "weight_ana", 12, "ports", 16);

    public static final StructLayout TOKEN_MODEL = StructLayout.of("token_model", 8,
            "gain", 0, "version", 4);

    public static final StructLayout LATENCY_EVENT = StructLayout.of("latency_event", 32,
            "timestamp_ns", 0, "tenant_id", 8, "tier", 12, "pad", 13, "latency_us", 16, "true_tokens", 20,
            "estimate_q4", 24, "pad2", 28);
    public static final StructLayout ADAPTIVE_SETTINGS = StructLayout.of("adaptive_settings", 72,
            "enabled", 0, "period_ms", 4, "target_p95_us", 8, "step", 20, "floor", 24, "min_samples", 28,
            "max_events", 32, "ceiling", 36, "raise_below_pct", 40, "raise_after", 44, "calibrate", 48,
            "gain_min", 52, "gain_max", 56, "gain_step_max", 60, "calibration_min_samples", 64, "pad", 68);
    public static final StructLayout RECALIBRATION_EVENT = StructLayout.of("recalibration_event", 24,
            "timestamp_ns", 0, "old_nano_max", 8, "new_nano_max", 12, "p95_us", 16, "samples", 20);
    public static final StructLayout CALIBRATION_EVENT = StructLayout.of("calibration_event", 40,
            "timestamp_ns", 0, "old_gain", 8, "new_gain", 12, "samples", 16, "pad", 20, "true_tokens_sum", 24,
            "estimate_q4_sum", 32);
    public static final StructLayout ADAPTIVE_STATS = StructLayout.of("adaptive_stats", 136,
            "ticks", 0, "drained", 8, "recalibrations", 16, "last_update_rc", 24, "last_p95_us", 32,
            "last_samples", 44, "last", 56, "good_periods", 80, "pad", 84, "calibrations", 88,
            "last_calibration", 96);

    public static final StructLayout TENANT_LIMIT = StructLayout.of("tenant_limit", 32,
            "slot", 0, "requests_per_minute", 4, "tokens_per_minute", 8, "tokens_whole", 16, "output_tokens", 24,
            "pad", 28);
    public static final StructLayout TENANT_WINDOW = StructLayout.of("tenant_window", 32,
            "requests_start", 0, "requests", 8, "tokens_start", 16, "tokens", 24);
    /** TENANT_LIMIT_SLOTS and LIMIT_WINDOW_NS in nexus_shared.h. */
    public static final int TENANT_LIMIT_SLOTS = 1024;
    public static final long LIMIT_WINDOW_NS = 60_000_000_000L;

    public static final List<StructLayout> ALL = List.of(FLOW_KEY, FLOW_KEY6, ROUTING_DECISION,
            VERDICT_SLOT, VERDICT_SLOT6, SCORE_THRESHOLDS, TENANT_KEY, TENANT_FLOOR, LOAD_SETTINGS, TOKEN_MODEL,
            LATENCY_EVENT, ADAPTIVE_SETTINGS, RECALIBRATION_EVENT, CALIBRATION_EVENT, ADAPTIVE_STATS,
            TENANT_LIMIT, TENANT_WINDOW);

    /** VERDICT_SLOTS, VERDICT_SLOTS6 and SLOT_HASH_MULT in nexus_shared.h (checked against the maps at open). */
    public static final int VERDICT_SLOTS = 1 << 20;
    public static final int VERDICT_SLOTS6 = 1 << 16;
    /** VERDICT_FALLBACK, VERDICT_FALLBACK6 in nexus_shared.h: entries of routing_decisions, routing_decisions6. */
    public static final int VERDICT_FALLBACK = 65536;
    public static final int VERDICT_FALLBACK6 = 16384;
    /** PENDING_BODIES in nexus_shared.h: entries of pending_bodies (heads whose body is still to come; kernel-only). */
    public static final int PENDING_BODIES = 65536;
    public static final int SLOT_HASH_MULT = 0x9e3779b1;

    /** MAX_PORTS in nexus_shared.h. */
    public static final int MAX_PORTS = 8;

    private SharedStructs() {
    }

    /** flow_key / flow_key6 port fields (network order) and routing_decision words, read in place. */
    private static final VarHandle BIG_ENDIAN_SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LITTLE_ENDIAN_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** The key of the connection's map: flow_key for IPv4, flow_key6 for IPv6 (network order). */
    public static byte[] flowKey(FourTuple t) {
        byte[] src = t.srcAddress().getAddress();
        byte[] dst = t.dstAddress().getAddress();
        byte[] key = new byte[2 * src.length + 4];
        System.arraycopy(src, 0, key, 0, src.length);
        System.arraycopy(dst, 0, key, src.length, dst.length);
        BIG_ENDIAN_SHORT.set(key, 2 * src.length, (short) t.srcPort());
        BIG_ENDIAN_SHORT.set(key, 2 * src.length + 2, (short) t.dstPort());
        return key;
    }

    /** flow_key (12 bytes) or flow_key6 (36 bytes) back to the 4-tuple. */
    public static FourTuple decodeFlowKey(byte[] key) {
        int addressLength = (key.length - 4) / 2;
        byte[] src = java.util.Arrays.copyOfRange(key, 0, addressLength);
        byte[] dst = java.util.Arrays.copyOfRange(key, addressLength, 2 * addressLength);
        return new FourTuple(inet(src), (short) BIG_ENDIAN_SHORT.get(key, 2 * addressLength) & 0xffff, inet(dst),
                (short) BIG_ENDIAN_SHORT.get(key, 2 * addressLength + 2) & 0xffff);
    }

    /** The ports word of a flow_key (src_port | dst_port << 16 as loaded on a little-endian CPU; both fields big-endian). */
    public static int portsWord(FourTuple t) {
        return (Short.reverseBytes((short) t.srcPort()) & 0xffff) | Short.reverseBytes((short) t.dstPort()) << 16;
    }

    /** Words in a flow_key6, the most of either key. */
    public static final int KEY_WORDS_MAX = 9;

    /**
     * The connection's flow_key (3 words) or flow_key6 (9 words) as a little-endian CPU loads its
     * 32-bit words, into {@code words}; returns how many. Every address byte is read at a constant
     * index, so the compiler keeps the copy {@code Inet4Address.getAddress()} makes off the heap
     * (a byte-array view or a loop would keep it there); an Inet6Address copy stays (64 B a read).
     */
    public static int keyWords(FourTuple t, int[] words) {
        if (t.ipv6()) {
            byte[] src = t.srcAddress().getAddress();
            byte[] dst = t.dstAddress().getAddress();
            words[0] = littleEndian(src, 0);
            words[1] = littleEndian(src, 4);
            words[2] = littleEndian(src, 8);
            words[3] = littleEndian(src, 12);
            words[4] = littleEndian(dst, 0);
            words[5] = littleEndian(dst, 4);
            words[6] = littleEndian(dst, 8);
            words[7] = littleEndian(dst, 12);
            words[8] = portsWord(t);
            return 9;
        }
        byte[] src = t.srcAddress().getAddress();
        byte[] dst = t.dstAddress().getAddress();
        words[0] = littleEndian(src, 0);
        words[1] = littleEndian(dst, 0);
        words[2] = portsWord(t);
        return 3;
    }

    private static int littleEndian(byte[] b, int at) {
        return b[at] & 0xff | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | b[at + 3] << 24;
    }

    /** slot_hash in nexus_shared.h over the first {@code count} key words, masked to {@code slots}. */
    public static int slotIndex(int[] words, int count, int slots) {
        int h = 0;
        for (int i = 0; i < count; i++) {
            h = (h ^ words[i]) * SLOT_HASH_MULT;
        }
        h ^= h >>> 15;
        return h & (slots - 1);
    }

    /** The verdict slot of a key (flow_key or flow_key6 bytes); the same hash as above. */
    public static int slotIndex(byte[] key, int slots) {
        int[] words = new int[KEY_WORDS_MAX];
        return slotIndex(words, keyWords(decodeFlowKey(key), words), slots);
    }

    /** The kernel's routing_decision: the verdict, and how many heads the connection has had (wrapping). */
    public record RoutingDecision(KernelVerdict verdict, int heads) {
    }

    /** routing_decision's member offsets, looked up once: the verdict read decodes one per request. */
    private static final int CHECK_AT = ROUTING_DECISION.offset("check");
    private static final int SCORE_AT = ROUTING_DECISION.offset("score");
    private static final int TIER_AT = ROUTING_DECISION.offset("tier");
    private static final int FLAGS_AT = ROUTING_DECISION.offset("flags");
    private static final int HEADS_AT = ROUTING_DECISION.offset("heads");

    /** routing_decision as one little-endian 64-bit word (how the kernel stores it and a slot reader loads it). */
    static RoutingDecision decodeRoutingDecision(long word) {
        return new RoutingDecision(decodeVerdict(word), byteAt(word, HEADS_AT));
    }

    /**
     * Whether a routing_decision word's tier byte names a tier. Only words the kernel wrote are sure
     * to: the pinned maps are writable by any root tool, and a word that names no tier is no verdict.
     */
    static boolean namesATier(long word) {
        return byteAt(word, TIER_AT) <= Tier.LARGE.wire();
    }

    /** The verdict of a routing_decision word, without its head count; the word must name a tier. */
    static KernelVerdict decodeVerdict(long word) {
        return new KernelVerdict(byteAt(word, SCORE_AT), Tier.fromWire(byteAt(word, TIER_AT)), (int) (word >>> (8 * CHECK_AT)),
                (byteAt(word, FLAGS_AT) & VERDICT_F_BLIND) != 0, byteAt(word, FLAGS_AT) & LIMIT_FLAGS);
    }

    private static final int LIMIT_FLAGS = VERDICT_F_COUNTED | VERDICT_F_OVER_REQUESTS | VERDICT_F_OVER_TOKENS
            | VERDICT_F_OVER_FOR_GOOD;

    private static int byteAt(long word, int offset) {
        return (int) (word >>> (8 * offset)) & 0xff;
    }

    /** A routing_decision value as the little-endian word the decoders take. */
    static long routingDecisionWord(byte[] value) {
        return (long) LITTLE_ENDIAN_LONG.get(value, 0);
    }

    /** score_thresholds as one little-endian 64-bit word, as the CAS writers (kernel and mmap) see it. */
    public static long scoreThresholds(ThresholdState t) {
        return (t.nanoMax() & 0xffL) | (t.smallMax() & 0xffL) << 8 | (t.writer() & 0xffffL) << 16
                | (t.version() & 0xffff_ffffL) << 32;
    }

    public static ThresholdState decodeScoreThresholds(long word) {
        return new ThresholdState((int) word & 0xff, (int) (word >>> 8) & 0xff, (int) (word >>> 16) & 0xffff,
                word >>> 32);
    }

    public static byte[] loadSettings(ScoreWeights w, Set<Integer> ports) {
        if (ports.isEmpty() || ports.size() > MAX_PORTS) {
            throw new IllegalArgumentException("between 1 and " + MAX_PORTS + " data-plane ports, got " + ports);
        }
        ByteBuffer b = ByteBuffer.allocate(LOAD_SETTINGS.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(w.sum()).putInt(w.ref()).putInt(w.gen()).putInt(w.ana());
        ports.stream().sorted().forEach(port -> {
            if (port < 1 || port > 0xffff) {
                throw new IllegalArgumentException("data-plane port out of range: " + port);
            }
            b.putShort((short) (int) port);
        });
        return b.array();
    }

    public static byte[] adaptiveSettings(AdaptiveSettings a) {
        StructLayout l = ADAPTIVE_SETTINGS;
        ByteBuffer b = ByteBuffer.allocate(l.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(l.offset("enabled"), a.enabled() ? 1 : 0)
                .putInt(l.offset("period_ms"), a.periodMs())
                .putInt(l.offset("target_p95_us") + 4 * Tier.NANO.wire(), a.nanoTargetP95Us()) // small, large: none (0)
                .putInt(l.offset("step"), a.step())
                .putInt(l.offset("floor"), a.floor())
                .putInt(l.offset("min_samples"), a.minSamples())
                .putInt(l.offset("max_events"), a.maxEvents())
                .putInt(l.offset("ceiling"), a.ceiling())
                .putInt(l.offset("raise_below_pct"), a.raiseBelowPct())
                .putInt(l.offset("raise_after"), a.raiseAfter())
                .putInt(l.offset("calibrate"), a.calibrate() ? 1 : 0)
                .putInt(l.offset("gain_min"), a.gainMinQ10())
                .putInt(l.offset("gain_max"), a.gainMaxQ10())
                .putInt(l.offset("gain_step_max"), a.gainStepMaxQ10())
                .putInt(l.offset("calibration_min_samples"), a.calibrationMinSamples());
        return b.array();
    }

    public static AdaptiveSettings decodeAdaptiveSettings(byte[] value) {
        StructLayout l = ADAPTIVE_SETTINGS;
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        return new AdaptiveSettings(b.getInt(l.offset("enabled")) != 0, b.getInt(l.offset("period_ms")),
                b.getInt(l.offset("target_p95_us") + 4 * Tier.NANO.wire()), b.getInt(l.offset("step")),
                b.getInt(l.offset("floor")), b.getInt(l.offset("min_samples")), b.getInt(l.offset("max_events")),
                b.getInt(l.offset("ceiling")), b.getInt(l.offset("raise_below_pct")), b.getInt(l.offset("raise_after")),
                b.getInt(l.offset("calibrate")) != 0, b.getInt(l.offset("gain_min")), b.getInt(l.offset("gain_max")),
                b.getInt(l.offset("gain_step_max")), b.getInt(l.offset("calibration_min_samples")));
    }

    public static Recalibration decodeRecalibration(ByteBuffer b, int at) {
        StructLayout l = RECALIBRATION_EVENT;
        return new Recalibration(b.getLong(at + l.offset("timestamp_ns")), b.getInt(at + l.offset("old_nano_max")),
                b.getInt(at + l.offset("new_nano_max")), b.getInt(at + l.offset("p95_us")),
                b.getInt(at + l.offset("samples")));
    }

    public static Calibration decodeCalibration(ByteBuffer b, int at) {
        StructLayout l = CALIBRATION_EVENT;
        return new Calibration(b.getLong(at + l.offset("timestamp_ns")), b.getInt(at + l.offset("old_gain")),
                b.getInt(at + l.offset("new_gain")), b.getInt(at + l.offset("samples")),
                b.getLong(at + l.offset("true_tokens_sum")), b.getLong(at + l.offset("estimate_q4_sum")));
    }

    /** @param tokenGainQ10 the live token_model gain (0, never written, reads as one) */
    public static AdaptiveStatus decodeAdaptiveStats(AdaptiveSettings settings, byte[] value, int tokenGainQ10) {
        StructLayout l = ADAPTIVE_STATS;
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        List<Integer> p95 = new java.util.ArrayList<>();
        List<Integer> samples = new java.util.ArrayList<>();
        for (Tier tier : Tier.values()) {
            p95.add(b.getInt(l.offset("last_p95_us") + 4 * tier.wire()));
            samples.add(b.getInt(l.offset("last_samples") + 4 * tier.wire()));
        }
        long recalibrations = b.getLong(l.offset("recalibrations"));
        long calibrations = b.getLong(l.offset("calibrations"));
        return new AdaptiveStatus(settings, b.getLong(l.offset("ticks")), b.getLong(l.offset("drained")), recalibrations,
                p95, samples,
                recalibrations == 0 ? Optional.empty() : Optional.of(decodeRecalibration(b, l.offset("last"))),
                b.getInt(l.offset("good_periods")),
                tokenGainQ10 == 0 ? TokenGain.ONE_Q10 : tokenGainQ10, calibrations,
                calibrations == 0 ? Optional.empty() : Optional.of(decodeCalibration(b, l.offset("last_calibration"))),
                Optional.empty());
    }

    /** The result of the kernel's last compare-and-set of score_thresholds: 0 = success, -EAGAIN = another writer won. */
    public static long lastUpdateResult(byte[] adaptiveStats) {
        return ByteBuffer.wrap(adaptiveStats).order(ByteOrder.LITTLE_ENDIAN).getLong(ADAPTIVE_STATS.offset("last_update_rc"));
    }

    public static InetAddress inet(byte[] address) {
        try {
            return InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    public static Inet4Address inet4(byte[] address) {
        try {
            return (Inet4Address) InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
