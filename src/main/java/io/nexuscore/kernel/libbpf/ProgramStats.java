package io.nexuscore.kernel.libbpf;

/**
 * Kernel run statistics of one program (bpf_prog_info run_time_ns / run_cnt). Counted only while
 * {@code kernel.bpf_stats_enabled=1} (see {@link KernelDataPath#setStatsEnabled}).
 */
public record ProgramStats(String program, int id, long runTimeNs, long runCount) {

    /** Mean ns per run, 0 when the program has not run under statistics. */
    public double meanRunNs() {
        return runCount == 0 ? 0 : (double) runTimeNs / runCount;
    }
}
