package io.nexuscore.bpf;

import io.nexuscore.adapt.AdaptiveSettings;
import io.nexuscore.adapt.AdaptiveStatus;
import io.nexuscore.adapt.Recalibration;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Set;

/**
 * Java mirrors of the structs in src/main/bpf/nexus_shared.h: layouts plus encoders/decoders.
 * Network-order fields are written big-endian, host-order fields little-endian (x86-64).
 */
public final class SharedStructs {

    public static final StructLayout FLOW_KEY = StructLayout.of("flow_key", 12,
            "src_ip", 0, "dst_ip", 4, "src_port", 8, "dst_port", 10);
    public static final StructLayout ROUTING_DECISION = StructLayout.of("routing_decision", 24,
            "body_len", 0, "timestamp_ns", 8, "request_line_hash", 16, "score", 20, "tier", 21, "pad", 22);
    public static final StructLayout SCORE_THRESHOLDS = StructLayout.of("score_thresholds", 8,
            "nano_max", 0, "small_max", 4);
    public static final StructLayout TENANT_KEY = StructLayout.of("tenant_key", 8,
            "prefixlen", 0, "addr", 4);
    public static final StructLayout TENANT_FLOOR = StructLayout.of("tenant_floor", 4,
            "tier_floor", 0, "pad", 1);
    public static final StructLayout LOAD_SETTINGS = StructLayout.of("load_settings", 32,
            "weight_sum", 0, "weight_ref", 4, "weight_gen", 8, "weight_ana", 12, "ports", 16);

    public static final StructLayout LATENCY_EVENT = StructLayout.of("latency_event", 24,
            "timestamp_ns", 0, "tenant_id", 8, "tier", 12, "pad", 13, "latency_us", 16, "pad2", 20);
    public static final StructLayout ADAPTIVE_SETTINGS = StructLayout.of("adaptive_settings", 48,
            "enabled", 0, "period_ms", 4, "target_p95_us", 8, "step", 20, "floor", 24, "min_samples", 28,
            "max_events", 32, "ceiling", 36, "raise_below_pct", 40, "raise_after", 44);
    public static final StructLayout RECALIBRATION_EVENT = StructLayout.of("recalibration_event", 24,
            "timestamp_ns", 0, "old_nano_max", 8, "new_nano_max", 12, "p95_us", 16, "samples", 20);
    public static final StructLayout ADAPTIVE_STATS = StructLayout.of("adaptive_stats", 88,
            "ticks", 0, "drained", 8, "recalibrations", 16, "last_update_rc", 24, "last_p95_us", 32,
            "last_samples", 44, "last", 56, "good_periods", 80, "pad", 84);

    public static final List<StructLayout> ALL = List.of(FLOW_KEY, ROUTING_DECISION, SCORE_THRESHOLDS, TENANT_KEY,
            TENANT_FLOOR, LOAD_SETTINGS, LATENCY_EVENT, ADAPTIVE_SETTINGS, RECALIBRATION_EVENT, ADAPTIVE_STATS);

    /** MAX_PORTS in nexus_shared.h. */
    public static final int MAX_PORTS = 8;

    private SharedStructs() {
    }

    static byte[] flowKey(FourTuple t) {
        return ByteBuffer.allocate(FLOW_KEY.size()).order(ByteOrder.BIG_ENDIAN)
                .put(t.srcAddress().getAddress())
                .put(t.dstAddress().getAddress())
                .putShort((short) t.srcPort())
                .putShort((short) t.dstPort())
                .array();
    }

    static FourTuple decodeFlowKey(byte[] key) {
        ByteBuffer b = ByteBuffer.wrap(key).order(ByteOrder.BIG_ENDIAN);
        byte[] src = new byte[4];
        byte[] dst = new byte[4];
        b.get(src).get(dst);
        return new FourTuple(inet4(src), b.getShort() & 0xffff, inet4(dst), b.getShort() & 0xffff);
    }

    /** The kernel's routing_decision, with its timestamp. */
    public record RoutingDecision(KernelVerdict verdict, long timestampNs) {
    }

    static RoutingDecision decodeRoutingDecision(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        long bodyLength = b.getLong(ROUTING_DECISION.offset("body_len"));
        long timestamp = b.getLong(ROUTING_DECISION.offset("timestamp_ns"));
        int hash = b.getInt(ROUTING_DECISION.offset("request_line_hash"));
        int score = b.get(ROUTING_DECISION.offset("score")) & 0xff;
        Tier tier = Tier.fromWire(b.get(ROUTING_DECISION.offset("tier")) & 0xff);
        return new RoutingDecision(new KernelVerdict(score, tier, bodyLength, hash), timestamp);
    }

    static byte[] scoreThresholds(Thresholds t) {
        return ByteBuffer.allocate(SCORE_THRESHOLDS.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(t.nanoMax()).putInt(t.smallMax()).array();
    }

    static Thresholds decodeScoreThresholds(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        return new Thresholds(b.getInt(0), b.getInt(4));
    }

    public static byte[] tenantKey(Inet4Address prefix, int prefixLength) {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("prefix length must be in 0..32, got " + prefixLength);
        }
        return ByteBuffer.allocate(TENANT_KEY.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(prefixLength)
                .put(prefix.getAddress())
                .array();
    }

    public static byte[] tenantFloor(Tier floor) {
        return new byte[] {(byte) floor.wire(), 0, 0, 0};
    }

    static byte[] loadSettings(ScoreWeights w, Set<Integer> ports) {
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
        ByteBuffer b = ByteBuffer.allocate(ADAPTIVE_SETTINGS.size()).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(a.enabled() ? 1 : 0).putInt(a.periodMs())
                .putInt(a.nanoTargetP95Us()).putInt(0).putInt(0) // small and large: no target
                .putInt(a.step()).putInt(a.floor()).putInt(a.minSamples()).putInt(a.maxEvents())
                .putInt(a.ceiling()).putInt(a.raiseBelowPct()).putInt(a.raiseAfter());
        return b.array();
    }

    public static AdaptiveSettings decodeAdaptiveSettings(byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        return new AdaptiveSettings(b.getInt(0) != 0, b.getInt(4), b.getInt(8), b.getInt(20), b.getInt(24),
                b.getInt(28), b.getInt(32), b.getInt(36), b.getInt(40), b.getInt(44));
    }

    public static Recalibration decodeRecalibration(ByteBuffer b, int at) {
        return new Recalibration(b.getLong(at), b.getInt(at + 8), b.getInt(at + 12), b.getInt(at + 16), b.getInt(at + 20));
    }

    public static AdaptiveStatus decodeAdaptiveStats(AdaptiveSettings settings, byte[] value) {
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        List<Integer> p95 = new java.util.ArrayList<>();
        List<Integer> samples = new java.util.ArrayList<>();
        for (int t = 0; t < 3; t++) {
            p95.add(b.getInt(32 + 4 * t));
            samples.add(b.getInt(44 + 4 * t));
        }
        Recalibration last = decodeRecalibration(b, ADAPTIVE_STATS.offset("last"));
        long recalibrations = b.getLong(16);
        return new AdaptiveStatus(settings, b.getLong(0), b.getLong(8), recalibrations, p95, samples,
                recalibrations == 0 ? java.util.Optional.empty() : java.util.Optional.of(last),
                b.getInt(ADAPTIVE_STATS.offset("good_periods")));
    }

    /** The return value of the kernel's last bpf_map_update_elem(score_thresholds, BPF_EXIST), 0 = success. */
    public static long lastUpdateResult(byte[] adaptiveStats) {
        return ByteBuffer.wrap(adaptiveStats).order(ByteOrder.LITTLE_ENDIAN).getLong(24);
    }

    public static Inet4Address inet4(byte[] address) {
        try {
            return (Inet4Address) InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
