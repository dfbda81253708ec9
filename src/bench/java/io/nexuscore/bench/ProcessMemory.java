package io.nexuscore.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What another JVM (the router) holds, read from outside: its resident set from /proc, its CPU
 * time, and, when it runs with {@code -XX:NativeMemoryTracking=summary}, the committed memory of each
 * NMT category ({@code jcmd PID VM.native_memory summary}). The scale benchmarks print the
 * difference between two readings, so the split says whether a growth is heap, direct buffers
 * ("Other" in NMT), thread stacks or the JVM's own.
 */
final class ProcessMemory {

    private static final Pattern CATEGORY = Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");

    private final long pid;

    ProcessMemory(long pid) {
        this.pid = pid;
    }

    /** VmRSS, in KiB. */
    long rssKb() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS in /proc/" + pid + "/status");
    }

    /** utime + stime, in clock ticks (USER_HZ, 100 a second). */
    long cpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** Threads of the process now. */
    int threads() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    /** A full collection in the process ({@code jcmd PID GC.run}): heap garbage out of the next reading. */
    void collect() throws IOException, InterruptedException {
        jcmd("GC.run");
    }

    /** Committed KiB by NMT category, "Total" first; empty when the process tracks no native memory. */
    Map<String, Long> nativeMemory() throws IOException, InterruptedException {
        Map<String, Long> committed = new LinkedHashMap<>();
        for (String line : jcmd("VM.native_memory", "summary").split("\n")) {
            if (line.startsWith("Total:")) {
                Matcher m = Pattern.compile("committed=(\\d+)KB").matcher(line);
                if (m.find()) {
                    committed.put("Total", Long.parseLong(m.group(1)));
                }
            }
            Matcher m = CATEGORY.matcher(line.strip());
            if (m.find()) {
                committed.put(m.group(1), Long.parseLong(m.group(3)));
            }
        }
        return committed;
    }

    /**
     * Live bytes by class after a full GC ({@code jcmd PID GC.class_histogram}, which collects first):
     * what each object kind holds on the heap.
     */
    Map<String, Long> liveClasses() throws IOException, InterruptedException {
        Map<String, Long> bytes = new LinkedHashMap<>();
        for (String line : jcmd("GC.class_histogram").split("\n")) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                bytes.merge(f[3], Long.parseLong(f[2]), Long::sum);
            } else if (f.length >= 3 && f[0].equals("Total")) {
                bytes.put("Total", Long.parseLong(f[2]));
            }
        }
        return bytes;
    }

    /** The {@code top} classes whose live bytes grew most between two histograms, as bytes per {@code per}. */
    static String growth(Map<String, Long> before, Map<String, Long> after, int top, int per) {
        StringBuilder out = new StringBuilder();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
                .limit(top)
                .forEach(e -> out.append(String.format("%n  %8.0f B  %s", e.getValue() / (double) per, e.getKey())));
        return out.toString();
    }

    private String jcmd(String... command) throws IOException, InterruptedException {
        String[] argv = new String[command.length + 2];
        argv[0] = "jcmd";
        argv[1] = Long.toString(pid);
        System.arraycopy(command, 0, argv, 2, command.length);
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        byte[] out = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroy();
            throw new IOException("jcmd " + pid + " " + String.join(" ", command) + " did not finish in 60 s");
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    /** "category=+N" for each NMT category whose committed KiB moved by 64 KiB or more, largest first. */
    static String difference(Map<String, Long> before, Map<String, Long> after) {
        StringBuilder out = new StringBuilder();
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L)))
                .filter(e -> Math.abs(e.getValue()) >= 64)
                .sorted((a, b) -> Long.compare(Math.abs(b.getValue()), Math.abs(a.getValue())))
                .forEach(e -> out.append(out.length() == 0 ? "" : " ")
                        .append(e.getKey().replace(' ', '_')).append('=').append(e.getValue() >= 0 ? "+" : "")
                        .append(e.getValue()).append("KB"));
        return out.length() == 0 ? "(no category moved by 64 KB)" : out.toString();
    }
}
