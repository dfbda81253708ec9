/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Constants and layouts of the production-metrics maps (issue 18), shared by nexus_tlb.bpf.c,
 * nexus_timing.bpf.h and their Java readers in io.nexuscore.metrics (BpfLatencyLayout,
 * TlbFlushCounter); MetricsLayoutTest checks the Java constants against the compiled objects' BTF.
 * Fixed-width types, host byte order, sizes asserted.
 */
#ifndef NEXUS_METRICS_H
#define NEXUS_METRICS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * tlb_flushes: one per-CPU u64 per enum tlb_flush_reason (0 task switch, 1 remote shootdown,
 * 2 local shootdown, 3 local mm shootdown, 4 remote send IPI, 5 remote wrong CPU), and a last slot
 * for reasons a newer kernel adds.
 */
#define TLB_REASON_SLOTS 7

/*
 * In-kernel latency histograms, log-linear in nanoseconds: values below 2^LATNS_SUB_BITS get a
 * bucket each; above, every power of two is split in 2^LATNS_SUB_BITS equal sub-buckets
 * (<= 25 % relative width). Bucket b >= 4 covers [(4 + s) << (o - 1), (5 + s) << (o - 1)) with
 * o = b >> 2, s = b & 3; the last bucket also takes everything above (~4.3 s).
 */
#define LATNS_SUB_BITS 2
#define LATNS_BUCKETS 128

/* Programs timed (key of prog_latency). */
#define TIMED_XDP 0
#define TIMED_TC 1
#define TIMED_PROGRAMS 2

/* prog_latency value (per-CPU array, key TIMED_*): bucket counts and the sum of the samples. */
struct latency_hist {
	__u64 buckets[LATNS_BUCKETS];
	__u64 sum_ns;
};
_Static_assert(sizeof(struct latency_hist) == 8 * (LATNS_BUCKETS + 1), "latency_hist is 1032 bytes");

/*
 * Tail calls the kernel allows in one chain (MAX_TAIL_CALL_CNT): a chain runs at most 1 + 33
 * programs. tc_depth counts packets per observed chain length, index = programs run (1..34), so
 * the depth is observed, not assumed.
 */
#define TC_DEPTH_SLOTS 35

/* tc_chain_state value (per-CPU, one entry): the TC chain in flight on this CPU. */
struct tc_chain_state {
	__u64 start_ns; /* bpf_ktime_get_ns() at nexus_tc_classify's entry */
	__u32 depth;    /* programs run so far in this chain */
	__u32 pad;      /* zero */
};
_Static_assert(sizeof(struct tc_chain_state) == 16, "tc_chain_state is 16 bytes");

#endif /* NEXUS_METRICS_H */
