// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * NexusCore kernel data path: one object holding the XDP classifier and the TC ingress chain,
 * so that both share one set of map definitions and one .rodata, and a reload swaps both from
 * one file.
 *
 *   xdp  nexus_classify      score each HTTP request head (IPv4 or IPv6) sent to a data-plane
 *                            port; store the verdict per 4-tuple (verdict_store.bpf.h: LRU map and
 *                            mmap-able slot); count it in tier_counters
 *   tc   nexus_tc_classify   SYN detection, else the tier XDP stored for the 4-tuple (a lookup,
 *                            no second scan of the head)
 *        -> nexus_tc_policy  tenant_policy floor for the IPv4 source address (tail call, tc_chain[1])
 *        -> nexus_tc_mark    skb->mark (tail call, tc_chain[2]); see NEXUS_MARK in nexus_shared.h
 *   syscall nexus_adapt_arm  arms the adaptive loop's bpf_timer (recalibrate() in
 *                            nexus_adapt.bpf.h): latency samples in, nano_max adjusted, recalibration events out
 *
 * The scoring algorithm is io.nexuscore.classify.Scorer's (see its javadoc) applied to the head
 * as io.nexuscore.classify.RequestHeadParser reads it; a parity test keeps the three equal.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "nexus_shared.h"
#include "nexus_timing.bpf.h"

/*
 * TC_ACT_UNSPEC, which tcx reads as TCX_NEXT: the chain only marks and never decides for the packet,
 * so the programs and clsact filters after ours (other tools') still run. TC_ACT_OK (TCX_PASS) would
 * end the hook's processing at ours.
 */
#define TC_NEXT (-1)
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_ACK 0x10

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time settings (ScoreWeights, data-plane ports): the loader rewrites them before load. */
const volatile struct load_settings settings = {
	.weight_sum = 10,
	.weight_ref = 15,
	.weight_gen = 20,
	.weight_ana = 25,
	.ports = { 8080 },
};

/*
 * Tokens per non-ASCII character by block (TOKEN_BLOCKS in nexus_shared.h), then the wide
 * characters' one weight (TOKEN_BLOCK_WIDE): the loader writes TokenBlocks' table here before
 * load; its own section so .rodata stays struct load_settings alone.
 */
const volatile __u16 token_block_q10[TOKEN_TABLE_ENTRIES] SEC(".rodata.tokens") = {};

/* routing_decisions(6), verdict_slots(6): where verdicts are stored and read. */
#include "verdict_store.bpf.h"

/*
 * Live tier thresholds (key 0), written by the control plane and the feedback loop with a 64-bit
 * compare-and-set (mmapable so the control plane's CAS is a plain atomic instruction too).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct score_thresholds);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} score_thresholds SEC(".maps");

/* The token estimate's calibrated gain (key 0): read per scored head, refit by the adaptive timer. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct token_model);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} token_model SEC(".maps");

/* Verdicts per tier (key TIER_*), per CPU so the hot path never contends. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TIER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} tier_counters SEC(".maps");

/* Connection-level rule: IPv4 source prefix -> tier floor, applied to the SYN's mark. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct tenant_key);
	__type(value, struct tenant_floor);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} tenant_policy SEC(".maps");

/* TC tail-call chain (slots TC_SLOT_*). Pinned: an unpinned array is emptied when the loader exits. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} tc_chain SEC(".maps");

/*
 * The tier of a score from the live thresholds. Here, not in nexus_score.bpf.h, with the other
 * built-in defaults (settings above): SharedConstantsTest reads its fallback thresholds from this file.
 */
static __always_inline __u8 tier_for(__u32 score)
{
	__u32 zero = 0;
	struct score_thresholds *t = bpf_map_lookup_elem(&score_thresholds, &zero);
	__u32 nano_max = t ? t->nano_max : 60;
	__u32 small_max = t ? t->small_max : 130;

	THRESHOLDS_CLAMP(nano_max, small_max); /* a tool may have written them out of order */
	if (score <= nano_max)
		return TIER_NANO;
	return score <= small_max ? TIER_SMALL : TIER_LARGE;
}

/* Each concern in its own header, included in the order they build on one another. */
#include "nexus_parse.bpf.h"   /* Ethernet / IP / TCP to a data-plane port: tcp_facts */
#include "nexus_head.bpf.h"    /* head buffer, scan state, request line, header scan, Content-Length */
#include "nexus_prompt.bpf.h"  /* prompt key search, prompt string scan, feature counting */
#include "nexus_score.bpf.h"   /* token estimate, gain, score_body */
#include "nexus_pending.bpf.h" /* heads awaiting their body: pending_bodies */
#include "nexus_adapt.bpf.h"   /* the adaptive timer (recalibrate) and its maps */
#include "nexus_limits.bpf.h"  /* tenant limits: tenant_limits, tenant_windows */

static __always_inline int classify_xdp(struct xdp_md *ctx)
{
	struct tcp_facts f = {};
	struct verdict v;
	__u32 zero = 0;

	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (parse_tcp(data, data_end, bpf_xdp_get_buff_len(ctx), &f) < 0 || f.payload_len == 0)
		return XDP_PASS;
	struct head_buf *hb = bpf_map_lookup_elem(&head_scratch, &zero);
	if (!hb)
		return XDP_PASS;
	/*
	 * A segment that does not start a request (most often a body's) is told on the packet itself:
	 * read_head would first copy up to HEAD_WINDOW bytes into the scratch buffer to find no method.
	 */
	const __u8 *payload = data + (f.payload_off & 0xff); /* at most 134: the mask tells the verifier */
	bool on_packet = (void *)(payload + 8) <= data_end; /* else read_head looks at its copy */
	bool head = !on_packet || starts_request(payload, f.payload_len);
	if ((!head || read_head(ctx, true, &f, hb, &v, on_packet) < 0) && read_pending_body(ctx, true, &f, hb, &v) < 0)
		return XDP_PASS;
	if (score_body(hb, &v) < 0)
		return XDP_PASS;
	/* A request decided here (not awaiting its body, prompt seen) counts against its tenant's limits. */
	if (!v.awaits && !f.ipv6 && !(v.flags & VERDICT_F_BLIND))
		count_tenant_request(f.key.src_ip, v.prompt_tokens, &v);

	if (f.ipv6)
		store_verdict6(&f.key6, v.check, v.score, v.tier, v.flags);
	else
		store_verdict4(&f.key, v.check, v.score, v.tier, v.flags);
	if (v.awaits) {
		await_body(&f, &v); /* counted when its body is scored */
		return XDP_PASS;
	}

	__u32 tier = v.tier;
	__u64 *count = bpf_map_lookup_elem(&tier_counters, &tier);
	if (count)
		*count += 1;
	return XDP_PASS;
}

/* skb->cb layout between the TC stages. */
#define CB_KIND 0     /* NEXUS_MARK_KIND_FLOOR (SYN) or NEXUS_MARK_KIND_REQUEST; 0 = nothing to mark */
#define CB_TIER 1     /* request: stored tier; SYN: floor once policy found one */
#define CB_SRC_IP 2   /* IPv4 source, network order (tenant_policy is keyed by IPv4 prefixes) */
#define CB_HAS_TIER 3 /* 1 when CB_TIER holds a tier */
#define CB_IPV6 4     /* 1: an IPv6 segment, no tenant rule applies */

/*
 * The chain's first stage: a SYN asks for the tenant floor; a segment carrying request bytes
 * takes the tier XDP stored for its 4-tuple (XDP runs first on ingress and has stored the verdict
 * of the head this segment starts or continues). No scan of the payload here.
 */
static __always_inline int tc_classify(struct __sk_buff *skb, __u64 t0)
{
	struct tcp_facts f = {};

	skb->cb[CB_KIND] = 0;
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	if (parse_tcp(data, data_end, skb->len, &f) < 0) {
		/* Headers not in the linear part (rare on ingress): pull them in and parse again. */
		__u32 want = skb->len < MAX_HEADERS ? skb->len : MAX_HEADERS;
		if ((void *)(long)skb->data + want <= (void *)(long)skb->data_end ||
		    bpf_skb_pull_data(skb, want) < 0)
			return TC_NEXT;
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		if (parse_tcp(data, data_end, skb->len, &f) < 0)
			return TC_NEXT;
	}

	if ((f.flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN) {
		skb->cb[CB_KIND] = NEXUS_MARK_KIND_FLOOR;
		skb->cb[CB_HAS_TIER] = 0;
	} else {
		int tier = f.payload_len == 0 ? -1 : f.ipv6 ? stored_tier6(&f.key6) : stored_tier4(&f.key);
		if (tier < 0)
			return TC_NEXT; /* no request bytes, or no verdict for this connection */
		skb->cb[CB_KIND] = NEXUS_MARK_KIND_REQUEST;
		skb->cb[CB_TIER] = tier;
		skb->cb[CB_HAS_TIER] = 1;
	}
	skb->cb[CB_SRC_IP] = f.ipv6 ? 0 : f.key.src_ip;
	skb->cb[CB_IPV6] = f.ipv6;
	tc_chain_handoff(t0);
	bpf_tail_call(skb, &tc_chain, TC_SLOT_POLICY);
	return TC_NEXT; /* the chain is not installed: pass unmarked */
}

static __always_inline int tc_policy(struct __sk_buff *skb)
{
	struct tenant_key key = {
		.prefixlen = 32,
		.addr = skb->cb[CB_SRC_IP],
	};
	struct tenant_floor *floor = skb->cb[CB_IPV6] ? NULL : bpf_map_lookup_elem(&tenant_policy, &key);
	__u32 tier = skb->cb[CB_TIER];
	__u32 has_tier = skb->cb[CB_HAS_TIER];

	if (floor && floor->tier_floor < TIER_COUNT) {
		if (!has_tier || floor->tier_floor > tier)
			tier = floor->tier_floor;
		has_tier = 1;
	}
	/* Constant-index stores: the verifier rejects a computed offset into the ctx. */
	skb->cb[CB_TIER] = tier;
	skb->cb[CB_HAS_TIER] = has_tier;
	bpf_tail_call(skb, &tc_chain, TC_SLOT_MARK);
	return TC_NEXT;
}

static __always_inline int tc_mark(struct __sk_buff *skb)
{
	__u32 kind = skb->cb[CB_KIND];
	__u32 tier = skb->cb[CB_TIER];

	if (skb->cb[CB_HAS_TIER] && tier < TIER_COUNT &&
	    (kind == NEXUS_MARK_KIND_FLOOR || kind == NEXUS_MARK_KIND_REQUEST))
		skb->mark = NEXUS_MARK(kind, tier);
	return TC_NEXT;
}

/* Entry points: the stages above, timed when nexus_observe is set (nexus_timing.bpf.h). */
SEC("xdp")
int nexus_classify(struct xdp_md *ctx)
{
	__u64 t0 = timing_start();
	int rc = classify_xdp(ctx);
	timing_end(TIMED_XDP, t0);
	return rc;
}

SEC("tc")
int nexus_tc_classify(struct __sk_buff *skb)
{
	__u64 t0 = timing_start();
	int rc = tc_classify(skb, t0);
	tc_first_exit(t0);
	return rc;
}

SEC("tc")
int nexus_tc_policy(struct __sk_buff *skb)
{
	tc_stage_enter();
	int rc = tc_policy(skb);
	tc_chain_exit();
	return rc;
}

SEC("tc")
int nexus_tc_mark(struct __sk_buff *skb)
{
	tc_stage_enter();
	int rc = tc_mark(skb);
	tc_chain_exit();
	return rc;
}

SEC("syscall")
int nexus_adapt_arm(void *ctx)
{
	__u32 zero = 0;
	struct adaptive_timer_value *val = bpf_map_lookup_elem(&adaptive_timer, &zero);
	struct adaptive_settings *s = bpf_map_lookup_elem(&adaptive_settings, &zero);
	long err;

	if (!val)
		return -1;
	err = bpf_timer_init(&val->timer, &adaptive_timer, CLOCK_MONOTONIC);
	if (err && err != -EBUSY)
		return err;
	/* Takes this program as the callback's (dropping the previous program's): one timer, newest code. */
	err = bpf_timer_set_callback(&val->timer, recalibrate);
	if (err)
		return err;
	val->armed++;
	return bpf_timer_start(&val->timer, period_ns(s), 0);
}
