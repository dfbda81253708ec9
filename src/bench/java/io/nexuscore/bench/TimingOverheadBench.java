package io.nexuscore.bench;

import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.Packets;
import io.nexuscore.config.KernelConfig;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What the in-kernel timing (nexus_timing.bpf.h, metrics.kernelTiming) costs: the same object
 * loaded with .rodata.observe 0 (off), 1 (every packet) and the default sample, XDP and the TC chain run with BPF_PROG_TEST_RUN on the same
 * packets, the two loads alternated round by round (so a busy machine hits both alike), median of
 * the rounds' mean ns per packet. Usage: bench/timing-overhead.sh [repeat] [rounds].
 */
public final class TimingOverheadBench {

    private static final int PORT = 8080;
    private static final int SKB_CTX_SIZE = 192;

    private TimingOverheadBench() {
    }

    public static void main(String[] args) {
        int repeat = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        Map<String, byte[]> packets = new LinkedHashMap<>();
        packets.put("short GET (40 B head)", Packets.tcp(PORT, "GET /v1/models HTTP/1.1\r\nHost: r\r\n\r\n"));
        packets.put("POST + Content-Length (180 B head)", Packets.tcp(PORT, "POST /v1/tasks/summarize HTTP/1.1\r\n"
                + "Host: router:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nContent-Type: application/json\r\n"
                + "Content-Length: 400\r\n\r\n"));
        packets.put("not scored (binary payload)", Packets.tcp(PORT, "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u01fc"));

        // Off, every packet timed, and the default sample (metrics.kernelTimingSample).
        int[] samples = {0, 1, io.nexuscore.config.MetricsConfig.DEFAULT.kernelTimingSample()};
        KernelDataPath[] loads = new KernelDataPath[samples.length];
        for (int i = 0; i < samples.length; i++) {
            loads[i] = load(samples[i]);
        }
        try {
            System.out.printf("in-kernel timing overhead: BPF_PROG_TEST_RUN, repeat %,d, median of %d alternated rounds "
                    + "(mean ns per packet; timing off / every packet / one in %d)%n", repeat, rounds, samples[2]);
            System.out.printf("%-38s %8s %8s %8s   %8s %8s %8s%n", "packet", "XDP off", "every", "1 in " + samples[2],
                    "TC off", "every", "1 in " + samples[2]);
            for (Map.Entry<String, byte[]> p : packets.entrySet()) {
                long[][] xdp = new long[samples.length][rounds];
                long[][] tc = new long[samples.length][rounds];
                for (int r = 0; r < rounds; r++) {
                    for (int which = 0; which < samples.length; which++) {
                        KernelDataPath k = loads[which];
                        xdp[which][r] = k.program(KernelDataPath.XDP_PROGRAM).testRun(p.getValue(), null, repeat)
                                .meanDurationNs();
                        tc[which][r] = k.program(KernelDataPath.TC_CLASSIFY_PROGRAM)
                                .testRun(p.getValue(), new byte[SKB_CTX_SIZE], repeat).meanDurationNs();
                    }
                }
                System.out.printf("%-38s %8d %8d %8d   %8d %8d %8d%n", p.getKey(), median(xdp[0]), median(xdp[1]),
                        median(xdp[2]), median(tc[0]), median(tc[1]), median(tc[2]));
            }
        } finally {
            for (KernelDataPath k : loads) {
                KernelTestSupport.dispose(k);
            }
        }
    }

    private static KernelDataPath load(int timingSample) {
        return KernelDataPath.loadWithoutAttaching(KernelTestSupport.uniquePinDir(), KernelTestSupport.DEFAULT_SCORING,
                Set.of(PORT), KernelConfig.XdpMode.GENERIC, timingSample);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
