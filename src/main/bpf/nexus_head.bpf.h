/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included by nexus_classify.bpf.c: the per-CPU head buffer and scan state (head_scratch), the
 * word helpers every scan uses (load64, has_byte), and phases 1 and 2 of a request head: the
 * request line (hash, keywords) and the header scan (end of head, Content-Length); read_head.
 */
#ifndef NEXUS_HEAD_BPF_H_
#define NEXUS_HEAD_BPF_H_

/* Keywords as the rolling window holds them: three lower-cased bytes, oldest highest. */
#define KW_SUM 0x73756du
#define KW_REF 0x726566u
#define KW_GEN 0x67656eu
#define KW_ANA 0x616e61u

/* "content-length:" as two little-endian words, so no string lands in .rodata. */
#define CL_NAME_LEN 15
#define CL_NAME_LO 0x2d746e65746e6f63ull /* "content-" */
#define CL_NAME_HI 0x003a6874676e656cull /* "length:"  */

/* What one segment's scan decides: read_head or read_pending_body fill it, score_body scores it. */
struct verdict {
	__u64 body_len;
	__u32 check;   /* verdict_check(request-line hash, body_len) */
	__u8 score;
	__u8 tier;
	__u8 flags;    /* VERDICT_F_* */
	__u8 awaits;   /* 1: a head without body bytes whose Content-Length body follows (pending_bodies) */
	__u32 line_keywords; /* KW_BIT_* of the request line */
	__u32 body_from;     /* the body's first byte in the scratch buffer */
	__u32 prompt_tokens; /* score_body: the prompt's tokens at unit gain, rounded (tenant limits' charge) */
};

enum { CL_NONE, CL_VALUE, CL_DIGITS };
enum { KW_BIT_SUM = 1, KW_BIT_REF = 2, KW_BIT_GEN = 4, KW_BIT_ANA = 8 };

/* Character classes of the prompt scan. */
enum { CLS_LETTER, CLS_DIGIT, CLS_BLANK, CLS_BREAK, CLS_PUNCT };

/* Bytes scanned per bpf_loop iteration: state stays in registers within a chunk. */
#define CHUNK 8
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
#define LOWER 0x2020202020202020ull

/*
 * Every loop over words or bytes of the scan is rolled (one copy of its body, run n times), not
 * unrolled. Under real traffic the XDP program runs with a cold instruction cache (the client's
 * and the router's work run between two requests on the same cores), so its cost follows the code
 * it touches more than the instructions it runs: a request segment cost 5-8 us under the routing
 * evaluation against ~0.4 us in BPF_PROG_TEST_RUN, where the code stays hot. Rolling every word
 * loop shrank the classifier's code from 65 to 35 KB and its cost under the routing evaluation by
 * ~22 % (mean of eight interleaved rounds), for ~+50 ns in BPF_PROG_TEST_RUN; the verifier processes
 * fewer instructions too (907k -> 786k of its 1M). Measured in docs/kernel-segments.md.
 */
#define ROLLED _Pragma("clang loop unroll(disable)")

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
	__u64 line_hash;   /* line_mix over the request line's words so far (up to REQUEST_LINE_MAX bytes) */
	__u64 line_before; /* the last of them, lower-cased, its non-ASCII bytes zeroed (word_keywords) */
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

/* Per byte, bit 7 set where the byte equals b (exact, no false positives). */
static __always_inline __u64 eq_mask(__u64 word, __u8 b)
{
	__u64 x = word ^ (ONES * b);
	return ~(((x & ~HIGHS) + ~HIGHS) | x) & HIGHS;
}

/* The lane (0..7) of the lowest bit-7 flag of a lane mask (one multiply: no count-trailing-zeros in BPF v3). */
static __always_inline __u32 lowest_lane(__u64 mask)
{
	__u64 bit = mask & -mask; /* 1 << (8 * lane + 7) */

	return ((bit >> 7) * 0x0001020304050607ull) >> 56;
}

/*
 * Hides a value from clang's pattern matching: without it clang turns the branch-free forms below
 * back into comparisons, which the BPF target can only emit as branches (no setcc), and every
 * branch is one more path for the verifier to walk and one more jump at run time.
 */
#define OPAQUE(x) asm volatile("" : "+r"(x))

/* 1 when m is not zero, without a branch. */
static __always_inline __u64 nonzero(__u64 m)
{
	__u64 neg = -m;

	OPAQUE(neg);
	return (m | neg) >> 63;
}

/* Per byte lane of three 7-bit words, bit 7 set where the lane of each equals its letter (k2 k1 k0). */
static __always_inline __u64 triple_lanes(__u64 back2, __u64 back1, __u64 low, __u8 k2, __u8 k1, __u8 k0)
{
	__u64 d = (back2 ^ (ONES * k2)) | (back1 ^ (ONES * k1)) | (low ^ (ONES * k0));

	return ~(d + ONES * 0x7f) & HIGHS; /* 7-bit lanes: d + 0x7f carries into bit 7 unless d is 0 */
}

/*
 * The keywords (KW_BIT_*) whose window of three bytes ends in one of the first `lanes` bytes of the
 * lower-cased fast word low (1..8), given in lanes 6 and 7 of before the two bytes before it (the
 * previous word's low, or window_lanes of the byte scan's window). Same window as the byte scan: raw
 * bytes, each or-ed with 0x20. Every lane is 7-bit (ASCII words; the window's other bytes as 0), so
 * one three-way xor-or and one add per keyword find its lanes; a word without a keyword (nearly
 * all) costs that and one branch.
 */
static __always_inline __u32 word_keywords(__u64 low, __u64 before, __u32 lanes)
{
	__u64 back1 = (low << 8) | (before >> 56);  /* byte j: the byte before byte j */
	__u64 back2 = (low << 16) | (before >> 48); /* byte j: the one before that */
	__u64 in = lanes >= CHUNK ? HIGHS : HIGHS & ((1ull << (lanes * 8)) - 1);
	__u64 sum = triple_lanes(back2, back1, low, 's', 'u', 'm') & in;
	__u64 ref = triple_lanes(back2, back1, low, 'r', 'e', 'f') & in;
	__u64 gen = triple_lanes(back2, back1, low, 'g', 'e', 'n') & in;
	__u64 ana = triple_lanes(back2, back1, low, 'a', 'n', 'a') & in;

	if (!(sum | ref | gen | ana))
		return 0;
	/* Branch-free (nonzero): the found bits stay an unknown value for the verifier, not 16 states. */
	return KW_BIT_SUM * nonzero(sum) | KW_BIT_REF * nonzero(ref) | KW_BIT_GEN * nonzero(gen) |
	       KW_BIT_ANA * nonzero(ana);
}

/*
 * Phase 1 looks at LINE_WORDS words of 8 bytes per bpf_loop iteration: five hold the OpenAI paths'
 * request lines ("POST /v1/chat/completions HTTP/1.1" and its CR are 35 bytes) in one iteration.
 */
#define LINE_WORDS 5

/* The bytes below lanes (0..8) of a word, the rest zero. */
static __always_inline __u64 low_lanes(__u64 word, __u32 lanes)
{
	return lanes >= CHUNK ? word : word & ((1ull << (lanes * 8)) - 1);
}

/*
 * Phase 1, one word of the request line at base: where the line ends in it (its first CR or LF, or
 * len), the hash of its bytes of the line, and their keywords, a word at a time. Non-ASCII bytes
 * are zeroed for the keyword match (word_keywords needs 7-bit lanes; a byte >= 0x80 never spells a
 * keyword letter, and the byte-wise window of Scorer.keywordBits sees it as no letter too).
 * Past REQUEST_LINE_MAX only the line's end is looked for. 1 = the line ended.
 */
static __always_inline long scan_line_word(struct scan_state *s, __u64 word, __u32 base, __u32 len,
					   __u64 *hash, __u64 *before, __u32 *keywords)
{
	__u32 lanes = base + CHUNK <= len ? CHUNK : len - base; /* bytes at len and past it are stale */
	__u64 ends = (eq_mask(word, '\r') | eq_mask(word, '\n')) & low_lanes(HIGHS, lanes);
	long stop = lanes < CHUNK;

	if (ends) {
		lanes = lowest_lane(ends);
		s->line_end = base + lanes;
		stop = 1;
	}
	if (base >= REQUEST_LINE_MAX || !lanes) /* REQUEST_LINE_MAX is a multiple of CHUNK */
		return stop;
	__u64 part = low_lanes(word, lanes);
	__u64 high = ((part & HIGHS) >> 7) * 0xff;
	__u64 low = (part | LOWER) & ~high;

	*hash = line_mix(*hash, part);
	*keywords |= word_keywords(low, *before, lanes);
	*before = low;
	return stop;
}

/* Phase 1, iteration k: LINE_WORDS words of the request line (hash and keywords), up to its first CR or LF. */
static long scan_line(__u64 k, void *arg)
{
	struct head_buf *hb = ((struct scan_ctx *)arg)->hb;
	struct scan_state *s = &hb->scan;
	__u32 start = (__u32)k * CHUNK * LINE_WORDS;
	__u32 len = s->len;
	__u64 hash = s->line_hash;
	__u64 before = s->line_before;
	__u32 keywords = s->keywords;
	long stop = 0;

	ROLLED
	for (__u32 w = 0; w < LINE_WORDS; w++) {
		__u32 base = start + w * CHUNK;
		if (base >= len) {
			stop = 1;
			break;
		}
		stop = scan_line_word(s, load64(hb, base), base & (HEAD_WINDOW - 1), len, &hash, &before, &keywords);
		if (stop)
			break;
	}
	s->line_hash = hash;
	s->line_before = before;
	s->keywords = keywords;
	return stop;
}

/*
 * Phase 2 covers HEADER_WORDS words of 8 bytes per bpf_loop iteration: six cost the same as four
 * in BPF_PROG_TEST_RUN and cut the verifier's processed instructions by a fifth (858k -> 644k).
 */
#define HEADER_WORDS 6
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
	/*
	 * Not unrolled: under real traffic the program runs with a cold instruction cache, and eight
	 * copies of this body were 6.6 KB of code for a path a head takes for a few bytes (its
	 * Content-Length value). Rolled, the byte loops cut a chat request's cost under real traffic by
	 * ~15-30 % (docs/kernel-segments.md) for no loss in BPF_PROG_TEST_RUN, where the code stays hot.
	 */
	ROLLED
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

/*
 * Phase 2, one word with an LF, outside a Content-Length value: scan_header_word's LF rules, at the
 * LFs only (taken lowest lane first) instead of at every byte. A Content-Length name found leaves
 * the rest of the word to its name ("content-length:" holds no LF), and the value, which starts
 * past this word, to scan_header_word. 1 = stop (the end of the head).
 */
static __always_inline long scan_header_lfs(struct head_buf *hb, struct scan_state *s, __u64 word, __u32 base,
					    __u32 len)
{
	__u64 lfs = eq_mask(word, '\n');

	if (base + CHUNK > len) /* bytes at len and past it are stale */
		lfs &= (1ull << ((len - base) * 8 & 63)) - 1;
	for (__u32 n = 0; n < CHUNK; n++) { /* a bounded loop: clang cannot unroll it, the verifier walks it */
		if (!lfs)
			return 0;
		__u32 i = base + lowest_lane(lfs);
		lfs &= lfs - 1;
		/* LF at i: "\r\n\r\n" is CR, this LF, CR, LF */
		if (i + 2 < len && AT(hb, i - 1) == '\r' && AT(hb, i + 1) == '\r' && AT(hb, i + 2) == '\n') {
			s->head_end = i + 3;
			return 1;
		}
		if (!s->cl_found && i + CL_NAME_LEN < len && (load64(hb, i + 1) | LOWER) == CL_NAME_LO &&
		    ((load64(hb, i + 9) | LOWER) & 0x00ffffffffffffffull) == CL_NAME_HI) {
			s->cl_state = CL_VALUE;
			s->value_from = i + 1 + CL_NAME_LEN;
			return 0;
		}
	}
	return 0;
}

/*
 * Phase 2, stride k from the end of the request line: words without an LF, outside a value, are
 * skipped; words with one, outside a value, go LF by LF (scan_header_lfs); a value byte by byte.
 */
static long scan_headers(__u64 k, void *arg)
{
	struct head_buf *hb = ((struct scan_ctx *)arg)->hb;
	struct scan_state *s = &hb->scan;
	__u32 start = s->line_end + (__u32)k * HEADER_STRIDE;
	__u32 len = s->len;

	ROLLED
	for (__u32 w = 0; w < HEADER_WORDS; w++) {
		__u32 base = (start + w * CHUNK) & (HEAD_WINDOW - 1);
		if (start + w * CHUNK >= len)
			return 1;
		if (s->cl_state != CL_NONE) {
			if (scan_header_word(hb, base))
				return 1;
			continue;
		}
		__u64 word = load64(hb, base);
		if (has_byte(word, '\n') && scan_header_lfs(hb, s, word, base, len))
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

/* A fresh scan state over len bytes in the buffer. */
static __always_inline struct scan_state *start_scan(struct head_buf *hb, __u32 len)
{
	struct scan_state *s = &hb->scan;

	__builtin_memset(s, 0, sizeof(*s));
	s->prev = CLS_BREAK; /* the first character starts its run */
	s->prev2 = CLS_BREAK;
	s->len = len;
	s->line_end = len;
	s->line_hash = LINE_HASH_SEED;
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
 * method_seen: the caller has already found the method token on the packet itself.
 */
static __always_inline int read_head(void *ctx, bool xdp, const struct tcp_facts *f, struct head_buf *hb,
				     struct verdict *v, bool method_seen)
{
	__u32 len = f->payload_len;
	if (len > HEAD_WINDOW)
		len = HEAD_WINDOW;
	if (len < 4)
		return -1;
	if (load_bytes(ctx, xdp, f->payload_off, hb->bytes, len) < 0)
		return -1;
	if (!method_seen && !starts_request(hb->bytes, len))
		return -1;

	struct scan_state *s = start_scan(hb, len);
	struct scan_ctx sc = { .hb = hb };
	bpf_loop((len + CHUNK * LINE_WORDS - 1) / (CHUNK * LINE_WORDS), scan_line, &sc, 0);
	__u32 line_end = s->line_end;
	__u32 hashed = line_end < REQUEST_LINE_MAX ? line_end : REQUEST_LINE_MAX;
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
	v->check = verdict_check(line_mix(s->line_hash, hashed), body_len);
	return 0;
}

#endif /* NEXUS_HEAD_BPF_H_ */
