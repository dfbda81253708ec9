package io.nexuscore.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the router's XDP program cost per packet while a benchmark ran, from two readings: the
 * in-kernel run-time histogram the router exports ({@code nexus_bpf_latency_seconds{program="xdp"}},
 * metrics.kernelTiming, on by default) and, when {@code kernel.bpf_stats_enabled} is 1, the kernel's
 * own run_time_ns / run_cnt of the program attached to the interface (bpftool). Every packet the
 * interface carries counts (requests, bodies, answers, ACKs), as in production.
 */
final class XdpCostWindow {

    private static final Pattern BUCKET = Pattern.compile(
            "^nexus_bpf_latency_seconds_bucket\\{[^}]*program=\"xdp\"[^}]*le=\"([^\"]+)\"[^}]*\\}\\s+(\\S+)");
    private static final Pattern SUM = Pattern.compile("^nexus_bpf_latency_seconds_sum\\{[^}]*program=\"xdp\"[^}]*\\}\\s+(\\S+)");
    private static final Path BPF_STATS = Path.of("/proc/sys/kernel/bpf_stats_enabled");

    /** One reading: cumulative bucket counts by upper bound (seconds), the sum, bpf_stats if on. */
    record Reading(TreeMap<Double, Double> buckets, double sumSeconds, Optional<long[]> bpfStats) {
    }

    private XdpCostWindow() {
    }

    /**
     * How long a reading waits first: the histogram /metrics renders is the one the router read at its
     * last metrics refresh (metrics.refreshMs, 1,000 ms by default), so a reading taken at once could
     * miss the last second before it: the warm-up's packets in the "before" reading's window, the
     * run's last second out of the "after" one. Waiting one refresh and a margin puts both edges
     * where the run's are; a router with a longer refreshMs needs -Dnexus.bench.metricsSettleMs.
     */
    private static final long SETTLE_MS = Long.getLong("nexus.bench.metricsSettleMs", 1_300);

    /** Reads the control plane's /metrics and the attached program's bpf_stats; empty when the router exports no XDP histogram. */
    static Optional<Reading> read(HttpClient http, URI control, String device) {
        try {
            Thread.sleep(SETTLE_MS);
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(control.resolve("/metrics"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return Optional.empty();
            }
            TreeMap<Double, Double> buckets = new TreeMap<>();
            double sum = Double.NaN;
            for (String line : r.body().split("\n")) {
                Matcher b = BUCKET.matcher(line);
                if (b.find()) {
                    buckets.put(b.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(b.group(1)),
                            Double.parseDouble(b.group(2)));
                    continue;
                }
                Matcher s = SUM.matcher(line);
                if (s.find()) {
                    sum = Double.parseDouble(s.group(1));
                }
            }
            return buckets.isEmpty() ? Optional.empty() : Optional.of(new Reading(buckets, sum, bpfStats(device)));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The XDP program attached to device: {run_time_ns, run_cnt, program id}, when bpf_stats is on and bpftool answers. */
    private static Optional<long[]> bpfStats(String device) {
        try {
            if (!Files.readString(BPF_STATS).trim().equals("1")) {
                return Optional.empty();
            }
            Matcher id = Pattern.compile("\"xdp\"\\s*:\\s*\\[\\s*\\{[^}]*\"id\"\\s*:\\s*(\\d+)").matcher(run("bpftool", "-j", "net", "show", "dev", device));
            if (!id.find()) {
                return Optional.empty();
            }
            String prog = run("bpftool", "-j", "prog", "show", "id", id.group(1));
            Matcher time = Pattern.compile("\"run_time_ns\"\\s*:\\s*(\\d+)").matcher(prog);
            Matcher count = Pattern.compile("\"run_cnt\"\\s*:\\s*(\\d+)").matcher(prog);
            return time.find() && count.find()
                    ? Optional.of(new long[] {Long.parseLong(time.group(1)), Long.parseLong(count.group(1)), Long.parseLong(id.group(1))})
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    /** One line on the XDP program's cost between two readings (mean, P50, P99 by bucket upper bound). */
    static String describe(Reading before, Reading after) {
        TreeMap<Double, Double> delta = new TreeMap<>();
        for (Map.Entry<Double, Double> e : after.buckets().entrySet()) {
            delta.put(e.getKey(), e.getValue() - before.buckets().getOrDefault(e.getKey(), 0.0));
        }
        double runs = delta.lastEntry().getValue();
        StringBuilder line = new StringBuilder();
        if (runs < 0) {
            // The histogram's maps belong to the loaded object: a reload between the readings restarts them.
            line.append("kernel: the in-kernel histogram restarted during the run (the programs were reloaded): no histogram figures");
        } else if (runs == 0) {
            line.append("kernel: the in-kernel histogram sampled no XDP run during the run");
        } else {
            double meanNs = (after.sumSeconds() - before.sumSeconds()) / runs * 1e9;
            line.append(String.format(Locale.ROOT,
                    "kernel: XDP program over the run, every packet on the interface: %,.0f runs; in-kernel histogram"
                            + " mean %.0f ns, P50 <= %s, P99 <= %s, P99.9 <= %s",
                    runs, meanNs, quantile(delta, runs, 0.50), quantile(delta, runs, 0.99), quantile(delta, runs, 0.999)));
            line.append(String.format(Locale.ROOT, "%n        runs by time:"));
            double previous = 0;
            double[] edges = {256e-9, 512e-9, 1024e-9, 2048e-9, 4096e-9, 8192e-9, 16384e-9, Double.POSITIVE_INFINITY};
            for (double edge : edges) {
                Map.Entry<Double, Double> at = delta.floorEntry(edge);
                double upTo = at == null ? 0 : at.getValue();
                line.append(String.format(Locale.ROOT, " %s %.1f %%", edge == Double.POSITIVE_INFINITY ? "more"
                        : "<" + Math.round(edge * 1e9), 100 * (upTo - previous) / runs));
                previous = upTo;
            }
        }
        // bpf_stats belong to the attached program, read live: they hold whatever the histogram says.
        line.append(String.format(Locale.ROOT, "%n       "));
        if (before.bpfStats().isPresent() && after.bpfStats().isPresent()
                && before.bpfStats().get()[2] != after.bpfStats().get()[2]) {
            line.append("; bpf_stats: the attached program changed during the run (a reload)");
        } else if (before.bpfStats().isPresent() && after.bpfStats().isPresent()) {
            long time = after.bpfStats().get()[0] - before.bpfStats().get()[0];
            long count = after.bpfStats().get()[1] - before.bpfStats().get()[1];
            line.append(count > 0 ? String.format(Locale.ROOT, "; bpf_stats %.0f ns per run (%,d runs)", (double) time / count, count)
                    : "; bpf_stats: no runs");
        } else {
            line.append("; bpf_stats off (sysctl kernel.bpf_stats_enabled=1 adds the kernel's own figure)");
        }
        return line.toString();
    }

    private static String quantile(TreeMap<Double, Double> cumulative, double runs, double q) {
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            if (e.getValue() >= q * runs) {
                return e.getKey().isInfinite() ? "inf" : String.format(Locale.ROOT, "%.0f ns", e.getKey() * 1e9);
            }
        }
        return "inf";
    }
}
