/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The single source of truth for every value that crosses the kernel/user boundary.
 *
 * Java mirrors live in io.nexuscore.kernel.maps.SharedStructs (flow_key ... load_settings, and the adaptive
 * loop's latency_event, adaptive_settings, recalibration_event, adaptive_stats); BtfLayoutTest compares them with the BTF of the
 * compiled object, so a change here that is not made there fails the build.
 *
 * Rules: fixed-width types only, explicit pad fields that writers zero, byte order written next
 * to every multi-byte field, _Static_assert on every size.
 */
#ifndef NEXUS_SHARED_H
#define NEXUS_SHARED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Bytes of the request line that are scanned for keywords and hashed (Scorer.REQUEST_LINE_MAX). */
#define REQUEST_LINE_MAX 256

/*
 * The request-line hash and the verdict check (Scorer.requestLineHash, KernelVerdict.check): a word
 * at a time, h = line_mix(h, w) (verdict_store.bpf.h) over the line's bytes as little-endian 8-byte words (the last one
 * zero-padded), then over the count of bytes hashed. One multiply per 8 bytes: FNV-1a's multiply per
 * byte was the request line's whole cost (~64 ns of a chat head's ~420). A check, not a MAC: it only
 * tells two requests of one connection apart.
 */
#define LINE_HASH_SEED 0x6a09e667f3bcc908ull
#define LINE_HASH_MULT 0x9e3779b97f4a7c15ull
/*
 * Bytes of TCP payload the classifier copies and scans (RequestHeadParser.HEAD_WINDOW): the
 * request line, Content-Length and the end of the head must sit in the first HEAD_WINDOW bytes
 * of the packet that starts the request. Power of two: indexes are masked with HEAD_WINDOW - 1.
 */
#define HEAD_WINDOW 1024
/* Content-Length values saturate here (2^40) so that the digit loop can never overflow. */
#define CONTENT_LENGTH_MAX (1ULL << 40)
/* Data-plane ports the classifier looks at (load-time setting, struct load_settings). */
#define MAX_PORTS 8

#define TIER_NANO 0
#define TIER_SMALL 1
#define TIER_LARGE 2
#define TIER_COUNT 3

/*
 * skb->mark written by the TC chain, and so (net.ipv4.tcp_fwmark_accept=1) the SO_MARK of the
 * accepted socket:
 *   bits 31..16  NEXUS_MARK_MAGIC ("NX"): the mark is ours; 0 means "no decision"
 *   bits 15..8   kind: NEXUS_MARK_KIND_FLOOR (SYN: tenant tier floor from tenant_policy) or
 *                NEXUS_MARK_KIND_REQUEST (a segment carrying request bytes: the tier of the
 *                connection's latest verdict, as XDP stored it, raised to the tenant floor)
 *   bits  7..0   tier + 1 (1 nano, 2 small, 3 large), so a tier never encodes as 0
 * Java: io.nexuscore.kernel.maps.SocketMarks.
 */
#define NEXUS_MARK_MAGIC 0x4e580000u
#define NEXUS_MARK_MAGIC_MASK 0xffff0000u
#define NEXUS_MARK_KIND_FLOOR 0x01u
#define NEXUS_MARK_KIND_REQUEST 0x02u
#define NEXUS_MARK(kind, tier) (NEXUS_MARK_MAGIC | ((kind) << 8) | ((tier) + 1))

/* Slots of the tc_chain program array (filled by the loader; classify is attached, not called). */
#define TC_SLOT_POLICY 1
#define TC_SLOT_MARK 2

/*
 * routing_decisions key and verdict slot key: the client's packet as it arrives. All fields network byte order,
 * exactly as they sit in the IPv4/TCP headers. 12 bytes, no padding.
 */
struct flow_key {
	__u32 src_ip;   /* network order */
	__u32 dst_ip;   /* network order */
	__u16 src_port; /* network order */
	__u16 dst_port; /* network order */
};
_Static_assert(sizeof(struct flow_key) == 12, "flow_key is 12 bytes");

/*
 * routing_decisions6 key: the same for IPv6 (a second map, so IPv4 entries keep their 12-byte
 * key). Addresses are the 16 header bytes, network order; 36 bytes, no padding.
 */
struct flow_key6 {
	__u32 src_ip[4]; /* network order (the header's bytes as they are) */
	__u32 dst_ip[4]; /* network order */
	__u16 src_port;  /* network order */
	__u16 dst_port;  /* network order */
};
_Static_assert(sizeof(struct flow_key6) == 36, "flow_key6 is 36 bytes");

/*
 * routing_decisions / routing_decisions6 value, and the verdict in a verdict slot: the verdict for
 * the latest request head seen on a connection. Host byte order. 8 bytes, written with one 64-bit
 * store, so a reader never sees half of one verdict and half of another.
 *
 * check lets the data plane verify that the verdict belongs to the request it serves (keep-alive
 * connections carry many requests): the request-line hash (line_mix above, over the first
 * REQUEST_LINE_MAX bytes of the request line) mixed with the body length (Content-Length, else
 * payload bytes after "\r\n\r\n" in the head's segment). Java: KernelVerdict.check().
 */
struct routing_decision {
	__u32 check; /* request-line hash mixed with the body length, see above */
	__u8 score;  /* 0..255 */
	__u8 tier;   /* TIER_* */
	__u8 flags;  /* VERDICT_F_* */
	__u8 heads;  /* request heads scored on this connection, wrapping (diagnostics) */
};
/*
 * The head's segment held no prompt string (the client sent the body in a later segment, or the
 * prompt key lies past HEAD_WINDOW): the token estimate came from the body length alone. The data
 * plane, which has the body, scores such a request itself (route source "user", reason "blind").
 */
#define VERDICT_F_BLIND 0x01
/*
 * Tenant limits (nexus_limits.bpf.h, docs/tenant-limits.md): the source's prefix has minute limits
 * in tenant_limits and XDP counted this request against them (COUNTED), or refused it (OVER_*:
 * nothing was counted). The data plane answers an OVER_* verdict 429 before any tier works.
 */
#define VERDICT_F_COUNTED 0x02
#define VERDICT_F_OVER_REQUESTS 0x04
#define VERDICT_F_OVER_TOKENS 0x08
#define VERDICT_F_OVER_FOR_GOOD 0x10 /* with OVER_TOKENS: the charge alone is above the whole limit */
_Static_assert(sizeof(struct routing_decision) == 8, "routing_decision is 8 bytes");

/*
 * The verdict store. Verdict slots (BPF_F_MMAPABLE arrays, read by the data plane through mmap
 * with plain loads, io.nexuscore.kernel.maps.VerdictSlots) are the primary store; routing_decisions /
 * routing_decisions6 (LRU hashes by 4-tuple) are a small fallback for connections that do not hold
 * their slot. Slot index = slot_hash(key) & (slots - 1), where slot_hash folds the key's 32-bit
 * words as loaded on a little-endian CPU (flow_key: src_ip, dst_ip, src_port | dst_port << 16;
 * flow_key6: the 4 + 4 address words, then the ports word):
 *   h = 0; for each word w: h = (h ^ w) * SLOT_HASH_MULT;  h ^= h >> 15
 *
 * The XDP program writes a verdict into the connection's slot. When the slot holds another
 * connection (a collision), the newcomer takes the slot and the previous holder's verdict moves to
 * the fallback map first, so both stay readable: XDP cannot tell a live holder from one that has
 * gone, and the LRU ages out the gone. When another CPU is writing the slot at that moment, the
 * verdict goes to the fallback map instead. Readers (TC chain, data plane) look at the slot, then
 * at the fallback map. A slot whose key is all zero is empty (a TCP destination port is never 0).
 *
 * Memory (bpftool map show, bytes_memlock): 24 B per IPv4 slot, so 1M slots lock 24 MiB; the
 * fallback maps are sized for collisions, not for every connection (README, "Kernel data path").
 */
#define VERDICT_SLOTS (1 << 20)    /* IPv4 slots, power of two (24 MiB) */
#define VERDICT_SLOTS6 (1 << 16)   /* IPv6 slots, power of two (3 MiB) */
#define VERDICT_FALLBACK 65536     /* routing_decisions entries (IPv4 connections not in their slot) */
#define VERDICT_FALLBACK6 16384    /* routing_decisions6 entries */
/*
 * pending_bodies entries (an array indexed by the flow's slot hash, power of two): request heads
 * whose body is still to come, both families. An entry lives from a head's segment to the flow's
 * next segment, microseconds on a live connection.
 */
#define PENDING_BODIES 65536
#define SLOT_HASH_MULT 0x9e3779b1u

/*
 * seq is a seqlock: a writer (the XDP program; VerdictSlots.clear from the data plane's side) takes
 * it with a compare-and-swap from an even value to odd, writes key and verdict, and makes it even
 * again (changed). A reader takes seq, key, verdict, seq again, and trusts the slot only when both
 * seq reads are equal and even. Host byte order; the key in network order like flow_key.
 */
struct verdict_slot {
	__u32 seq;
	struct flow_key key;
	struct routing_decision verdict;
};
_Static_assert(sizeof(struct verdict_slot) == 24, "verdict_slot is 24 bytes");

struct verdict_slot6 {
	__u32 seq;
	struct flow_key6 key;
	struct routing_decision verdict;
};
_Static_assert(sizeof(struct verdict_slot6) == 48, "verdict_slot6 is 48 bytes");

/*
 * score_thresholds value (array, one entry, key 0, BPF_F_MMAPABLE). Host byte order. The first two
 * bytes are the seed's layout, so `bpftool map update pinned .../score_thresholds key 0 0 0 0 value
 * 50 130 0 0 0 0 0 0` sets nano_max 50, small_max 130.
 *
 * One writer at a time: the control plane (through mmap) and the adaptive timer replace the whole
 * 8 bytes with one 64-bit compare-and-set against the value they read, with version + 1 and their
 * writer id; a writer that loses re-reads (the API) or skips its period (the timer). Any other tool
 * (bpftool) writes the whole value; the next CAS sees the change and nothing is lost.
 *
 * Valid means nano_max < small_max. Any tool can write an invalid value: readers then clamp
 * (THRESHOLDS_CLAMP; Java: ThresholdState.effective()) so a high score never lands in nano.
 */
struct score_thresholds {
	__u8 nano_max;   /* byte 0: score <= nano_max is nano */
	__u8 small_max;  /* byte 1: score <= small_max is small, above is large */
	__u16 writer;    /* bytes 2-3: THRESHOLDS_WRITER_* of the last CAS writer; 0 for any other tool */
	__u32 version;   /* bytes 4-7: bumped by every CAS writer */
};
_Static_assert(sizeof(struct score_thresholds) == 8, "score_thresholds is 8 bytes");
#define THRESHOLDS_WRITER_OTHER 0  /* bpftool or any tool that does not follow the CAS protocol */
#define THRESHOLDS_WRITER_API 1    /* the control plane (PATCH /thresholds, the state file) */
#define THRESHOLDS_WRITER_KERNEL 2 /* the adaptive timer */
/* The safe order an invalid value is read as: small_max at least 1, nano_max below small_max. */
#define THRESHOLDS_CLAMP(nano, small) do { \
		if ((small) == 0) \
			(small) = 1; \
		if ((nano) >= (small)) \
			(nano) = (small) - 1; \
	} while (0)

/* tenant_policy key (LPM trie): prefixlen in host order, then the IPv4 prefix in network order. */
struct tenant_key {
	__u32 prefixlen; /* host order, 0..32 */
	__u32 addr;      /* network order */
};
_Static_assert(sizeof(struct tenant_key) == 8, "tenant_key is 8 bytes");

/* tenant_policy value. Host byte order. */
struct tenant_floor {
	__u8 tier_floor; /* TIER_*: connections from the prefix are served at least at this tier */
	__u8 pad[3];     /* zero */
};
_Static_assert(sizeof(struct tenant_floor) == 4, "tenant_floor is 4 bytes");

/*
 * Load-time settings: the whole .rodata of nexus_classify.bpf.o (one const volatile variable),
 * written by the loader through bpf_map__initial_value() before load. Host byte order.
 */
struct load_settings {
	__u32 weight_sum;      /* keyword bonuses (ScoreWeights), each 0..255 */
	__u32 weight_ref;
	__u32 weight_gen;
	__u32 weight_ana;
	__u16 ports[MAX_PORTS]; /* data-plane TCP ports, host order; 0 = unused slot */
};
_Static_assert(sizeof(struct load_settings) == 32, "load_settings is 32 bytes");

/* ---- The prompt token estimate (io.nexuscore.classify.PromptEstimate) ---- */

/*
 * Tokens of the prompt string's characters seen, in 1/1024 tokens (io.nexuscore.classify.PromptEstimate
 * has the rules): per letter run (a word), second blank of a blank run, punctuation run, digit run,
 * letter, and each non-ASCII character's block weight (token_block_q10). Unseen bytes of a prompt
 * count at the rate seen, or TOKEN_PER_BYTE_Q10 when nothing was seen; the sum times gain >> 20
 * is the estimate.
 */
#define TOKEN_PER_WORD_Q10 537
#define TOKEN_PER_BLANK_RUN_Q10 657
#define TOKEN_PER_PUNCT_RUN_Q10 909
#define TOKEN_PER_DIGIT_RUN_Q10 2005
#define TOKEN_PER_LETTER_Q10 129
/*
 * token_block_q10 (nexus_classify's .rodata.tokens): tokens per non-ASCII character by block of 64
 * code points (cp >> 6) of the BMP, then one entry for every character above it. The weights are
 * io.nexuscore.classify.TokenBlocks' (token-blocks.tsv), written by the loader before load.
 */
#define TOKEN_BLOCKS 1025
#define TOKEN_BLOCK_SUPPLEMENTARY 1024
/*
 * The table's entry after the blocks (not a block): the one weight of every 3-byte character from
 * U+2000 on (the surrogates' blocks aside: CJK, kana, Hangul, symbols), which the fast path adds
 * per character without a lookup; TOKEN_WIDE_NOT_UNIFORM when those blocks differ (the byte path
 * then weighs them). TokenBlocks.rodata() computes it from the same table.
 */
#define TOKEN_BLOCK_WIDE 1025
#define TOKEN_TABLE_ENTRIES 1026
#define TOKEN_WIDE_NOT_UNIFORM 0xffff
#define TOKEN_PER_BYTE_Q10 241
#define TOKEN_GAIN_ONE 1024        /* gain 1.0 in Q10 */
/* The largest gain any reader applies (8.0): a tool may write any u32 into token_model. */
#define TOKEN_GAIN_MAX 8192
/*
 * The calibration holds while the period's target gain is within this of the gain in force (3 %):
 * one period's prompt mix moves the ratio by a few percent, and chasing that only jitters tiers.
 */
#define CALIBRATION_DEADBAND_Q10 32
/* Prompt keys a scan looks at, at most (a chat's first messages: a system prompt, the question...). */
#define PROMPT_STRINGS 8
/* Prompt bytes (after the opening quote) scanned for the keywords, as the guests do. */
#define KEYWORD_SCAN_BYTES 64
/* Bytes after the prompt string's closing quote that are envelope, not more prompt. */
#define TRAILER_ALLOWANCE 48
/*
 * Body bytes the prompt scan reads, from the body's first byte, whichever segment carries them
 * (PromptEstimate.BODY_WINDOW): the rest of the body is counted from Content-Length at the rate
 * seen, so a packet's cost has a bound whatever the prompt's length (docs/kernel-segments.md has
 * the accuracy/cost curve this was chosen on). A scan whose window the segment cuts shorter than
 * min(body length, BODY_WINDOW) is blind: the data plane, which has the whole body, decides.
 */
#define BODY_WINDOW 256
/*
 * A chat's envelope around its prompt, bytes (PromptEstimate.PROMPT_ENVELOPE): when the window ends
 * inside a prompt string, the body bytes after it less (PROMPT_ENVELOPE - the bytes before the
 * string) are the prompt's unseen rest. Clients put ~40-75 bytes before the prompt and the rest after.
 */
#define PROMPT_ENVELOPE 80
/*
 * The same for a flat body whose first prompt string is a top-level "prompt" or "input" key's
 * (completions, the task endpoints, the Responses API: {"model":..,"prompt":"..","max_tokens":16}):
 * little follows it (PromptEstimate.FLAT_TRAILER).
 */
#define FLAT_TRAILER 16
/* Unseen bytes counted at most, and the estimate's cap (both far above 255 tokens). */
#define PROMPT_EXTRA_MAX (1ull << 24)
#define PROMPT_Q10_MAX (1ull << 40)
/* Bytes after a prompt key within which its string must open (blanks, ':', blanks, '"'). */
#define PROMPT_COLON_MAX 16
/* Body bytes taken as envelope when no prompt string is visible in the first segment. */
#define ENVELOPE_GUESS 64

/*
 * token_model value (ARRAY, one entry, key 0, BPF_F_MMAPABLE so the data plane reads the gain with
 * a plain load). Host byte order. Written by the calibration stage of the adaptive timer (BPF_EXIST
 * update) and by the control plane; version is bumped by every writer.
 */
struct token_model {
	__u32 gain;    /* Q10: TOKEN_GAIN_ONE = the built-in ratio; 0 = never written, read as one */
	__u32 version;
};
_Static_assert(sizeof(struct token_model) == 8, "token_model is 8 bytes");

/* ---- Adaptive recalibration (the latency feedback loop) ---- */

/* Log-linear latency histogram: 8 sub-buckets per power of two of microseconds (<= 12.5% error). */
#define LAT_SUB_BITS 3
#define LAT_BUCKETS 256
/* Upper bound of events drained per timer period (settings.max_events is clamped to it). */
#define ADAPT_MAX_EVENTS 100000
/*
 * The most one period over target lowers nano_max by, in steps: the cut is step * p95 / target
 * (at least one step), capped at ADAPT_CUT_MAX_STEPS * step.
 */
#define ADAPT_CUT_MAX_STEPS 4

/*
 * latency_ringbuf sample (BPF_MAP_TYPE_USER_RINGBUF, user -> kernel): one per completed request,
 * written by io.nexuscore.kernel.maps.LatencyRing. Host byte order.
 */
struct latency_event {
	__u64 timestamp_ns; /* CLOCK_MONOTONIC when the request completed */
	__u32 tenant_id;    /* stable 32-bit hash of the tenant name; 0 = unknown */
	__u8 tier;          /* TIER_* the request was served at */
	__u8 pad[3];        /* zero */
	__u32 latency_us;   /* end-to-end latency, microseconds (saturates at 2^32 - 1) */
	/*
	 * Calibration sample (0 and 0 when the request has none): the guest's true cl100k count of the
	 * prompt, and the estimate of the same prompt at unit gain (TOKEN_GAIN_ONE), in 1/16 tokens.
	 * The timer refits token_model.gain from the period's sums (see recalibrate()).
	 */
	__u32 true_tokens;
	__u32 estimate_q4;
	__u32 pad2;         /* zero */
};
_Static_assert(sizeof(struct latency_event) == 32, "latency_event is 32 bytes");

/*
 * adaptive_settings value (ARRAY, one entry, key 0): read by the timer callback on every period,
 * so a change applies at the next period (a new period_ms also when the loader re-arms).
 * Host byte order. All zero = never written: the loader writes the defaults.
 */
struct adaptive_settings {
	__u32 enabled;                   /* 0: drain and discard, never change thresholds */
	__u32 period_ms;                 /* timer period */
	__u32 target_p95_us[TIER_COUNT]; /* P95 target per tier; only nano's acts (0 = none) */
	__u32 step;                      /* nano_max cut unit (ADAPT_CUT_MAX_STEPS) and raise-back step */
	__u32 floor;                     /* nano_max never goes below this */
	__u32 min_samples;               /* fewer nano samples in a period: no decision */
	__u32 max_events;                /* events drained per period, at most ADAPT_MAX_EVENTS */
	/*
	 * Raise-back with hysteresis: after raise_after consecutive periods whose nano P95 is under
	 * raise_below_pct % of the target, nano_max goes up by step, never above ceiling (the
	 * operator's value) nor to small_max. ceiling 0: the loop only lowers.
	 */
	__u32 ceiling;
	__u32 raise_below_pct;
	__u32 raise_after;
	/*
	 * Self-calibration of the token estimate: with calibrate set, a period with at least
	 * calibration_min_samples samples that carry a true count moves token_model.gain toward
	 * TOKEN_GAIN_ONE * 16 * sum(true_tokens) / sum(estimate_q4), by at most gain_step_max, and
	 * never outside [gain_min, gain_max] (all Q10, like the gain).
	 */
	__u32 calibrate;
	__u32 gain_min;
	__u32 gain_max;
	__u32 gain_step_max;
	__u32 calibration_min_samples;
	__u32 pad;                       /* zero */
};
_Static_assert(sizeof(struct adaptive_settings) == 72, "adaptive_settings is 72 bytes");

/* recalibration_events sample (BPF_MAP_TYPE_RINGBUF, kernel -> user). Host byte order. */
struct recalibration_event {
	__u64 timestamp_ns;  /* bpf_ktime_get_ns() */
	__u32 old_nano_max;
	__u32 new_nano_max;
	__u32 p95_us;        /* nano P95 observed (lower edge of its histogram bucket) */
	__u32 samples;       /* nano samples in the period */
};
_Static_assert(sizeof(struct recalibration_event) == 24, "recalibration_event is 24 bytes");

/* calibration_events sample (BPF_MAP_TYPE_RINGBUF, kernel -> user): one per gain change. */
struct calibration_event {
	__u64 timestamp_ns;    /* bpf_ktime_get_ns() */
	__u32 old_gain;        /* Q10 */
	__u32 new_gain;        /* Q10 */
	__u32 samples;         /* samples with a true count in the period */
	__u32 pad;             /* zero */
	__u64 true_tokens_sum; /* their true counts, summed */
	__u64 estimate_q4_sum; /* their unit-gain estimates (1/16 tokens), summed */
};
_Static_assert(sizeof(struct calibration_event) == 40, "calibration_event is 40 bytes");

/* adaptive_stats value (ARRAY, one entry, key 0): what the loop saw, for GET /adaptive. */
struct adaptive_stats {
	__u64 ticks;                  /* timer periods run */
	__u64 drained;                /* latency events drained, all periods */
	__u64 recalibrations;         /* nano_max changes made */
	__s64 last_update_rc;         /* return of the last bpf_map_update_elem(BPF_EXIST) */
	__u32 last_p95_us[TIER_COUNT]; /* P95 per tier in the last period with samples (0 = none) */
	__u32 last_samples[TIER_COUNT];
	struct recalibration_event last; /* the last recalibration */
	__u32 good_periods;           /* consecutive periods under the raise-back bound */
	__u32 pad;                    /* zero */
	__u64 calibrations;           /* token_model.gain changes made */
	struct calibration_event last_calibration; /* the last one */
};
_Static_assert(sizeof(struct adaptive_stats) == 136, "adaptive_stats is 136 bytes");

/* ---- Tenant limits counted in the kernel (nexus_limits.bpf.h, docs/tenant-limits.md) ---- */

/* tenant_windows entries: one per tenant with minute limits; the control plane assigns the slots. */
#define TENANT_LIMIT_SLOTS 1024
/* The anchored window: 60 s from the tenant's first counted request (bpf_ktime_get_ns). */
#define LIMIT_WINDOW_NS 60000000000ull

/*
 * tenant_limits value (LPM trie keyed by struct tenant_key, like tenant_policy): the minute limits
 * this router enforces for the prefix's tenant (its fleet share) and the slot of its counters.
 * Host byte order; 0 = that limit is not set.
 */
struct tenant_limit {
	__u32 slot;                /* tenant_windows index, < TENANT_LIMIT_SLOTS */
	__u32 requests_per_minute; /* this router's share */
	__u64 tokens_per_minute;   /* this router's share */
	__u64 tokens_whole;        /* the tenant's whole tokens_per_minute: a charge above it never passes */
	__u32 output_tokens;       /* the output cap charged with the prompt (dataPlane.assumedOutputTokens) */
	__u32 pad;                 /* zero */
};
_Static_assert(sizeof(struct tenant_limit) == 32, "tenant_limit is 32 bytes");

/*
 * tenant_windows value (ARRAY, BPF_F_MMAPABLE): a tenant's two anchored windows. XDP and the data
 * plane (for the requests XDP did not count) update them with atomic adds on the same memory. A
 * window is open when its start is not 0 and current while now - start < LIMIT_WINDOW_NS.
 */
struct tenant_window {
	__u64 requests_start; /* ns */
	__u64 requests;
	__u64 tokens_start;   /* ns */
	__u64 tokens;
};
_Static_assert(sizeof(struct tenant_window) == 32, "tenant_window is 32 bytes");

#endif /* NEXUS_SHARED_H */
