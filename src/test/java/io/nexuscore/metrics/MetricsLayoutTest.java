package io.nexuscore.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.kernel.KernelDataPath;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Java readers' constants against their one source, nexus_metrics.h, and the size of
 * struct latency_hist against the compiled object's BTF: a change on one side only fails here.
 */
class MetricsLayoutTest {

    private static final Path HEADER = Path.of("src/main/bpf/nexus_metrics.h");
    private static final Pattern DEFINE = Pattern.compile("^#define\\s+(\\w+)\\s+(\\d+)\\b");

    @Test
    void javaConstantsEqualTheHeadersDefines() throws Exception {
        Map<String, Long> header = new HashMap<>();
        for (String line : Files.readAllLines(HEADER)) {
            Matcher m = DEFINE.matcher(line);
            if (m.find()) {
                header.put(m.group(1), Long.parseLong(m.group(2)));
            }
        }
        Map<String, Long> java = new LinkedHashMap<>();
        java.put("TLB_REASON_SLOTS", (long) TlbFlushReason.values().length);
        java.put("LATNS_SUB_BITS", (long) LatencyBuckets.SUB_BITS);
        java.put("LATNS_BUCKETS", (long) LatencyBuckets.BUCKETS);
        java.put("TIMED_XDP", (long) DataPathTimings.PROGRAMS.indexOf("xdp"));
        java.put("TIMED_TC", (long) DataPathTimings.PROGRAMS.indexOf("tc"));
        java.put("TIMED_PROGRAMS", (long) DataPathTimings.PROGRAMS.size());
        java.put("TC_DEPTH_SLOTS", (long) DataPathTimings.DEPTH_SLOTS);
        for (Map.Entry<String, Long> e : java.entrySet()) {
            assertTrue(header.containsKey(e.getKey()), e.getKey() + " is not #defined in " + HEADER);
            assertEquals(header.get(e.getKey()), e.getValue(), e.getKey() + ": nexus_metrics.h and Java disagree");
        }
    }

    @Test
    void latencyHistogramSizeMatchesTheObjectsBtf() throws Exception {
        Path object = Files.createTempFile("nexus_classify", ".bpf.o");
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(KernelDataPath.OBJECT_RESOURCE)) {
            assertNotNull(in, KernelDataPath.OBJECT_RESOURCE + " missing");
            Files.copy(in, object, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        try {
            String dump = io.nexuscore.testing.ExternalProcess.ok(java.time.Duration.ofSeconds(30),
                    "bpftool", "btf", "dump", "file", object.toString(), "format", "raw");
            Matcher m = Pattern.compile("STRUCT 'latency_hist' size=(\\d+)").matcher(dump);
            assertTrue(m.find(), "struct latency_hist in the object's BTF");
            assertEquals(DataPathTimings.HIST_SIZE, Integer.parseInt(m.group(1)));
            assertTrue(dump.contains("DATASEC '.rodata.observe'"), "the timing switch has its own section");
        } finally {
            Files.deleteIfExists(object);
        }
    }
}
