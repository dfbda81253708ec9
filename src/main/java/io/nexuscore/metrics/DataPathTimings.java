package io.nexuscore.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.KernelDataPath;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.List;

/**
 * The data path's in-kernel observations (nexus_timing.bpf.h), read from the loaded programs' maps:
 * <ul>
 * <li>{@code nexus_bpf_latency_seconds{program="xdp"|"tc"}}: run time per packet of the XDP
 *     classifier and of the whole TC chain, a Prometheus histogram of the kernel's buckets;</li>
 * <li>{@code nexus_tc_tail_call_depth}: the longest TC chain (programs run) among the packets seen
 *     since the previous reading, 0 when none; {@code nexus_tc_chains_total{depth}}: chains per length.</li>
 * </ul>
 * Zero everywhere unless the data path was loaded with observation on ({@code metrics.kernelTiming});
 * on, the kernel times and counts one packet in {@code metrics.kernelTimingSample}, drawn at random.
 * The maps belong to the loaded object (not pinned): after a reload they are found again on the
 * new programs, and the counters restart (Prometheus sees a counter reset).
 */
public final class DataPathTimings implements KernelReading, MultiCollector {

    static final String LATENCY_MAP = "prog_latency";
    static final String DEPTH_MAP = "tc_depth";
    /** TIMED_* in nexus_metrics.h, in key order. */
    static final List<String> PROGRAMS = List.of("xdp", "tc");
    /** TC_DEPTH_SLOTS in nexus_metrics.h. */
    static final int DEPTH_SLOTS = 35;
    /** sizeof(struct latency_hist). */
    static final int HIST_SIZE = 8 * (LatencyBuckets.BUCKETS + 1);

    /** One program's histogram summed over CPUs. */
    record Histogram(long[] buckets, long sumNs) {
        long count() {
            long n = 0;
            for (long b : buckets) {
                n += b;
            }
            return n;
        }
    }

    /** One reading. */
    record Reading(List<Histogram> programs, long[] chainsByDepth) {
        static final Reading EMPTY = new Reading(
                List.of(new Histogram(new long[LatencyBuckets.BUCKETS], 0), new Histogram(new long[LatencyBuckets.BUCKETS], 0)),
                new long[DEPTH_SLOTS]);
    }

    private final KernelDataPath dataPath;
    private final List<Meter> meters = new ArrayList<>();
    private MeterRegistry registry;
    private PrometheusRegistry prometheus;
    private int programId = -1;
    private BpfMap latency;
    private BpfMap depth;
    private volatile Reading last = Reading.EMPTY;
    private volatile int depthGauge;

    public DataPathTimings(KernelDataPath dataPath) {
        this.dataPath = dataPath;
    }

    /**
     * Registers the histograms with the Prometheus registry behind /metrics and the depth gauge
     * with {@code registry}.
     */
    public synchronized DataPathTimings bindTo(MeterRegistry registry, PrometheusRegistry prometheus) {
        this.registry = registry;
        this.prometheus = prometheus;
        prometheus.register(this);
        meters.add(Gauge.builder("nexus.tc.tail.call.depth", this, t -> t.depthGauge)
                .description("Longest TC chain (programs run, tail calls + 1) among packets since the last reading")
                .register(registry));
        return this;
    }

    /** Reads the kernel's maps now (syscalls). */
    public synchronized Reading read() {
        resolveMaps();
        List<Histogram> programs = new ArrayList<>();
        for (int p = 0; p < PROGRAMS.size(); p++) {
            byte[] perCpu = latency.lookup(PerCpu.key(p)).orElse(new byte[0]);
            long[] buckets = new long[LatencyBuckets.BUCKETS];
            for (int b = 0; b < buckets.length; b++) {
                buckets[b] = PerCpu.sumU64(perCpu, HIST_SIZE, b * 8);
            }
            programs.add(new Histogram(buckets, PerCpu.sumU64(perCpu, HIST_SIZE, LatencyBuckets.BUCKETS * 8)));
        }
        long[] chains = new long[DEPTH_SLOTS];
        for (int d = 0; d < DEPTH_SLOTS; d++) {
            chains[d] = depth.lookup(PerCpu.key(d)).map(v -> PerCpu.sumU64(v, Long.BYTES, 0)).orElse(0L);
        }
        return new Reading(List.copyOf(programs), chains);
    }

    @Override
    public void refresh() {
        Reading now = read();
        Reading before = last;
        int deepest = 0;
        for (int d = DEPTH_SLOTS - 1; d > 0; d--) {
            // A reload restarts the counters: any count then is new.
            long grown = now.chainsByDepth()[d] - (now.chainsByDepth()[d] < before.chainsByDepth()[d] ? 0 : before.chainsByDepth()[d]);
            if (grown > 0) {
                deepest = d;
                break;
            }
        }
        depthGauge = deepest;
        last = now;
    }

    /** The depth gauge's value: the longest chain seen between the last two readings. */
    public int tailCallDepth() {
        return depthGauge;
    }

    private void resolveMaps() {
        BpfProgram xdp = dataPath.program(KernelDataPath.XDP_PROGRAM);
        int id = xdp.id();
        if (id == programId && latency != null) {
            return;
        }
        closeMaps();
        latency = xdp.usedMap(LATENCY_MAP, 4, BpfMap.perCpuSize(HIST_SIZE));
        depth = dataPath.program(KernelDataPath.TC_CLASSIFY_PROGRAM).usedMap(DEPTH_MAP, 4, BpfMap.perCpuSize(Long.BYTES));
        programId = id;
    }

    @Override
    public MetricSnapshots collect() {
        Reading r = last;
        HistogramSnapshot.Builder histogram = HistogramSnapshot.builder().name("nexus_bpf_latency_seconds")
                .help("Run time per packet measured inside the program (bpf_ktime_get_ns at entry and exit) for one packet "
                        + "in metrics.kernelTimingSample, drawn at random: the XDP classifier, and the TC chain from its first "
                        + "stage's entry to its last stage's return");
        for (int p = 0; p < PROGRAMS.size(); p++) {
            Histogram h = r.programs().get(p);
            histogram.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                    .labels(Labels.of("program", PROGRAMS.get(p)))
                    .classicHistogramBuckets(exported(h.buckets()))
                    .sum(h.sumNs() / 1e9)
                    .build());
        }
        CounterSnapshot.Builder chains = CounterSnapshot.builder().name("nexus_tc_chains")
                .help("TC chains run to their end, by observed length (programs run: 1 + tail calls); timed chains only "
                        + "(one in metrics.kernelTimingSample, drawn at random)");
        for (int d = 1; d < DEPTH_SLOTS; d++) {
            if (r.chainsByDepth()[d] > 0) {
                chains.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(Labels.of("depth", Integer.toString(d))).value(r.chainsByDepth()[d]).build());
            }
        }
        return MetricSnapshots.of(histogram.build(), chains.build());
    }

    /** The kernel's buckets as Prometheus buckets (per bucket, not cumulative; the writer cumulates). */
    static ClassicHistogramBuckets exported(long[] kernel) {
        int n = LatencyBuckets.EXPORTED_LAST - LatencyBuckets.EXPORTED_FIRST + 2;
        double[] bounds = new double[n];
        long[] counts = new long[n];
        int i = 0;
        for (int b = LatencyBuckets.EXPORTED_FIRST; b <= LatencyBuckets.EXPORTED_LAST; b++, i++) {
            bounds[i] = LatencyBuckets.upperExclusiveNs(b) / 1e9;
            counts[i] = kernel[b];
        }
        bounds[i] = Double.POSITIVE_INFINITY;
        for (int b = 0; b < LatencyBuckets.EXPORTED_FIRST; b++) {
            counts[0] += kernel[b];
        }
        for (int b = LatencyBuckets.EXPORTED_LAST + 1; b < kernel.length; b++) {
            counts[i] += kernel[b];
        }
        return ClassicHistogramBuckets.of(bounds, counts);
    }

    private void closeMaps() {
        if (latency != null) {
            latency.close();
            latency = null;
        }
        if (depth != null) {
            depth.close();
            depth = null;
        }
    }

    @Override
    public synchronized void close() {
        if (prometheus != null) {
            prometheus.unregister(this);
        }
        if (registry != null) {
            meters.forEach(registry::remove);
        }
        meters.clear();
        closeMaps();
    }
}
