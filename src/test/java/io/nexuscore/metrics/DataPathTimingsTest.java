package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.Packets;
import io.nexuscore.config.KernelConfig;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The in-kernel run-time histograms and the TC chain's observed depth move under BPF_PROG_TEST_RUN
 * traffic when observation is on, stay still when it is off, and render as Prometheus histograms.
 */
class DataPathTimingsTest {

    private static final int PORT = 8080;
    /** sizeof(struct __sk_buff) on 6.x. */
    private static final int SKB_CTX_SIZE = 192;
    private static final int RUNS = 50;

    @Test
    void testRunTrafficMovesTheHistogramsAndTheDepthGauge() {
        KernelTestSupport.requireKernel();
        KernelDataPath kernel = load(1);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (DataPathTimings timings = new DataPathTimings(kernel).bindTo(registry, registry.getPrometheusRegistry())) {
            timings.refresh();
            long xdpBefore = timings.read().programs().get(0).count();

            byte[] request = Packets.tcp(PORT, "GET /v1/summarize HTTP/1.1\r\n\r\n");
            kernel.program(KernelDataPath.XDP_PROGRAM).testRun(request, null, RUNS);
            // A request segment with a stored verdict runs the whole chain: classify -> policy -> mark.
            kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM).testRun(request, new byte[SKB_CTX_SIZE], RUNS);
            timings.refresh();

            DataPathTimings.Reading r = timings.read();
            assertEquals(RUNS, r.programs().get(0).count() - xdpBefore, "one XDP sample per run");
            assertEquals(RUNS, r.programs().get(1).count(), "one TC chain sample per run");
            assertTrue(r.programs().get(0).sumNs() > 0, "XDP run time summed");
            assertEquals(RUNS, r.chainsByDepth()[3], "chains of three programs");
            assertEquals(3, timings.tailCallDepth(), "gauge: the longest chain since the last reading");

            // A segment the chain drops at its first stage (no payload): depth 1, the gauge follows.
            kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM).testRun(Packets.tcp(PORT, ""), new byte[SKB_CTX_SIZE], 5);
            timings.refresh();
            assertEquals(1, timings.tailCallDepth());
            timings.refresh();
            assertEquals(0, timings.tailCallDepth(), "no chains since the last reading");

            String text = registry.scrape();
            assertTrue(text.contains("# TYPE nexus_bpf_latency_seconds histogram"), text);
            Matcher inf = Pattern.compile("nexus_bpf_latency_seconds_bucket\\{program=\"tc\",le=\"\\+Inf\"} (\\d+)")
                    .matcher(text);
            assertTrue(inf.find(), text);
            assertEquals(RUNS + 5, Long.parseLong(inf.group(1)), "+Inf bucket = every TC chain");
            assertTrue(text.contains("nexus_bpf_latency_seconds_count{program=\"xdp\"} " + (xdpBefore + RUNS)), text);
            assertTrue(text.contains("nexus_tc_chains_total{depth=\"3\"} " + RUNS + ".0"), text);
            assertTrue(text.contains("nexus_tc_tail_call_depth 0.0"), text);
        } finally {
            registry.close();
            KernelTestSupport.dispose(kernel);
        }
    }

    /**
     * The default: one packet in 16 is timed, drawn from the kernel's pseudo-random state. Over
     * 16,000 runs the count is binomial (mean 1,000, standard deviation ~31): 850..1,150 is ±4.9
     * deviations, so a correct sampler fails this about once in a million runs, while timing every
     * packet (16,000), none, or one in 8 or 32 (2,000 / 500) fails it every time.
     */
    @Test
    void aSampledLoadTimesOnePacketInN() {
        KernelTestSupport.requireKernel();
        int sample = 16;
        int runs = 16_000;
        KernelDataPath kernel = load(sample);
        try (DataPathTimings timings = new DataPathTimings(kernel)) {
            byte[] request = Packets.tcp(PORT, "GET /v1/summarize HTTP/1.1\r\n\r\n");
            kernel.program(KernelDataPath.XDP_PROGRAM).testRun(request, null, runs);
            kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM).testRun(request, new byte[SKB_CTX_SIZE], runs);
            DataPathTimings.Reading r = timings.read();
            for (int program = 0; program < 2; program++) {
                long count = r.programs().get(program).count();
                assertTrue(count >= 850 && count <= 1_150, "program " + program + ": " + count + " timed of " + runs);
            }
            assertEquals(r.programs().get(1).count(), r.chainsByDepth()[3], "a timed chain is observed whole");
        } finally {
            KernelTestSupport.dispose(kernel);
        }
        assertThrows(IllegalArgumentException.class, () -> load(12), "not a power of two");
    }

    @Test
    void observationOffLeavesTheHistogramsEmpty() {
        KernelTestSupport.requireKernel();
        KernelDataPath kernel = load(0);
        try (DataPathTimings timings = new DataPathTimings(kernel)) {
            byte[] request = Packets.tcp(PORT, "GET /v1/summarize HTTP/1.1\r\n\r\n");
            kernel.program(KernelDataPath.XDP_PROGRAM).testRun(request, null, RUNS);
            kernel.program(KernelDataPath.TC_CLASSIFY_PROGRAM).testRun(request, new byte[SKB_CTX_SIZE], RUNS);
            DataPathTimings.Reading r = timings.read();
            assertEquals(0, r.programs().get(0).count());
            assertEquals(0, r.programs().get(1).count());
            assertEquals(0, r.chainsByDepth()[3]);
        } finally {
            KernelTestSupport.dispose(kernel);
        }
    }

    @Test
    void bucketsAgreeWithTheKernelRule() {
        assertEquals(3, LatencyBuckets.bucketOf(3));
        assertEquals(4, LatencyBuckets.bucketOf(4));
        assertEquals(8, LatencyBuckets.bucketOf(8));
        assertEquals(16, LatencyBuckets.bucketOf(32));
        assertEquals(40, LatencyBuckets.upperExclusiveNs(16));
        for (long ns = 1; ns < 10_000_000; ns = ns * 3 / 2 + 1) {
            int b = LatencyBuckets.bucketOf(ns);
            assertTrue(ns < LatencyBuckets.upperExclusiveNs(b), ns + " below its bucket's edge");
            assertTrue(b == 0 || ns >= LatencyBuckets.upperExclusiveNs(b - 1), ns + " above the previous edge");
        }
        assertEquals(LatencyBuckets.BUCKETS - 1, LatencyBuckets.bucketOf(Long.MAX_VALUE));
    }

    private static KernelDataPath load(int timingSample) {
        return KernelDataPath.loadWithoutAttaching(KernelTestSupport.uniquePinDir(), KernelTestSupport.DEFAULT_SCORING,
                Set.of(PORT), KernelConfig.XdpMode.GENERIC, timingSample);
    }
}
