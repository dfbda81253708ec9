/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * In-kernel run-time histograms of the data-path programs and the TC chain's observed tail-call
 * depth (issue 18). Included by nexus_classify.bpf.c, whose SEC() entry points are thin wrappers:
 *
 *   xdp:  t0 = timing_start(); rc = <the classifier>; timing_end(TIMED_XDP, t0)
 *   tc:   the first stage: t0 = timing_start(); rc = <stage>, which calls tc_chain_handoff(t0) before
 *         its tail call; tc_first_exit(t0). A later stage: tc_stage_enter(); rc = <stage>;
 *         tc_chain_exit(). A stage that returns ends the chain (a tail call that succeeds never
 *         returns to its caller)
 *
 * Switched at load time by nexus_observe (its own section, .rodata.observe, so the classifier's
 * .rodata stays struct load_settings alone): 0 and the verifier drops every line of it; N (a power
 * of two) times one XDP run and one TC chain in N, drawn at random (metrics.kernelTimingSample). Two
 * bpf_ktime_get_ns() calls and a histogram update cost ~80 ns per packet on this VM, as much as a
 * short head's whole classification; one packet in 16 keeps the histograms' shape for ~5 ns.
 * Layouts and bucket rule: nexus_metrics.h. Readers: io.nexuscore.metrics.DataPathTimings.
 */
#ifndef NEXUS_TIMING_BPF_H
#define NEXUS_TIMING_BPF_H

#include "nexus_metrics.h"

/* Load-time setting: N (a power of two) times one packet in N and observes its chain depth, 0 costs nothing. */
const volatile __u32 nexus_observe SEC(".rodata.observe") = 0;

/* Run-time histogram per timed program (key TIMED_*), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TIMED_PROGRAMS);
	__type(key, __u32);
	__type(value, struct latency_hist);
} prog_latency SEC(".maps");

/* Packets per observed TC chain length (key = programs run, 1..TC_DEPTH_SLOTS-1), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TC_DEPTH_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} tc_depth SEC(".maps");

/* The chain in flight on this CPU (a chain runs to its end on one CPU, in one softirq). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_chain_state);
} tc_chain_state SEC(".maps");

/* Highest set bit of a non-zero value. */
static __always_inline __u32 timing_msb64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* Log-linear bucket of a duration in ns (nexus_metrics.h); Java: LatencyBuckets.bucketOf. */
static __always_inline __u32 latns_bucket(__u64 ns)
{
	const __u32 sub = 1u << LATNS_SUB_BITS;
	__u32 m, b;

	if (ns < sub)
		return (__u32)ns;
	m = timing_msb64(ns);
	b = ((m - LATNS_SUB_BITS + 1) << LATNS_SUB_BITS) + ((ns >> (m - LATNS_SUB_BITS)) & (sub - 1));
	return b < LATNS_BUCKETS ? b : LATNS_BUCKETS - 1;
}

static __always_inline void timing_record(__u32 program, __u64 ns)
{
	struct latency_hist *h = bpf_map_lookup_elem(&prog_latency, &program);
	if (!h)
		return;
	__u32 b = latns_bucket(ns);
	if (b < LATNS_BUCKETS)
		h->buckets[b] += 1;
	h->sum_ns += ns;
}

/*
 * True for one packet in nexus_observe on average (never when nexus_observe is 0), drawn from the
 * kernel's per-CPU pseudo-random state (a helper call, ~5-10 ns hot). Not a per-CPU counter in a
 * map: under real traffic that map's value was a cold touch on every packet of the interface (a
 * build that stops after this decision: 377 ns per run with the counter, 256 with the draw;
 * docs/kernel-segments.md, "Fourth pass").
 */
static __always_inline bool timing_sampled(void)
{
	if (!nexus_observe)
		return false;
	return (bpf_get_prandom_u32() & (nexus_observe - 1)) == 0;
}

static __always_inline __u64 timing_start(void)
{
	return timing_sampled() ? bpf_ktime_get_ns() : 0;
}

static __always_inline void timing_end(__u32 program, __u64 t0)
{
	if (nexus_observe && t0)
		timing_record(program, bpf_ktime_get_ns() - t0);
}

/*
 * The TC chain's clock. The first stage (nexus_tc_classify) keeps it in a local: most packets end
 * the chain there (no request bytes), and such a packet touches no map for its timing. Only a
 * packet that goes on by tail call hands the clock over in tc_chain_state (tc_chain_handoff, just
 * before the tail call), where the later stages count themselves and the last one records.
 */
static __always_inline void tc_count_depth(__u32 depth)
{
	if (depth >= TC_DEPTH_SLOTS)
		depth = TC_DEPTH_SLOTS - 1;
	__u64 *count = bpf_map_lookup_elem(&tc_depth, &depth);
	if (count)
		*count += 1;
}

/* The first stage returns: a sampled chain of one stage ends here. */
static __always_inline void tc_first_exit(__u64 t0)
{
	if (!nexus_observe || !t0)
		return;
	timing_record(TIMED_TC, bpf_ktime_get_ns() - t0);
	tc_count_depth(1);
}

/*
 * The first stage tail-calls the next: the chain's clock (0: not sampled) goes to tc_chain_state.
 * If the tail call fails (chain not installed), the first stage returns and tc_first_exit records
 * the chain; the stale clock left here is overwritten by the next handoff, which is the only way
 * into a later stage.
 */
static __always_inline void tc_chain_handoff(__u64 t0)
{
	if (!nexus_observe)
		return;
	__u32 zero = 0;
	struct tc_chain_state *s = bpf_map_lookup_elem(&tc_chain_state, &zero);
	if (!s)
		return;
	s->start_ns = t0;
	s->depth = t0 != 0;
}

/* Entry of a later stage (reached by tail call only): a sampled chain counts it. */
static __always_inline void tc_stage_enter(void)
{
	if (!nexus_observe)
		return;
	__u32 zero = 0;
	struct tc_chain_state *s = bpf_map_lookup_elem(&tc_chain_state, &zero);
	if (s && s->start_ns)
		s->depth += 1;
}

/* A later stage returns: the chain ends here. Records a sampled chain's run time and its length. */
static __always_inline void tc_chain_exit(void)
{
	if (!nexus_observe)
		return;
	__u32 zero = 0;
	struct tc_chain_state *s = bpf_map_lookup_elem(&tc_chain_state, &zero);
	if (!s || !s->start_ns)
		return;
	timing_record(TIMED_TC, bpf_ktime_get_ns() - s->start_ns);
	tc_count_depth(s->depth);
	s->start_ns = 0;
}

#endif /* NEXUS_TIMING_BPF_H */
