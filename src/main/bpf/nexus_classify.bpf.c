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
 *   syscall nexus_adapt_arm  arms the adaptive loop's bpf_timer (recalibrate(), at the end of this
 *                            file): latency samples in, nano_max adjusted, recalibration events out
 *
 * The scoring algorithm is io.nexuscore.classify.Scorer's (see its javadoc) applied to the head
 * as io.nexuscore.classify.RequestHeadParser reads it; a parity test keeps the three equal.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "nexus_shared.h"
#include "nexus_timing.bpf.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define IPV6_HLEN 40
#define ETH_HLEN 14
#define MAX_HEADERS (ETH_HLEN + 60 + 60)
/*
 * TC_ACT_UNSPEC, which tcx reads as TCX_NEXT: the chain only marks and never decides for the packet,
 * so the programs and clsact filters after ours (other tools') still run. TC_ACT_OK (TCX_PASS) would
 * end the hook's processing at ours.
 */
#define TC_NEXT (-1)
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_ACK 0x10
#define IP_FRAGMENT_MASK 0x3fff /* MF flag and fragment offset */

#define FNV_OFFSET 0x811c9dc5u
#define FNV_PRIME 0x01000193u

/* Keywords as the rolling window holds them: three lower-cased bytes, oldest highest. */
#define KW_SUM 0x73756du
#define KW_REF 0x726566u
#define KW_GEN 0x67656eu
#define KW_ANA 0x616e61u

/* "content-length:" as two little-endian words, so no string lands in .rodata. */
#define CL_NAME_LEN 15
#define CL_NAME_LO 0x2d746e65746e6f63ull /* "content-" */
#define CL_NAME_HI 0x003a6874676e656cull /* "length:"  */

/* Prompt keys as little-endian words: "\"prompt\"", "\"content" (then one more '"') and "\"text\"". */
#define PROMPT_KEY 0x2274706d6f727022ull  /* "prompt"  with both quotes */
#define CONTENT_KEY 0x746e65746e6f6322ull /* "content  with the opening quote */
#define TEXT_KEY 0x0000227478657422ull    /* "text" with both quotes, in the low six bytes */
#define TEXT_KEY_MASK 0x0000ffffffffffffull
/* The Responses API's and the Messages API's prompt keys (dataplane/apis flattens the same strings). */
#define INPUT_KEY 0x00227475706e6922ull   /* "input" with both quotes, in the low seven bytes */
#define INPUT_KEY_MASK 0x00ffffffffffffffull
#define SYSTEM_KEY 0x226d657473797322ull  /* "system" with both quotes */
#define INSTRUC_KEY 0x63757274736e6922ull /* "instruc: the first eight bytes of "instructions" */
#define TIONS_KEY 0x000022736e6f6974ull   /* tions" : its last six */

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
 * Tokens per non-ASCII character by block (TOKEN_BLOCKS in nexus_shared.h): the loader writes
 * TokenBlocks' table here before load; its own section so .rodata stays struct load_settings alone.
 */
const volatile __u16 token_block_q10[TOKEN_BLOCKS] SEC(".rodata.tokens") = {};

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

/* A TCP segment to a data-plane port, as parse_tcp() finds it. */
struct tcp_facts {
	struct flow_key key;   /* IPv4 */
	struct flow_key6 key6; /* IPv6 */
	__u32 payload_off;     /* from the start of the Ethernet header */
	__u32 payload_len;     /* from the IPv4 total length / IPv6 payload length */
	__u32 seq;             /* TCP sequence number, host order */
	__u8 flags;            /* TCP flags byte (CWR..FIN) */
	__u8 ipv6;             /* 1: key6 holds the 4-tuple, else key */
};

struct verdict {
	__u64 body_len;
	__u32 check;   /* verdict_check(request-line hash, body_len) */
	__u8 score;
	__u8 tier;
	__u8 flags;    /* VERDICT_F_* */
	__u8 awaits;   /* 1: a head without body bytes whose Content-Length body follows (pending_bodies) */
	__u32 line_keywords; /* KW_BIT_* of the request line */
	__u32 body_from;     /* the body's first byte in the scratch buffer */
};

/*
 * A request head that arrived without its body (the client wrote the body after the head: httpx,
 * urllib, the JDK client): the next segment of the flow, if it starts exactly at next_seq, is the
 * body's start and is scored as the head's segment would have been. One shot: the first later
 * segment of the flow that does not start a request takes the entry, whatever it holds, so a lost,
 * reordered or retransmitted segment leaves the request blind (the data plane decides), never
 * wrongly decided.
 */
struct pending_body {
	struct flow_key6 key; /* the flow; IPv4 as ::ffff:a.b.c.d */
	__u32 next_seq;       /* host order: the sequence number just past the head */
	__u64 body_len;       /* Content-Length; 0 = the entry is free (taken, or never written) */
	__u32 check;          /* verdict_check(request-line hash, body_len) */
	__u32 line_keywords;  /* KW_BIT_* of the request line */
};
/*
 * Heads awaiting their body, by flow hash (an array: no lock, no allocation on the packet path).
 * Two flows awaiting at once in one entry: the later one wins and the earlier stays blind. A
 * reader racing a writer on another CPU could mix two entries; a mix is used only if its key and
 * next_seq both match the segment (one chance in 2^32 for a torn sequence number), and the data
 * plane still checks request line and body length.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PENDING_BODIES);
	__type(key, __u32);
	__type(value, struct pending_body);
} pending_bodies SEC(".maps");

enum { CL_NONE, CL_VALUE, CL_DIGITS };
enum { KW_BIT_SUM = 1, KW_BIT_REF = 2, KW_BIT_GEN = 4, KW_BIT_ANA = 8 };

/* scan_state.escape right after a '\\' (then 4 more for "\\uXXXX", else none). */
#define ESCAPE_STARTED 5
/* Character classes of the prompt scan. */
enum { CLS_LETTER, CLS_DIGIT, CLS_BLANK, CLS_BREAK, CLS_PUNCT };

/* Bytes scanned per bpf_loop iteration: state stays in registers within a chunk. */
#define CHUNK 8
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
#define LOWER 0x2020202020202020ull

/*
 * Scan state. It lives in the per-CPU scratch map value, not on the stack: the verifier tracks
 * constants held on the stack exactly, and every combination (keyword bits x header state x ...)
 * became a state of its own when it verified the bpf_loop callback (210k insns); values loaded
 * from a map are unknown scalars, so each callback verifies once (~1k insns in all).
 */
struct scan_state {
	__u64 cl_value;
	__u32 len;        /* bytes of the head in bytes[] */
	__u32 line_end;   /* index of the first CR or LF; len when there is none */
	__u32 hash;       /* FNV-1a over the first REQUEST_LINE_MAX bytes of the request line */
	__u32 window;     /* last three request-line bytes, lower-cased */
	__u32 keywords;   /* KW_BIT_* */
	__u32 head_end;   /* index just past "\r\n\r\n"; 0 while not seen */
	__u32 cl_state;   /* CL_*: inside a Content-Length value */
	__u32 value_from; /* index where that value starts (after the header name) */
	__u32 cl_found;
	/* Phase 3 and 4: the prompt string in the body (PromptEstimate's javadoc has the rules). */
	__u32 prompt_from;   /* index just past the first prompt string's opening quote; 0 = none found */
	__u32 flat;          /* 1: the first prompt string is a "prompt" or "input" key's (a top-level string) */
	__u32 key_pos;       /* where the search for the next prompt key goes on */
	__u32 key_end;       /* index just past the key it found; 0 = none */
	__u32 keys;          /* prompt keys done (PROMPT_STRINGS at most) */
	__u32 in_string;     /* 1 while scanning a prompt string, 0 while looking for a key */
	__u32 string_end;    /* index of the closing quote of the string being scanned; 0 while not seen */
	__u32 scan_end;      /* index just past the last string scanned, or len when one ran into it */
	__u32 raw;           /* bytes scanned */
	__u32 escape;        /* ESCAPE_STARTED after a '\\'; 4..1: hex digits of "\\u" to come */
	__u32 hex_a;         /* the first two of those */
	__u32 hex_b;
	__u32 lead;          /* lead byte of a 3-byte character whose second byte comes next; 0 otherwise */
	__u32 kw_window;     /* last three prompt bytes, lower-cased (keyword scan) */
	__u32 prev;          /* class (CLS_*) of the last character, and of the one before */
	__u32 prev2;
	/* features (PromptEstimate.Features) */
	__u32 words;
	__u32 second_blanks;
	__u32 punct_runs;
	__u32 digit_runs;
	__u32 letters;
	__u32 chars_q10; /* block weights of the non-ASCII characters seen (token_block_q10) */
	__u32 pos; /* phase 4: index of the next prompt byte to scan */
};

/*
 * Copy of the head being scored, plus slack so that 8-byte look-aheads at any index below
 * HEAD_WINDOW stay inside the value; and the scan state. Scratch, per CPU, not pinned.
 */
struct head_buf {
	__u8 bytes[HEAD_WINDOW + 16];
	struct scan_state scan;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct head_buf);
} head_scratch SEC(".maps");

/* bpf_loop's context must be on the stack: it only carries the scratch pointer. */
struct scan_ctx {
	struct head_buf *hb;
};

static __always_inline int load_bytes(void *ctx, bool xdp, __u32 off, void *dst, __u32 len)
{
	return xdp ? bpf_xdp_load_bytes(ctx, off, dst, len) : bpf_skb_load_bytes(ctx, off, dst, len);
}

static __always_inline bool is_dataplane_port(__u16 port)
{
#pragma unroll
	for (int i = 0; i < MAX_PORTS; i++) {
		if (settings.ports[i] != 0 && settings.ports[i] == port)
			return true;
	}
	return false;
}

/* The TCP header's part of parse_tcp(): ports, lengths, flags. tcp_space = bytes after the IP header. */
static __always_inline int parse_tcp_header(struct tcphdr *tcp, void *data_end, __u32 l3_off, __u32 tcp_space,
					    struct tcp_facts *f)
{
	if ((void *)(tcp + 1) > data_end || tcp_space < sizeof(*tcp))
		return -1;
	if (!is_dataplane_port(bpf_ntohs(tcp->dest)))
		return -1;
	__u32 tcp_hlen = tcp->doff * 4;
	if (tcp_hlen < sizeof(*tcp) || tcp_hlen > tcp_space)
		return -1;
	f->payload_off = l3_off + tcp_hlen;
	f->payload_len = tcp_space - tcp_hlen;
	f->flags = ((__u8 *)tcp)[13];
	f->seq = bpf_ntohl(tcp->seq);
	return 0;
}

/*
 * Ethernet / IPv4 or IPv6 / TCP to a data-plane port, unfragmented, lengths consistent; else -1.
 * Reads [data, data_end): the frame itself (direct packet access in XDP and TC). IPv6 with
 * extension headers between the fixed header and TCP is not classified.
 */
static __always_inline int parse_tcp(void *data, void *data_end, __u32 frame_len, struct tcp_facts *f)
{
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end)
			return -1;
		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_TCP)
			return -1;
		__u32 plen = bpf_ntohs(ip6->payload_len);
		if (ETH_HLEN + IPV6_HLEN + plen > frame_len)
			return -1;
		struct tcphdr *tcp = (void *)(ip6 + 1);
		if (parse_tcp_header(tcp, data_end, ETH_HLEN + IPV6_HLEN, plen, f) < 0)
			return -1;
		__builtin_memcpy(f->key6.src_ip, &ip6->saddr, 16);
		__builtin_memcpy(f->key6.dst_ip, &ip6->daddr, 16);
		f->key6.src_port = tcp->source;
		f->key6.dst_port = tcp->dest;
		f->ipv6 = 1;
		return 0;
	}
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return -1;
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return -1;
	if (ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_TCP ||
	    (ip->frag_off & bpf_htons(IP_FRAGMENT_MASK)))
		return -1;
	__u32 ip_hlen = ip->ihl * 4;
	__u32 tot_len = bpf_ntohs(ip->tot_len);
	if (tot_len < ip_hlen || ETH_HLEN + tot_len > frame_len)
		return -1;
	struct tcphdr *tcp = (void *)ip + ip_hlen;
	if (parse_tcp_header(tcp, data_end, ETH_HLEN + ip_hlen, tot_len - ip_hlen, f) < 0)
		return -1;
	f->key.src_ip = ip->saddr;
	f->key.dst_ip = ip->daddr;
	f->key.src_port = tcp->source;
	f->key.dst_port = tcp->dest;
	f->ipv6 = 0;
	return 0;
}

#define AT(hb, index) ((hb)->bytes[(index) & (HEAD_WINDOW - 1)])

/*
 * Eight bytes at any index as one 64-bit load. clang splits a load from a byte array into eight
 * byte loads and fourteen shifts and ors (the BPF target assumes no unaligned access), the
 * costliest part of a word-at-a-time scan; the instruction written out is one load. Unaligned
 * map value access is allowed on x86-64 (no BPF_F_STRICT_ALIGNMENT) and costs the JIT's load nothing.
 */
static __always_inline __u64 load64(const struct head_buf *hb, __u32 index)
{
	const __u8 *p = &hb->bytes[index & (HEAD_WINDOW - 1)];
	__u64 word;

	asm volatile("%0 = *(u64 *)(%1 + 0)" : "=r"(word) : "r"(p));
	return word;
}

/* True when some byte of word equals b (exact: the classic has-zero-byte test). */
static __always_inline bool has_byte(__u64 word, __u8 b)
{
	__u64 x = word ^ (ONES * b);
	return ((x - ONES) & ~x & HIGHS) != 0;
}

#define SCAN_LINE_BYTE(c)                                                   \
	do {                                                                \
		hash = (hash ^ (c)) * FNV_PRIME;                            \
		window = ((window << 8) | ((c) | 0x20)) & 0xffffff;         \
		if (window == KW_SUM)                                       \
			keywords |= KW_BIT_SUM;                             \
		else if (window == KW_REF)                                  \
			keywords |= KW_BIT_REF;                             \
		else if (window == KW_GEN)                                  \
			keywords |= KW_BIT_GEN;                             \
		else if (window == KW_ANA)                                  \
			keywords |= KW_BIT_ANA;                             \
	} while (0)

/* Phase 1, chunk k: the request line (hash and keywords), up to the first CR or LF. */
static long scan_line(__u64 k, void *arg)
{
	struct head_buf *hb = ((struct scan_ctx *)arg)->hb;
	struct scan_state *s = &hb->scan;
	__u32 base = ((__u32)k * CHUNK) & (HEAD_WINDOW - 1);
	__u32 len = s->len;
	__u32 hash = s->hash;
	__u32 window = s->window;
	__u32 keywords = s->keywords;
	long stop = 0;

	/* Fast path: a whole chunk inside the window and the hashed prefix, with no CR or LF. */
	__u64 word = load64(hb, base);
	if (base + CHUNK <= len && base + CHUNK <= REQUEST_LINE_MAX &&
	    !has_byte(word, '\r') && !has_byte(word, '\n')) {
#pragma unroll
		for (__u32 j = 0; j < CHUNK; j++) {
			__u8 c = word >> (j * 8);
			SCAN_LINE_BYTE(c);
		}
		goto out;
	}

#pragma unroll
	for (__u32 j = 0; j < CHUNK; j++) {
		__u32 i = base + j;
		if (i >= len) {
			stop = 1;
			break;
		}
		__u8 c = hb->bytes[i & (HEAD_WINDOW - 1)];
		if (c == '\r' || c == '\n') {
			s->line_end = i;
			stop = 1;
			break;
		}
		if (i < REQUEST_LINE_MAX) /* the line starts at 0: i is its length so far */
			SCAN_LINE_BYTE(c);
	}
out:
	s->hash = hash;
	s->window = window;
	s->keywords = keywords;
	return stop;
}

/* Phase 2 covers HEADER_WORDS words of 8 bytes per bpf_loop iteration. */
#define HEADER_WORDS 4
#define HEADER_STRIDE (HEADER_WORDS * CHUNK)

/*
 * Phase 2, one word: per LF, the end of the head ("\r\n\r\n") and a Content-Length header
 * starting the next line; digits of that header's value. 1 = stop scanning (at the end of the head:
 * the prompt scan needs it, so a Content-Length does not stop the scan).
 */
__noinline long scan_header_word(struct head_buf *hb, __u32 base)
{
	/* A global function: verified once on its own, not once per call site. */
	if (!hb)
		return 1;
	struct scan_state *s = &hb->scan;
	__u32 len = s->len;

	base &= HEAD_WINDOW - 1;
#pragma unroll
	for (__u32 j = 0; j < CHUNK; j++) {
		__u32 i = base + j;
		if (i >= len)
			return 1;
		__u8 c = AT(hb, i);

		if (s->cl_state != CL_NONE && i >= s->value_from) {
			if (c >= '0' && c <= '9') {
				__u64 v = s->cl_state == CL_DIGITS ? s->cl_value * 10 + (c - '0') : c - '0';
				s->cl_value = v > CONTENT_LENGTH_MAX ? CONTENT_LENGTH_MAX : v;
				s->cl_state = CL_DIGITS;
			} else if (s->cl_state == CL_DIGITS) {
				s->cl_found = 1; /* the first complete Content-Length decides */
				s->cl_state = CL_NONE;
			} else if (c != ' ' && c != '\t') {
				s->cl_state = CL_NONE; /* no digits: the header is ignored */
			}
		}
		if (c != '\n')
			continue;
		/* LF at i: "\r\n\r\n" is CR, this LF, CR, LF */
		if (i + 2 < len && AT(hb, i - 1) == '\r' && AT(hb, i + 1) == '\r' && AT(hb, i + 2) == '\n') {
			s->head_end = i + 3;
			return 1;
		}
		if (s->cl_state == CL_NONE && !s->cl_found && i + CL_NAME_LEN < len &&
		    (load64(hb, i + 1) | LOWER) == CL_NAME_LO &&
		    ((load64(hb, i + 9) | LOWER) & 0x00ffffffffffffffull) == CL_NAME_HI) {
			s->cl_state = CL_VALUE;
			s->value_from = i + 1 + CL_NAME_LEN;
		}
	}
	return 0;
}

/* Phase 2, stride k from the end of the request line: words without an LF, outside a value, are skipped. */
static long scan_headers(__u64 k, void *arg)
{
	struct head_buf *hb = ((struct scan_ctx *)arg)->hb;
	struct scan_state *s = &hb->scan;
	__u32 start = s->line_end + (__u32)k * HEADER_STRIDE;
	__u32 len = s->len;

#pragma unroll
	for (__u32 w = 0; w < HEADER_WORDS; w++) {
		__u32 base = (start + w * CHUNK) & (HEAD_WINDOW - 1);
		if (start + w * CHUNK >= len)
			return 1;
		if (s->cl_state == CL_NONE && !has_byte(load64(hb, base), '\n'))
			continue;
		if (scan_header_word(hb, base))
			return 1;
	}
	return 0;
}

/* 3 to 7 upper-case letters then a space: the start of a request head. */
static __always_inline bool starts_request(const __u8 *b, __u32 len)
{
#pragma unroll
	for (__u32 i = 0; i < 8; i++) {
		if (i >= len)
			return false;
		if (b[i] == ' ')
			return i >= 3;
		if (b[i] < 'A' || b[i] > 'Z')
			return false;
	}
	return false;
}

/* Phase 3 looks at KEY_WORDS words of 8 bytes per bpf_loop iteration (a callback costs ~10 ns). */
#define KEY_WORDS 4
#define KEY_STRIDE (KEY_WORDS * CHUNK)

/* Phase 3, one word with a '"' at base..base+7: a key starting there sets key_end; 1 = stop. */
static __always_inline long find_key_in_word(struct head_buf *hb, struct scan_state *s, __u32 base, __u32 len)
{
#pragma unroll
	for (__u32 j = 0; j < CHUNK; j++) {
		__u32 i = base + j;
		if (i + 8 > len)
			return 1;
		if (AT(hb, i) != '"')
			continue;
		__u64 word = load64(hb, i);
		if (word == PROMPT_KEY) {
			s->key_end = i + 8;
			return 1;
		}
		if (word == CONTENT_KEY && i + 9 <= len && AT(hb, i + 8) == '"') {
			s->key_end = i + 9;
			return 1;
		}
		if ((word & TEXT_KEY_MASK) == TEXT_KEY) { /* a content part's text */
			s->key_end = i + 6;
			return 1;
		}
		if (word == SYSTEM_KEY) {
			s->key_end = i + 8;
			return 1;
		}
		if ((word & INPUT_KEY_MASK) == INPUT_KEY) {
			s->key_end = i + 7;
			return 1;
		}
		if (word == INSTRUC_KEY && i + 14 <= len && (load64(hb, i + 8) & TEXT_KEY_MASK) == TIONS_KEY) {
			s->key_end = i + 14;
			return 1;
		}
	}
	return 0;
}

/*
 * Phase 3, one stride from start: the next prompt key, "prompt", "content", "text", "system",
 * "input" or "instructions" (quotes included), wholly inside the window. Sets key_end to the index just past the key; 1 = stop (a
 * key, or the window's end). Words without a '"' are skipped (bytes past len in such a load are
 * stale, but a key needs i + 8 <= len).
 */
static __always_inline long find_key_in_stride(struct head_buf *hb, struct scan_state *s, __u32 start, __u32 len)
{
#pragma unroll
	for (__u32 w = 0; w < KEY_WORDS; w++) {
		__u32 base = start + w * CHUNK;
		if (base >= len)
			return 1;
		if (has_byte(load64(hb, base), '"') && find_key_in_word(hb, s, base, len))
			return 1;
	}
	return 0;
}

static __always_inline bool is_json_space(__u8 c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * From just past the key: blanks, ':', blanks, '"'. Returns the index just past that quote, or 0
 * when the value is not a string opening within PROMPT_COLON_MAX bytes (content parts, null, ...).
 */
static __always_inline __u32 prompt_string_start(const struct head_buf *hb, __u32 from, __u32 len)
{
	bool colon = false;

#pragma unroll
	for (__u32 j = 0; j < PROMPT_COLON_MAX; j++) {
		__u32 i = from + j;
		if (i >= len)
			return 0;
		__u8 c = AT(hb, i);
		if (is_json_space(c))
			continue;
		if (c == ':' && !colon) {
			colon = true;
			continue;
		}
		return colon && c == '"' ? i + 1 : 0;
	}
	return 0;
}

/* Per byte of a word, bit 7 set where the byte is in [lo, hi] (7-bit bytes only: mask the result). */
static __always_inline __u64 in_range(__u64 low7, __u8 lo, __u8 hi)
{
	return (low7 + ONES * (0x80 - lo)) & ~(low7 + ONES * (0x80 - hi - 1)) & HIGHS;
}

/* Per byte, bit 7 set where the byte equals b (exact, no false positives). */
static __always_inline __u64 eq_mask(__u64 word, __u8 b)
{
	__u64 x = word ^ (ONES * b);
	return ~(((x & ~HIGHS) + ~HIGHS) | x) & HIGHS;
}

static __always_inline __u64 carry_if(bool b)
{
	return b ? 0x80 : 0;
}

/* The class of byte j of a word from the class masks (blank, digit, letter; else punctuation). */
static __always_inline __u32 class_at(__u64 letters, __u64 digits, __u64 blanks, __u32 j)
{
	__u64 bit = 0x80ull << (j * 8);

	return letters & bit ? CLS_LETTER : digits & bit ? CLS_DIGIT : blanks & bit ? CLS_BLANK : CLS_PUNCT;
}

/* One character of class cls after the ones in s->prev, s->prev2 (PromptEstimate.Features.unit). */
static __always_inline void count_unit(struct scan_state *s, __u32 cls)
{
	if (cls == CLS_LETTER) {
		s->letters++;
		if (s->prev != CLS_LETTER)
			s->words++;
	} else if (cls == CLS_DIGIT) {
		if (s->prev != CLS_DIGIT)
			s->digit_runs++;
	} else if (cls == CLS_PUNCT) {
		if (s->prev != CLS_PUNCT)
			s->punct_runs++;
	} else if (cls == CLS_BLANK) {
		if (s->prev == CLS_BLANK && s->prev2 != CLS_BLANK)
			s->second_blanks++;
	}
	s->prev2 = s->prev;
	s->prev = cls;
}

/* A token_block_q10 weight; the mask only shows the verifier what every caller already bounds. */
static __always_inline __u32 block_q10(__u32 block)
{
	return block < TOKEN_BLOCKS ? token_block_q10[block & 0x7ff] : 0;
}

/* A hex digit's value, anything else 0 (PromptEstimate.Features.hexValue). */
static __always_inline __u32 hex_value(__u32 c)
{
	__u32 lower = c | 0x20;

	return c >= '0' && c <= '9' ? c - '0' : lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : 0;
}

/*
 * One raw byte of the prompt string, outside the closing quote (PromptEstimate.Features.add): a
 * non-ASCII character's block weight comes at its lead byte (2 or 4 bytes) or its second byte (3);
 * a backslash-u escape's at its third hex digit.
 */
static __always_inline void count_byte(struct scan_state *s, __u8 c)
{
	__u32 escape = s->escape;
	__u32 lead = s->lead;

	s->lead = 0;
	if (escape == ESCAPE_STARTED) {
		if (c == 'u') {
			count_unit(s, CLS_LETTER);
			s->escape = 4;
		} else {
			count_unit(s, c == 'n' || c == 'r' ? CLS_BREAK : c == 't' ? CLS_BLANK : CLS_PUNCT);
			s->escape = 0;
		}
	} else if (escape == 4) {
		s->hex_a = c;
		s->escape = 3;
	} else if (escape == 3) {
		s->hex_b = c;
		s->letters += s->hex_a == '0' && c >= '0' && c <= '7' ? 1 : 2; /* below U+0800: two UTF-8 bytes */
		s->escape = 2;
	} else if (escape == 2) {
		s->chars_q10 += block_q10(hex_value(s->hex_a) << 6 | hex_value(s->hex_b) << 2 | hex_value(c) >> 2);
		s->escape = 1;
	} else if (escape) {
		s->escape = escape - 1;
	} else if (c == '\\') {
		s->escape = ESCAPE_STARTED;
	} else if (c >= 0x80) {
		count_unit(s, CLS_LETTER);
		if (c >= 0xf0)
			s->chars_q10 += block_q10(TOKEN_BLOCK_SUPPLEMENTARY);
		else if (c >= 0xe0)
			s->lead = c;
		else if (c >= 0xc0)
			s->chars_q10 += block_q10(c & 0x1f);
		else if (lead)
			s->chars_q10 += block_q10((lead & 0x0f) << 6 | (c & 0x3f));
	} else {
		__u8 lower = c | 0x20;
		count_unit(s, lower >= 'a' && lower <= 'z' ? CLS_LETTER :
			      c >= '0' && c <= '9' ? CLS_DIGIT : c == ' ' ? CLS_BLANK : CLS_PUNCT);
	}
}

/*
 * The keywords (KW_BIT_*) whose window of three bytes ends in one of the first `lanes` bytes of
 * word (1..8), given in window the lower-cased bytes before it as the byte scan keeps them
 * (latest in the low byte). Same window as the byte scan: raw bytes, each or-ed with 0x20.
 */
static __always_inline __u32 word_keywords(__u64 word, __u32 window, __u32 lanes)
{
	__u64 low = word | LOWER;
	__u64 prev1 = window & 0xff;
	__u64 prev2 = (window >> 8) & 0xff;
	__u64 back1 = (low << 8) | prev1;                 /* byte j: the byte before byte j */
	__u64 back2 = (low << 16) | (prev1 << 8) | prev2; /* byte j: the one before that */
	__u64 in = lanes >= CHUNK ? HIGHS : HIGHS & ((1ull << (lanes * 8)) - 1);
	__u32 found = 0;

	if (eq_mask(back2, 's') & eq_mask(back1, 'u') & eq_mask(low, 'm') & in)
		found |= KW_BIT_SUM;
	if (eq_mask(back2, 'r') & eq_mask(back1, 'e') & eq_mask(low, 'f') & in)
		found |= KW_BIT_REF;
	if (eq_mask(back2, 'g') & eq_mask(back1, 'e') & eq_mask(low, 'n') & in)
		found |= KW_BIT_GEN;
	if (eq_mask(back2, 'a') & eq_mask(back1, 'n') & eq_mask(low, 'a') & in)
		found |= KW_BIT_ANA;
	return found;
}

/* The keyword window after a whole word: its last three bytes, lower-cased, the latest lowest. */
static __always_inline __u32 word_window(__u64 word)
{
	__u64 low = word | LOWER;

	return (((low >> 40) & 0xff) << 16) | (((low >> 48) & 0xff) << 8) | (low >> 56);
}

/* Phase 4's fast path covers up to PROMPT_WORDS words of 8 bytes per bpf_loop iteration. */
#define PROMPT_WORDS 2

/*
 * The features of fast words (ASCII only, no '"', no '\\', no escape pending) as counted in registers: a run
 * starts where a class bit is set and the previous byte's is not. carry_* hold the previous byte's
 * class bits (bit 7 of byte 0, ready to or into a mask shifted by one byte); blank2 the one before.
 * Counts gather as bit-7 flags per byte lane (at most PROMPT_WORDS per lane) and are added up once.
 */
struct word_counts {
	__u64 carry_letter, carry_digit, carry_punct, carry_blank, carry_blank2;
	__u64 words, digit_runs, punct_runs, second_blanks, letters;
	__u64 last_letters, last_digits, last_blanks;
};

static __always_inline void count_word(struct word_counts *c, __u64 word)
{
	__u64 letters = in_range((word | LOWER) & ~HIGHS, 'a', 'z') & ~word;
	__u64 digits = in_range(word & ~HIGHS, '0', '9') & ~word;
	__u64 blanks = eq_mask(word, ' ');
	__u64 punct = HIGHS & ~(letters | digits | blanks);

	c->words += (letters & ~((letters << 8) | c->carry_letter)) >> 7;
	c->digit_runs += (digits & ~((digits << 8) | c->carry_digit)) >> 7;
	c->punct_runs += (punct & ~((punct << 8) | c->carry_punct)) >> 7;
	c->second_blanks += (blanks & ((blanks << 8) | c->carry_blank) &
			     ~((blanks << 16) | c->carry_blank2 | (c->carry_blank << 8))) >> 7;
	c->letters += letters >> 7;
	c->carry_letter = letters >> 56;
	c->carry_digit = digits >> 56;
	c->carry_punct = punct >> 56;
	c->carry_blank = blanks >> 56;
	c->carry_blank2 = (blanks >> 48) & 0x80;
	c->last_letters = letters;
	c->last_digits = digits;
	c->last_blanks = blanks;
}

/* The sum of a lane counter's eight bytes: each holds at most PROMPT_WORDS, so the sum fits the top byte. */
static __always_inline __u32 lane_sum(__u64 lanes)
{
	return (lanes * ONES) >> 56;
}

/*
 * Phase 4's fast path from pos: up to PROMPT_WORDS fast words wholly inside the window, their
 * keywords too while they lie in the first KEYWORD_SCAN_BYTES. Returns the bytes counted (0 when
 * the word at pos is not a fast one).
 */
static __always_inline __u32 scan_fast_words(struct scan_state *s, const struct head_buf *hb, __u32 pos, __u32 len)
{
	struct word_counts c = {
		.carry_letter = carry_if(s->prev == CLS_LETTER),
		.carry_digit = carry_if(s->prev == CLS_DIGIT),
		.carry_punct = carry_if(s->prev == CLS_PUNCT),
		.carry_blank = carry_if(s->prev == CLS_BLANK),
		.carry_blank2 = carry_if(s->prev2 == CLS_BLANK),
	};
	__u32 kw_end = s->prompt_from + KEYWORD_SCAN_BYTES;
	__u32 window = s->kw_window;
	__u32 keywords = 0;
	__u32 n = 0;

#pragma unroll
	for (__u32 w = 0; w < PROMPT_WORDS; w++) {
		__u32 at = pos + w * CHUNK;
		if (at + CHUNK > len)
			break;
		__u64 word = load64(hb, at);
		/* Non-ASCII bytes take the byte path: their weight is a table lookup per character. */
		if ((word & HIGHS) || has_byte(word, '"') || has_byte(word, '\\'))
			break;
		count_word(&c, word);
		if (at < kw_end) {
			keywords |= word_keywords(word, window, kw_end - at);
			window = word_window(word);
		}
		n += CHUNK;
	}
	if (!n)
		return 0;
	s->keywords |= keywords;
	s->kw_window = window;
	s->words += lane_sum(c.words);
	s->digit_runs += lane_sum(c.digit_runs);
	s->punct_runs += lane_sum(c.punct_runs);
	s->second_blanks += lane_sum(c.second_blanks);
	s->letters += lane_sum(c.letters);
	s->lead = 0; /* a 3-byte lead followed by ASCII: malformed, the character weighs nothing */
	s->prev2 = class_at(c.last_letters, c.last_digits, c.last_blanks, 6);
	s->prev = class_at(c.last_letters, c.last_digits, c.last_blanks, 7);
	s->raw += n;
	return n;
}

/*
 * Phase 4, one step from s->pos: the prompt string's features up to the closing quote (an escape
 * is one character), and keywords over its first KEYWORD_SCAN_BYTES bytes. Runs of fast words go
 * PROMPT_WORDS at a time (keywords matched a word at a time); anything else one byte at a time for CHUNK bytes. Every
 * step moves pos by CHUNK or more, so (len - start) / CHUNK steps from a string's start reach the window's end.
 */
static __always_inline long scan_string_step(struct head_buf *hb)
{
	struct scan_state *s = &hb->scan;
	__u32 base = s->pos;
	__u32 len = s->len;

	if (s->escape == 0) {
		__u32 n = scan_fast_words(s, hb, base, len);
		if (n) {
			s->pos = base + n;
			return 0;
		}
	}

#pragma unroll
	for (__u32 j = 0; j < CHUNK; j++) {
		__u32 i = base + j;
		if (i >= len)
			return 1;
		__u8 c = AT(hb, i);
		if (s->escape == 0 && c == '"') {
			s->string_end = i;
			return 1;
		}
		s->raw++;
		if (i - s->prompt_from < KEYWORD_SCAN_BYTES) {
			__u32 window = ((s->kw_window << 8) | (c | 0x20)) & 0xffffff;
			s->kw_window = window;
			if (window == KW_SUM)
				s->keywords |= KW_BIT_SUM;
			else if (window == KW_REF)
				s->keywords |= KW_BIT_REF;
			else if (window == KW_GEN)
				s->keywords |= KW_BIT_GEN;
			else if (window == KW_ANA)
				s->keywords |= KW_BIT_ANA;
		}
		count_byte(s, c);
	}
	s->pos = base + CHUNK;
	return 0;
}

/*
 * Phases 3 and 4, one step: for each of the first PROMPT_STRINGS prompt keys of the body, in
 * order, find the key after the previous string (a stride at a time), then scan its string (a key
 * whose value is not a string, such as a list of content parts, is passed over; the parts' "text"
 * keys are prompt keys too). A string running into the window's end is the last. One bpf_loop
 * drives both phases so that each is verified once. Every step moves key_pos by KEY_STRIDE or pos
 * by CHUNK, or ends a key or a string (at most 2 per key).
 */
static long scan_body(__u64 k, void *arg)
{
	struct head_buf *hb = ((struct scan_ctx *)arg)->hb;
	struct scan_state *s = &hb->scan;
	__u32 len = s->len;

	if (s->in_string) {
		if (!scan_string_step(hb))
			return 0;
		__u32 string_end = s->string_end;
		if (!string_end || string_end >= len) {
			s->scan_end = len; /* ran into the window's end */
			return 1;
		}
		s->scan_end = string_end + 1;
		s->key_pos = string_end + 1;
		s->in_string = 0;
		return ++s->keys >= PROMPT_STRINGS;
	}

	__u32 start = s->key_pos;
	if (start >= len)
		return 1;
	s->key_pos = start + KEY_STRIDE;
	s->key_end = 0;
	if (!find_key_in_stride(hb, s, start, len))
		return 0;
	__u32 key_end = s->key_end;
	if (!key_end || key_end > len)
		return 1; /* the window ended without another key */
	__u32 from = prompt_string_start(hb, key_end, len);
	if (!from) {
		s->key_pos = key_end;
		return ++s->keys >= PROMPT_STRINGS;
	}
	if (!s->prompt_from) {
		s->prompt_from = from;
		/* "prompt" (completions, tasks) and "input" (Responses) strings are top-level: little follows. */
		s->flat = (key_end >= 8 && load64(hb, key_end - 8) == PROMPT_KEY) ||
			  (key_end >= 7 && (load64(hb, key_end - 7) & INPUT_KEY_MASK) == INPUT_KEY);
	}
	/* The first character starts a run, as after the line break the guests join messages with. */
	s->prev = CLS_BREAK;
	s->prev2 = CLS_BREAK;
	s->lead = 0;
	s->kw_window = 0;
	s->string_end = 0;
	s->pos = from;
	s->in_string = 1;
	if (from >= len) {
		s->scan_end = len;
		return 1;
	}
	return 0;
}

/*
 * The prompt's tokens at unit gain, 1/1024 tokens: the features seen, plus the body bytes after
 * the scan beyond an allowance (more messages, or the part past the window) at the rate seen:
 * TRAILER_ALLOWANCE after a closing quote; inside a string the window cut, FLAT_TRAILER when the
 * first string is a "prompt" or "input" key's, else PROMPT_ENVELOPE less the envelope before the first string. Without a prompt string, the body less ENVELOPE_GUESS at
 * TOKEN_PER_BYTE_Q10. body_from: the body's first byte in the buffer; s->len: the window's end.
 */
static __always_inline __u64 prompt_tokens_q10(const struct scan_state *s, __u32 body_from, __u64 body_len,
					       bool *blind)
{
	__u64 q10;

	if (!s->prompt_from) {
		__u64 bytes = body_len > ENVELOPE_GUESS ? body_len - ENVELOPE_GUESS : 0;
		if (bytes > PROMPT_EXTRA_MAX)
			bytes = PROMPT_EXTRA_MAX;
		*blind = body_len > 0;
		return bytes * TOKEN_PER_BYTE_Q10;
	}
	__u32 scan_end = s->scan_end;
	__u64 consumed = scan_end > body_from ? scan_end - body_from : 0;
	__u32 before = s->prompt_from - body_from;
	__u64 allowance = scan_end != s->len ? TRAILER_ALLOWANCE
			  : s->flat		  ? FLAT_TRAILER
			  : before < PROMPT_ENVELOPE ? PROMPT_ENVELOPE - before : 0;
	__u64 extra = body_len > consumed + allowance ? body_len - consumed - allowance : 0;
	__u64 seen = (__u64)TOKEN_PER_WORD_Q10 * s->words + (__u64)TOKEN_PER_BLANK_RUN_Q10 * s->second_blanks +
		     (__u64)TOKEN_PER_PUNCT_RUN_Q10 * s->punct_runs + (__u64)TOKEN_PER_DIGIT_RUN_Q10 * s->digit_runs +
		     (__u64)TOKEN_PER_LETTER_Q10 * s->letters + s->chars_q10;

	if (extra > PROMPT_EXTRA_MAX)
		extra = PROMPT_EXTRA_MAX;
	q10 = s->raw ? seen + extra * seen / s->raw : extra * TOKEN_PER_BYTE_Q10;
	*blind = false;
	return q10 > PROMPT_Q10_MAX ? PROMPT_Q10_MAX : q10;
}

/* A stored gain as readers apply it: 0 (never written) is one, anything above TOKEN_GAIN_MAX is the max. */
static __always_inline __u32 effective_gain(__u32 gain)
{
	return gain == 0 ? TOKEN_GAIN_ONE : gain > TOKEN_GAIN_MAX ? TOKEN_GAIN_MAX : gain;
}

static __always_inline __u32 token_gain(void)
{
	__u32 zero = 0;
	struct token_model *m = bpf_map_lookup_elem(&token_model, &zero);

	return effective_gain(m ? m->gain : 0);
}

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

/*
 * Phases 3 and 4 over the body's first bytes in the buffer, from body_from to at most BODY_WINDOW
 * bytes on (s->len becomes that end), then the score. The scan state holds the request line's
 * keywords. Blind: no prompt string in a body that is not empty, or the buffer held fewer body
 * bytes than min(body_len, BODY_WINDOW) (the segment ended first).
 * A global function: verified once on its own, not once per caller state. Inlined after both the
 * head path and the pending-body path, its bpf_loop callbacks passed the verifier's 1M-insn limit.
 */
__noinline int score_body(struct head_buf *hb, struct verdict *v)
{
	if (!hb || !v)
		return -1;
	struct scan_state *s = &hb->scan;
	struct scan_ctx sc = { .hb = hb };
	__u32 body_from = v->body_from;
	__u64 body_len = v->body_len;
	__u32 len = s->len;

	if (len > body_from + BODY_WINDOW)
		len = body_from + BODY_WINDOW;
	s->len = len;
	if (body_from < len) {
		s->key_pos = body_from;
		bpf_loop((len - body_from) / CHUNK + 2 * PROMPT_STRINGS + 2, scan_body, &sc, 0);
	}
	bool blind = false;
	__u64 q10 = prompt_tokens_q10(s, body_from, body_len, &blind);
	__u64 want = body_len < BODY_WINDOW ? body_len : BODY_WINDOW;
	if (len - body_from < want)
		blind = true;
	__u64 score = (q10 * token_gain() + (1u << 19)) >> 20;
	if (s->keywords & KW_BIT_SUM)
		score += settings.weight_sum;
	if (s->keywords & KW_BIT_REF)
		score += settings.weight_ref;
	if (s->keywords & KW_BIT_GEN)
		score += settings.weight_gen;
	if (s->keywords & KW_BIT_ANA)
		score += settings.weight_ana;
	if (score > 255)
		score = 255;

	v->score = score;
	v->tier = tier_for(score);
	v->flags = blind ? VERDICT_F_BLIND : 0;
	return 0;
}

/* A fresh scan state over len bytes in the buffer. */
static __always_inline struct scan_state *start_scan(struct head_buf *hb, __u32 len)
{
	struct scan_state *s = &hb->scan;

	__builtin_memset(s, 0, sizeof(*s));
	s->prev = CLS_BREAK; /* the first character starts its run */
	s->prev2 = CLS_BREAK;
	s->len = len;
	s->line_end = len;
	s->hash = FNV_OFFSET;
	return s;
}

/*
 * Read the request head that starts this segment's payload (score_body scores its body); -1 when
 * it does not start one.
 * The rules (RequestHeadParser's javadoc states the same, and ParityTest holds them equal):
 *   window          the first HEAD_WINDOW payload bytes; nothing after them is read
 *   request head    3 to 7 bytes 'A'..'Z' then a space (a method token); at least 4 bytes
 *   request line    bytes before the first CR or LF (the whole window when there is none);
 *                   hash and keyword scan over its first REQUEST_LINE_MAX bytes
 *   Content-Length  a line starting right after an LF with "content-length:" (byte | 0x20),
 *                   optional spaces/tabs, decimal digits ended by a non-digit; first one wins;
 *                   no digits, or digits running to the window's end: ignored; saturates at 2^40
 *   end of head     the first "\r\n\r\n"
 *   body length     Content-Length, else payload bytes after the end of head in this segment
 *                   (payload length from the IPv4 header), else 0
 *   prompt          the body's first BODY_WINDOW bytes in the window (score_body)
 * A head that ends its segment and announces a body by Content-Length awaits that body: its
 * verdict is stored blind, and the flow's next segment is scored by read_pending_body.
 */
static __always_inline int read_head(void *ctx, bool xdp, const struct tcp_facts *f, struct head_buf *hb,
				     struct verdict *v)
{
	__u32 len = f->payload_len;
	if (len > HEAD_WINDOW)
		len = HEAD_WINDOW;
	if (len < 4)
		return -1;
	if (load_bytes(ctx, xdp, f->payload_off, hb->bytes, len) < 0)
		return -1;
	if (!starts_request(hb->bytes, len))
		return -1;

	struct scan_state *s = start_scan(hb, len);
	struct scan_ctx sc = { .hb = hb };
	bpf_loop((len + CHUNK - 1) / CHUNK, scan_line, &sc, 0);
	__u32 line_end = s->line_end;
	if (line_end < len)
		bpf_loop((len - line_end + HEADER_STRIDE - 1) / HEADER_STRIDE, scan_headers, &sc, 0);

	__u64 body_len = 0;
	if (s->cl_found)
		body_len = s->cl_value;
	else if (s->head_end)
		body_len = f->payload_len - s->head_end;

	__u32 head_end = s->head_end;
	v->awaits = s->cl_found && body_len > 0 && head_end && head_end == f->payload_len;
	v->line_keywords = s->keywords;
	v->body_from = head_end ? head_end : len; /* no end of head in the window: no body to scan */
	v->body_len = body_len;
	v->check = verdict_check(s->hash, body_len);
	return 0;
}

/* The flow as pending_bodies holds it (IPv6 as it is, IPv4 as ::ffff:a.b.c.d), and its entry. */
static __always_inline struct pending_body *pending_entry(const struct tcp_facts *f, struct flow_key6 *k)
{
	__u32 index;

	if (f->ipv6) {
		*k = f->key6;
		index = slot_index6(&f->key6);
	} else {
		__builtin_memset(k, 0, sizeof(*k));
		k->src_ip[2] = bpf_htonl(0xffff);
		k->src_ip[3] = f->key.src_ip;
		k->dst_ip[2] = bpf_htonl(0xffff);
		k->dst_ip[3] = f->key.dst_ip;
		k->src_port = f->key.src_port;
		k->dst_port = f->key.dst_port;
		index = slot_index4(&f->key);
	}
	index &= PENDING_BODIES - 1;
	return bpf_map_lookup_elem(&pending_bodies, &index);
}

/*
 * The segment after a head that awaits its body: -1 unless the flow has such a head and this
 * segment starts exactly where the head ended (then it is the body's start). The entry is taken
 * either way, so a segment out of order leaves the request blind rather than wrongly scored.
 */
static __always_inline int read_pending_body(void *ctx, bool xdp, const struct tcp_facts *f, struct head_buf *hb,
					     struct verdict *v)
{
	struct flow_key6 key;
	struct pending_body *p = pending_entry(f, &key);
	if (!p || p->body_len == 0 || !same_key6(&p->key, &key))
		return -1;
	__u64 body_len = p->body_len;
	__u32 next_seq = p->next_seq;
	__u32 check = p->check;
	__u32 line_keywords = p->line_keywords;
	p->body_len = 0;
	if (f->seq != next_seq)
		return -1;

	__u32 len = f->payload_len;
	if (len > BODY_WINDOW)
		len = BODY_WINDOW;
	if (len < 1 || load_bytes(ctx, xdp, f->payload_off, hb->bytes, len) < 0)
		return -1;
	struct scan_state *s = start_scan(hb, len);
	s->keywords = line_keywords;
	v->awaits = 0;
	v->body_from = 0;
	v->body_len = body_len;
	v->check = check;
	return 0;
}

static __always_inline void await_body(const struct tcp_facts *f, const struct verdict *v)
{
	struct flow_key6 key;
	struct pending_body *p = pending_entry(f, &key);
	if (!p)
		return;
	p->body_len = 0; /* taken while it is rewritten */
	p->key = key;
	p->next_seq = f->seq + f->payload_len;
	p->check = v->check;
	p->line_keywords = v->line_keywords;
	p->body_len = v->body_len; /* last: the entry is live again */
}

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
	if (read_head(ctx, true, &f, hb, &v) < 0 && read_pending_body(ctx, true, &f, hb, &v) < 0)
		return XDP_PASS;
	if (score_body(hb, &v) < 0)
		return XDP_PASS;

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
static __always_inline int tc_classify(struct __sk_buff *skb)
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
	tc_stage_enter(true);
	int rc = tc_classify(skb);
	tc_chain_exit();
	return rc;
}

SEC("tc")
int nexus_tc_policy(struct __sk_buff *skb)
{
	tc_stage_enter(false);
	int rc = tc_policy(skb);
	tc_chain_exit();
	return rc;
}

SEC("tc")
int nexus_tc_mark(struct __sk_buff *skb)
{
	tc_stage_enter(false);
	int rc = tc_mark(skb);
	tc_chain_exit();
	return rc;
}

/* ======================================================================================
 * Adaptive recalibration: a bpf_timer drains latency_ringbuf every period and runs two stages
 * on what it drained, each on its own settings, either or both acting in one period:
 *   - latency: P95 per tier; lowers score_thresholds.nano_max when nano's P95 is over its target
 *     (and raises it back after good periods);
 *   - calibration: refits token_model.gain from the samples that carry the guest's true count.
 *
 *   nexus_adapt_arm (SEC("syscall"), run once by the loader with BPF_PROG_TEST_RUN, and again
 *   after every reload or period change): init (EBUSY when already there) + set_callback +
 *   start the one timer in adaptive_timer[0]. The timer lives in a pinned map value, so it keeps
 *   firing after the loader exits; re-arming swaps the callback's program in place, so there is
 *   only ever one timer, running the newest program.
 * ====================================================================================== */

#define CLOCK_MONOTONIC 1
#define EBUSY 16
#define EAGAIN 11
#define NS_PER_MS 1000000ull

/* Latency samples from the data plane (user -> kernel); drained by the timer callback. */
struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, 16 * 1024 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} latency_ringbuf SEC(".maps");

/* One event per token_model.gain change (kernel -> user). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} calibration_events SEC(".maps");

/* One event per nano_max change (kernel -> user): read by RingConsumer.recalibrations. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} recalibration_events SEC(".maps");

/* Run-time settings of the loop (key 0), written by the control plane, read every period. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct adaptive_settings);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} adaptive_settings SEC(".maps");

/* Counters and last observations of the loop (key 0), for GET /adaptive. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct adaptive_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} adaptive_stats SEC(".maps");

struct adaptive_timer_value {
	struct bpf_timer timer;
	__u64 armed;  /* times nexus_adapt_arm ran (one per load, reload or period change) */
};

/* The one timer (key 0). Pinned: the kernel cancels it when the map's last user reference goes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct adaptive_timer_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} adaptive_timer SEC(".maps");

struct latency_histograms {
	__u32 buckets[TIER_COUNT][LAT_BUCKETS];
	__u32 samples[TIER_COUNT];
	/* Calibration sums: samples with a true count and an estimate, and the two summed. */
	__u32 cal_samples;
	__u64 cal_true_tokens;
	__u64 cal_estimate_q4;
};

/* This period's histograms and calibration sums (scratch; only the timer callback touches it, and it never overlaps itself). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct latency_histograms);
} latency_histograms SEC(".maps");

/* Bucket of a latency: exact below 2^LAT_SUB_BITS, then 2^LAT_SUB_BITS sub-buckets per octave. */
static __always_inline __u32 latency_bucket(__u32 us)
{
	const __u32 sub = 1u << LAT_SUB_BITS;
	__u32 m;

	if (us < sub)
		return us;
	m = timing_msb64(us); /* nexus_timing.bpf.h */
	return ((m - LAT_SUB_BITS + 1) << LAT_SUB_BITS) + ((us >> (m - LAT_SUB_BITS)) & (sub - 1));
}

/* Smallest latency that falls in a bucket (the inverse of latency_bucket). */
static __always_inline __u32 bucket_floor_us(__u32 b)
{
	const __u32 sub = 1u << LAT_SUB_BITS;
	__u32 octave = b >> LAT_SUB_BITS;

	if (octave == 0)
		return b;
	return (sub + (b & (sub - 1))) << (octave - 1);
}

/* Counts one sample (noinline: keeps struct latency_event in the object's BTF for BtfLayoutTest). */
static __noinline int count_sample(const struct latency_event *ev, struct latency_histograms *h)
{
	__u32 tier, b;

	if (!ev || !h)
		return 0;
	tier = ev->tier;
	if (tier >= TIER_COUNT)
		return 0;
	b = latency_bucket(ev->latency_us);
	if (b >= LAT_BUCKETS)
		b = LAT_BUCKETS - 1;
	h->buckets[tier][b]++;
	h->samples[tier]++;
	if (ev->true_tokens && ev->estimate_q4) {
		h->cal_samples++;
		h->cal_true_tokens += ev->true_tokens;
		h->cal_estimate_q4 += ev->estimate_q4;
	}
	return 0;
}

/* bpf_user_ringbuf_drain's context: on the stack (DESIGN: not in a map value). */
struct drain_ctx {
	__u32 limit;
	__u32 drained;
};

static long drain_one(struct bpf_dynptr *dynptr, void *arg)
{
	struct drain_ctx *dc = arg;
	struct latency_event ev;
	__u32 key = 0;
	struct latency_histograms *h;

	if (bpf_dynptr_read(&ev, sizeof(ev), dynptr, 0, 0))
		return 0; /* short sample: skip it */
	h = bpf_map_lookup_elem(&latency_histograms, &key);
	count_sample(&ev, h);
	dc->drained++;
	return dc->drained >= dc->limit ? 1 : 0;
}

struct p95_ctx {
	struct latency_histograms *h;
	__u32 tier;
	__u32 rank;   /* the sample count at which P95 is reached */
	__u32 seen;
	__u32 result; /* bucket */
};

static long find_p95(__u64 i, void *arg)
{
	struct p95_ctx *pc = arg;
	__u32 b = i & (LAT_BUCKETS - 1);
	__u32 t = pc->tier;

	if (t >= TIER_COUNT || !pc->h)
		return 1;
	pc->seen += pc->h->buckets[t][b];
	pc->h->buckets[t][b] = 0; /* reset for the next period as we go */
	if (pc->seen >= pc->rank && pc->result == LAT_BUCKETS) {
		pc->result = b;
	}
	return 0;
}

/* P95 of one tier's period in microseconds (bucket floor), 0 without samples; resets the tier. */
static __always_inline __u32 p95_and_reset(struct latency_histograms *h, __u32 tier)
{
	struct p95_ctx pc = { .h = h, .tier = tier, .result = LAT_BUCKETS };
	__u32 n;

	if (tier >= TIER_COUNT)
		return 0;
	n = h->samples[tier];
	h->samples[tier] = 0;
	if (n == 0) {
		bpf_loop(LAT_BUCKETS, find_p95, &pc, 0); /* clears stray counts */
		return 0;
	}
	pc.rank = n - n / 20; /* ceil(0.95 n) */
	bpf_loop(LAT_BUCKETS, find_p95, &pc, 0);
	return pc.result < LAT_BUCKETS ? bucket_floor_us(pc.result) : 0;
}

static __always_inline __u64 period_ns(const struct adaptive_settings *s)
{
	__u32 ms = s && s->period_ms ? s->period_ms : 10000;

	return (__u64)ms * NS_PER_MS;
}

/*
 * The latency stage: lowers nano_max when nano's P95 is over its target, raises it back after
 * raise_after good periods, with a compare-and-set on score_thresholds. Returns without a change
 * when the period gives no decision.
 */
static __always_inline void latency_stage(const struct adaptive_settings *s, struct adaptive_stats *st,
					  const __u32 *p95, const __u32 *samples)
{
	__u32 zero = 0;
	struct score_thresholds *cur, seen, next;
	__u64 seen_word, next_word;
	struct recalibration_event *ev;
	__u32 nano_target = s->target_p95_us[TIER_NANO], step = s->step, floor = s->floor, old_nano_max;
	long rc;

	if (!s->enabled || !nano_target || !step || samples[TIER_NANO] == 0
	    || samples[TIER_NANO] < s->min_samples)
		return; /* no decision, and no evidence either way for the raise-back */
	cur = bpf_map_lookup_elem(&score_thresholds, &zero);
	if (!cur)
		return;
	/* One 64-bit load: the value this period's compare-and-set expects. */
	seen_word = *(volatile __u64 *)cur;
	__builtin_memcpy(&seen, &seen_word, sizeof(seen));
	if (seen.nano_max >= seen.small_max)
		return; /* an invalid value written by some tool: never build on it */
	next = seen;
	next.writer = THRESHOLDS_WRITER_KERNEL;
	next.version = seen.version + 1;
	old_nano_max = next.nano_max;
	if (p95[TIER_NANO] > nano_target) {
		st->good_periods = 0;
		if (old_nano_max <= floor)
			return;
		next.nano_max = old_nano_max - floor > step ? old_nano_max - step : floor;
	} else if (s->ceiling && (__u64)p95[TIER_NANO] * 100 < (__u64)nano_target * s->raise_below_pct) {
		__u32 cap = s->ceiling < next.small_max ? s->ceiling : next.small_max - 1;

		st->good_periods++;
		if (st->good_periods < s->raise_after || old_nano_max >= cap)
			return;
		st->good_periods = 0;
		next.nano_max = cap - old_nano_max > step ? old_nano_max + step : cap;
	} else {
		st->good_periods = 0; /* between the bounds: hysteresis, hold */
		return;
	}
	/* Compare-and-set: a write by the API or a tool since the load wins, this period does nothing. */
	__builtin_memcpy(&next_word, &next, sizeof(next_word));
	rc = __sync_val_compare_and_swap((__u64 *)cur, seen_word, next_word) == seen_word ? 0 : -EAGAIN;
	st->last_update_rc = rc;
	if (rc)
		return;
	__sync_fetch_and_add(&st->recalibrations, 1);
	st->last.timestamp_ns = bpf_ktime_get_ns();
	st->last.old_nano_max = old_nano_max;
	st->last.new_nano_max = next.nano_max;
	st->last.p95_us = p95[TIER_NANO];
	st->last.samples = samples[TIER_NANO];
	ev = bpf_ringbuf_reserve(&recalibration_events, sizeof(*ev), 0);
	if (ev) {
		*ev = st->last;
		bpf_ringbuf_submit(ev, 0);
	}
}

/*
 * The calibration stage: with at least max(1, calibration_min_samples) samples this period, moves
 * token_model.gain toward TOKEN_GAIN_ONE * 16 * sum(true) / sum(estimate_q4) (the gain at which the
 * period's estimates would have summed to the true counts), clamped to [gain_min, gain_max], by at
 * most gain_step_max. A gain outside the bounds (the bounds were narrowed) walks back in by the
 * step. The sums are the period's: reset whatever happens.
 */
static __always_inline void calibration_stage(const struct adaptive_settings *s, struct adaptive_stats *st,
					      struct latency_histograms *h)
{
	__u32 zero = 0;
	__u32 n = h->cal_samples;
	__u64 sum_true = h->cal_true_tokens, sum_est = h->cal_estimate_q4, target;
	__u32 min = s->calibration_min_samples ? s->calibration_min_samples : 1;
	__u32 lo = s->gain_min, hi = s->gain_max, step = s->gain_step_max, old, gain;
	struct token_model *cur, next;
	struct calibration_event *ev;

	h->cal_samples = 0;
	h->cal_true_tokens = 0;
	h->cal_estimate_q4 = 0;
	if (!s->calibrate || n < min || !sum_est || !lo || hi < lo || !step)
		return;
	cur = bpf_map_lookup_elem(&token_model, &zero);
	if (!cur)
		return;
	old = effective_gain(cur->gain); /* never written: the built-in ratio; a tool's huge value: the max */
	/* No overflow: sum_true < ADAPT_MAX_EVENTS * 2^32 < 2^49, times 2^14 < 2^63. */
	target = (__u64)TOKEN_GAIN_ONE * 16 * sum_true / sum_est;
	/* Within the dead band the estimate is as good as one period's mix can tell: hold. */
	if (target + CALIBRATION_DEADBAND_Q10 >= old && target <= old + CALIBRATION_DEADBAND_Q10)
		return;
	if (target < lo)
		target = lo;
	if (target > hi)
		target = hi;
	if (target > old)
		gain = target - old > step ? old + step : (__u32)target;
	else
		gain = old - target > step ? old - step : (__u32)target;
	if (gain == old)
		return;
	next.gain = gain;
	next.version = cur->version + 1;
	if (bpf_map_update_elem(&token_model, &zero, &next, BPF_EXIST))
		return;
	__sync_fetch_and_add(&st->calibrations, 1);
	st->last_calibration.timestamp_ns = bpf_ktime_get_ns();
	st->last_calibration.old_gain = old;
	st->last_calibration.new_gain = gain;
	st->last_calibration.samples = n;
	st->last_calibration.pad = 0;
	st->last_calibration.true_tokens_sum = sum_true;
	st->last_calibration.estimate_q4_sum = sum_est;
	ev = bpf_ringbuf_reserve(&calibration_events, sizeof(*ev), 0);
	if (ev) {
		*ev = st->last_calibration;
		bpf_ringbuf_submit(ev, 0);
	}
}

static int recalibrate(void *map, __u32 *key, struct adaptive_timer_value *val)
{
	__u32 zero = 0;
	struct adaptive_settings *s = bpf_map_lookup_elem(&adaptive_settings, &zero);
	struct adaptive_stats *st = bpf_map_lookup_elem(&adaptive_stats, &zero);
	struct latency_histograms *h = bpf_map_lookup_elem(&latency_histograms, &zero);
	struct drain_ctx dc = { .limit = 10000 };
	__u32 p95[TIER_COUNT] = {};
	__u32 samples[TIER_COUNT] = {};
	int t;

	if (!s || !st || !h)
		goto rearm;
	if (s->max_events)
		dc.limit = s->max_events < ADAPT_MAX_EVENTS ? s->max_events : ADAPT_MAX_EVENTS;
	bpf_user_ringbuf_drain(&latency_ringbuf, drain_one, &dc, 0);
	__sync_fetch_and_add(&st->ticks, 1);
	__sync_fetch_and_add(&st->drained, dc.drained);
	for (t = 0; t < TIER_COUNT; t++) {
		samples[t] = h->samples[t];
		p95[t] = p95_and_reset(h, t);
		if (samples[t]) {
			st->last_p95_us[t] = p95[t];
			st->last_samples[t] = samples[t];
		}
	}
	/* Both stages run every period, independently: neither one's "no decision" skips the other. */
	latency_stage(s, st, p95, samples);
	calibration_stage(s, st, h);
rearm:
	bpf_timer_start(&val->timer, period_ns(s), 0);
	return 0;
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
