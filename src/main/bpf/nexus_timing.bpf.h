/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * In-kernel run-time histograms of the data-path programs and the TC chain's observed tail-call
 * depth (issue 18). Included by nexus_classify.bpf.c, whose SEC() entry points are thin wrappers:
 *
 *   xdp:  t0 = timing_start(); rc = <the classifier>; timing_end(TIMED_XDP, t0)
 *   tc:   tc_stage_enter(first) at each stage's entry; tc_chain_exit() where a stage returns, which
 *         is the chain's end (a tail call that succeeds never returns to its caller)
 *
 * Switched at load time by nexus_observe (its own section, .rodata.observe, so the classifier's
 * .rodata stays struct load_settings alone): 0 and the verifier drops every line of it; N (a power
 * of two) times one XDP run and one TC chain in N per CPU (metrics.kernelTimingSample). Two
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

/* Packets seen per CPU (key TIMED_*): the sampling's tick (nexus_observe). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TIMED_PROGRAMS);
	__type(key, __u32);
	__type(value, __u32);
} timing_ticks SEC(".maps");

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

/* True for the one packet in nexus_observe that this CPU times (never when nexus_observe is 0). */
static __always_inline bool timing_sampled(__u32 program)
{
	if (!nexus_observe)
		return false;
	__u32 *tick = bpf_map_lookup_elem(&timing_ticks, &program);
	if (!tick)
		return false;
	return ((*tick)++ & (nexus_observe - 1)) == 0;
}

static __always_inline __u64 timing_start(void)
{
	return timing_sampled(TIMED_XDP) ? bpf_ktime_get_ns() : 0;
}

static __always_inline void timing_end(__u32 program, __u64 t0)
{
	if (nexus_observe && t0)
		timing_record(program, bpf_ktime_get_ns() - t0);
}

/* Entry of a TC stage: the first decides whether this chain is sampled and starts its clock, every stage of a sampled chain counts itself. */
static __always_inline void tc_stage_enter(bool first)
{
	if (!nexus_observe)
		return;
	__u32 zero = 0;
	struct tc_chain_state *s = bpf_map_lookup_elem(&tc_chain_state, &zero);
	if (!s)
		return;
	if (first) {
		bool sampled = timing_sampled(TIMED_TC);
		s->start_ns = sampled ? bpf_ktime_get_ns() : 0;
		s->depth = sampled;
	} else if (s->start_ns) {
		s->depth += 1;
	}
}

/* A stage returns: the chain ends here. Records a sampled chain's run time and its length. */
static __always_inline void tc_chain_exit(void)
{
	if (!nexus_observe)
		return;
	__u32 zero = 0;
	struct tc_chain_state *s = bpf_map_lookup_elem(&tc_chain_state, &zero);
	if (!s || !s->start_ns)
		return;
	timing_record(TIMED_TC, bpf_ktime_get_ns() - s->start_ns);
	__u32 depth = s->depth < TC_DEPTH_SLOTS ? s->depth : TC_DEPTH_SLOTS - 1;
	__u64 *count = bpf_map_lookup_elem(&tc_depth, &depth);
	if (count)
		*count += 1;
	s->start_ns = 0;
}

#endif /* NEXUS_TIMING_BPF_H */
