/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included by nexus_classify.bpf.c: phases 3 and 4 over the body window: the prompt keys
 * (find_key_*), the prompt strings (scan_string_step: the SWAR fast path and the byte path) and
 * the features they count (PromptEstimate.Features in Java); scan_body drives both phases.
 */
#ifndef NEXUS_PROMPT_BPF_H_
#define NEXUS_PROMPT_BPF_H_

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

/* scan_state.escape right after a '\\' (then 4 more for "\\uXXXX", else none). */
#define ESCAPE_STARTED 5

/* Phase 3 looks at KEY_WORDS words of 8 bytes per bpf_loop iteration (a callback costs ~10 ns). */
#define KEY_WORDS 4
#define KEY_STRIDE (KEY_WORDS * CHUNK)

/*
 * Phase 3, one word (at base) with a '"': a key starting at one of its quotes sets key_end; 1 = stop
 * (a key, or a quote position i with i + 8 > len reached: no key fits there). The quotes are taken
 * lowest lane first (lowest_lane), not byte by byte.
 */
static __always_inline long find_key_in_word(struct head_buf *hb, struct scan_state *s, __u64 word, __u32 base,
					     __u32 len)
{
	__u64 quotes = eq_mask(word, '"');
	bool limit = base + CHUNK + 7 > len; /* the word holds positions where no key fits */

	if (limit) /* keep the lanes j with base + j + 8 <= len (none when base + 8 > len) */
		quotes &= base + 8 <= len ? (1ull << ((len - base - 7) * 8 & 63)) - 1 : 0;
	for (__u32 n = 0; n < CHUNK; n++) { /* a bounded loop: clang cannot unroll it, the verifier walks it */
		if (!quotes)
			break;
		__u32 i = base + lowest_lane(quotes);
		quotes &= quotes - 1;
		__u64 at = load64(hb, i);
		if (at == PROMPT_KEY) {
			s->key_end = i + 8;
			return 1;
		}
		if (at == CONTENT_KEY && i + 9 <= len && AT(hb, i + 8) == '"') {
			s->key_end = i + 9;
			return 1;
		}
		if ((at & TEXT_KEY_MASK) == TEXT_KEY) { /* a content part's text */
			s->key_end = i + 6;
			return 1;
		}
		if (at == SYSTEM_KEY) {
			s->key_end = i + 8;
			return 1;
		}
		if ((at & INPUT_KEY_MASK) == INPUT_KEY) {
			s->key_end = i + 7;
			return 1;
		}
		if (at == INSTRUC_KEY && i + 14 <= len && (load64(hb, i + 8) & TEXT_KEY_MASK) == TIONS_KEY) {
			s->key_end = i + 14;
			return 1;
		}
	}
	return limit;
}

/*
 * Phase 3, one stride from start: the next prompt key, "prompt", "content", "text", "system",
 * "input" or "instructions" (quotes included), wholly inside the window. Sets key_end to the index just past the key; 1 = stop (a
 * key, or the window's end). Words without a '"' are skipped (bytes past len in such a load are
 * stale, but a key needs i + 8 <= len).
 */
static __always_inline long find_key_in_stride(struct head_buf *hb, struct scan_state *s, __u32 start, __u32 len)
{
	ROLLED
	for (__u32 w = 0; w < KEY_WORDS; w++) {
		__u32 base = start + w * CHUNK;
		if (base >= len)
			return 1;
		__u64 word = load64(hb, base);
		if (has_byte(word, '"') && find_key_in_word(hb, s, word, base, len))
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

/* 0x80 when cls is the class whose one-hot bit is set in onehot (1 << class), else 0; no branch. */
static __always_inline __u64 carry_of(__u64 onehot, __u32 cls)
{
	return ((onehot >> cls) & 1) << 7;
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

/* A byte of the keyword window as the fast path compares it: a non-ASCII byte (never a keyword letter) as 0. */
static __always_inline __u64 ascii_or_zero(__u32 b)
{
	b &= 0xff;
	return b & ((b >> 7) - 1);
}

/* The two bytes before a word, from the byte scan's keyword window, in lanes 6 and 7 (7: the latest). */
static __always_inline __u64 window_lanes(__u32 window)
{
	return ascii_or_zero(window) << 56 | ascii_or_zero(window >> 8) << 48;
}

/* The keyword window after a whole word: its last three bytes, lower-cased, the latest lowest. */
static __always_inline __u32 word_window(__u64 word)
{
	__u64 low = word | LOWER;

	return (((low >> 40) & 0xff) << 16) | (((low >> 48) & 0xff) << 8) | (low >> 56);
}

/*
 * Phase 4's fast path covers up to PROMPT_WORDS words of 8 bytes per bpf_loop iteration: each
 * iteration costs a callback and the scan state's loads and stores (~10 ns hot), so fewer, longer
 * steps are cheaper as long as the loop's values fit the registers. The keyword match and the
 * carries have no branch per keyword or class (with one, the verifier walked one path per
 * combination of found keywords and passed its 1M-insn limit). With the counts packed and the
 * keywords in a pass of their own, six words cost ~20 ns less than four for a 250 B chat; eight
 * left the verifier 2k instructions of its limit (docs/kernel-segments.md, sixth pass).
 */
#define PROMPT_WORDS 6

/* The wide copy's words per step (scan_wide_words): eight came too near the verifier's limit. */
#define WIDE_WORDS 4

/*
 * The features of fast words (no '"', no '\\', no escape pending) as counted in registers: a run
 * starts where a class bit is set and the previous byte's is not. Letters and digits are counted
 * from bit 0 of each lane, punctuation from bit 4 (digit and punctuation runs in one shift, or and
 * and-not), blanks from bit 7; carry_* hold the previous byte's bits in lane 0, ready to or into
 * a mask shifted by one byte, carry_blank2 the one before. Counts gather per byte lane (at most
 * PROMPT_WORDS per lane and count) and are added up once.
 */
struct word_counts {
	__u64 carry_letter, carry_digit_punct, carry_blank, carry_blank2;
	__u64 words_letters, digits_punct, second_blanks;
};

/* Two lane counters in one: each lane's low four bits (at most PROMPT_WORDS, below 16) and its high four. */
#define LOW_COUNT (ONES * 0x0f)

/* The class masks of one fast word (bit 7 of each lane set where the byte is of that class). */
struct word_classes {
	__u64 letters, digits, blanks;
};

/*
 * ASCII only: no masking of bit 7 before the range tests, and a byte equals ' ' exactly when
 * (byte ^ ' ') + 0x7f leaves bit 7 clear. With UTF-8 beyond ASCII: such a byte is a letter, as in
 * count_byte; the range tests take the low seven bits, the other classes leave its lane out.
 */
static __always_inline struct word_classes classes_of(__u64 word, bool utf8)
{
	if (!utf8)
		return (struct word_classes){
			.letters = in_range(word | LOWER, 'a', 'z'),
			.digits = in_range(word, '0', '9'),
			.blanks = ~((word ^ (ONES * ' ')) + ONES * 0x7f) & HIGHS,
		};
	__u64 high = word & HIGHS;
	__u64 low7 = word ^ high;
	__u64 other = high ^ HIGHS;

	return (struct word_classes){
		.letters = in_range(low7 | LOWER, 'a', 'z') | high,
		.digits = in_range(low7, '0', '9') & other,
		.blanks = ~((low7 ^ (ONES * ' ')) + ONES * 0x7f) & other,
	};
}

/*
 * The runs of one fast word: a run starts where a class bit is set and the previous byte's is
 * not. The five counts share three registers (the loop has few to spare: every spilled counter
 * is a load and a store per word): words and letters in one, digit and punctuation runs in the other.
 */
static __always_inline void count_word(struct word_counts *c, __u64 word, bool utf8)
{
	struct word_classes k = classes_of(word, utf8);
	__u64 punct = HIGHS ^ (k.letters | k.digits | k.blanks);

	__u64 letter = k.letters >> 7; /* bit 0 of each lane */
	__u64 digit_punct = (k.digits >> 7) | (punct >> 3); /* bits 0 and 4: both runs in one test */

	c->words_letters += (letter & ~((letter << 8) | c->carry_letter)) | (letter << 4);
	c->digits_punct += digit_punct & ~((digit_punct << 8) | c->carry_digit_punct);
	c->second_blanks += (k.blanks & ((k.blanks << 8) | c->carry_blank) &
			     ~((k.blanks << 16) | c->carry_blank2 | (c->carry_blank << 8))) >> 7;
	c->carry_letter = letter >> 56;
	c->carry_digit_punct = digit_punct >> 56;
	c->carry_blank = k.blanks >> 56;
	c->carry_blank2 = (k.blanks >> 48) & 0x80;
}

/* The sum of a lane counter's eight bytes: each holds at most PROMPT_WORDS, so the sum fits the top byte. */
static __always_inline __u32 lane_sum(__u64 lanes)
{
	return (lanes * ONES) >> 56;
}

/* Per byte lane, bit 7 set where the byte is a 3-byte lead (0xe0..0xef), or a 4-byte one (0xf0 and above). */
static __always_inline __u64 lead3_lanes(__u64 word)
{
	return word & (word << 1) & (word << 2) & ~(word << 3) & HIGHS;
}

static __always_inline __u64 lead4_lanes(__u64 word)
{
	return word & (word << 1) & (word << 2) & (word << 3) & HIGHS;
}

/*
 * The block weights of fast words' 2-byte characters, a second pass over the words (the first
 * pass has no register to spare: its frame is near the 512-byte stack limit). A script's
 * letters share a pair of leads (Greek 0xce and 0xcf, Cyrillic 0xd0 and 0xd1, Arabic 0xd8 and
 * 0xd9): the pair last looked up stays with its two weights (pair: its even lead in every lane)
 * and the lanes holding it are counted (hits, and odd: those holding the odd lead), not looked
 * up. Between steps the pair stays in s->hex_a, which only a backslash-u escape uses (it writes
 * hex_a before it reads it, and no fast word runs inside an escape); any byte there is sound: a
 * lane counts against the pair only when it holds one of its leads, weighed by that lead's block.
 */
struct utf8_weights {
	__u64 pair, hits, odd;
	__u32 even_q10, odd_q10, q10;
};

/* Per byte lane, bit 7 set where x is zero (exact). */
static __always_inline __u64 zero_lanes(__u64 x)
{
	return ~(((x & ~HIGHS) + ~HIGHS) | x) & HIGHS;
}

/*
 * One word's block weights as count_byte adds them: a 2-byte lead's block_q10(c & 0x1f) at the
 * lead, a continuation byte nothing (fast words hold no 3- or 4-byte lead, and none is pending).
 * A lead outside the pair takes a table lookup, each lane without a branch (a loop over the lanes,
 * breaking when done, passed the verifier's limit), and its pair becomes the one kept.
 */
static __always_inline void count_utf8(struct utf8_weights *u, __u64 word, bool any)
{
	/* 110xxxxx; FAST_UTF8's words hold no byte of 0xe0 and above, so 11xxxxxx is enough there */
	__u64 leads = word & (word << 1) & (any ? ~(word << 2) : ~0ull) & HIGHS;
	__u64 hit = zero_lanes((word & ~ONES) ^ u->pair) & leads;
	__u64 fresh = leads & ~hit;

	u->hits += hit >> 7;
	u->odd += (hit & (word << 7)) >> 7;
	if (fresh) {
		__u64 lo = word & ((fresh >> 7) * 0x1f);
		__u32 q10 = 0;
		ROLLED
		for (__u32 j = 0; j < CHUNK; j++) {
			__u32 w = block_q10((lo >> (j * 8)) & 0x1f);
			q10 += w & -(__u32)((fresh >> (j * 8 + 7)) & 1);
		}
		/* The counts so far at the old pair's weights, then the lowest fresh lead's pair. */
		__u32 lead = (word >> (lowest_lane(fresh) * 8)) & 0x1e;
		u->q10 += q10 + lane_sum(u->hits) * u->even_q10 + lane_sum(u->odd) * (u->odd_q10 - u->even_q10);
		u->hits = 0;
		u->odd = 0;
		u->pair = (0xc0 | lead) * ONES;
		u->even_q10 = block_q10(lead);
		u->odd_q10 = block_q10(lead | 1);
	}
}

/*
 * The lanes of the word at `at` (wholly inside the window: at + CHUNK <= len) whose next byte is
 * inside the window too: all but lane 7 when the word ends the window. Branch-free, so that the
 * verifier walks one path per word, not two.
 */
static __always_inline __u64 lanes_with_next(__u32 at, __u32 len)
{
	__u32 ends_window = (len - at - CHUNK - 1) >> 31;

	return HIGHS >> (ends_window * 8);
}

/*
 * The third copy's 3- and 4-byte characters, weighed as count_byte weighs them: a 4-byte lead the
 * supplementary weight; a 3-byte lead, when the byte after it continues it (next: each lane's
 * next byte; in: the lanes whose next byte is inside the window), the weight of its block
 * ((lead & 0x0f) << 6 | (next & 0x3f)). Blocks from U+2000 (leads 0xe2 and above) but the
 * surrogates' share one weight (TOKEN_BLOCK_WIDE, unless off) and are only counted. The others
 * (Devanagari, Bengali, Thai, ...: leads 0xe0, 0xe1; surrogates) keep a pair of blocks as
 * count_utf8 keeps a pair of leads: the even block last looked up (block; lead and second byte,
 * its low bit clear, in every lane), counted (hits, odd) where a lane holds it, looked up lane by
 * lane where none does. A script's letters share one or two blocks (Devanagari 0x24 and 0x25).
 */
struct three_weights {
	__u64 lead, second, hits, odd, wide, supplementary;
	__u32 block, even_q10, odd_q10, q10;
};

static __always_inline void keep_block(struct three_weights *t, __u32 block)
{
	block &= 0x3fe;
	t->block = block;
	t->lead = (0xe0 | (block >> 6)) * ONES;
	t->second = (0x80 | (block & 0x3e)) * ONES;
	t->even_q10 = block_q10(block);
	t->odd_q10 = block_q10(block | 1);
}

/*
 * The weights of the 3-byte characters whose leads are in the lanes of fresh (bit 7), looked up by
 * block, in the low 32 bits; the lowest one's block in the high 32. A global function: verified
 * once on its own, not once per word of the copy that calls it.
 */
__noinline __u64 fresh_blocks_q10(__u64 word, __u64 next, __u64 fresh)
{
	__u32 q10 = 0;

	ROLLED
	for (__u32 j = 0; j < CHUNK; j++) {
		__u32 block = ((word >> (j * 8)) & 0x0f) << 6 | ((next >> (j * 8)) & 0x3f);
		q10 += block_q10(block) & -(__u32)((fresh >> (j * 8 + 7)) & 1);
	}
	__u32 j = lowest_lane(fresh);
	__u64 block = ((word >> (j * 8)) & 0x0f) << 6 | ((next >> (j * 8)) & 0x3f);

	return block << 32 | q10;
}

static __always_inline void count_three(struct three_weights *t, __u64 word, __u64 next, __u64 in, __u64 off)
{
	__u64 lead3 = lead3_lanes(word) & next & ~(next << 1) & in; /* continued inside the window */
	__u64 surrogate = eq_mask(word, 0xed) & ((next << 1) | (next << 2)); /* 0xed, then 0xa0 and above */
	__u64 wide = lead3 & ((word << 4) | (word << 5) | (word << 6)) & ~surrogate & ~off; /* 0xe2 and above */
	__u64 blocks = lead3 & ~wide;
	__u64 hit = zero_lanes((word ^ t->lead) | ((next & ~ONES) ^ t->second)) & blocks;
	__u64 fresh = blocks & ~hit;

	t->wide += wide >> 7;
	t->supplementary += lead4_lanes(word) >> 7;
	t->hits += hit >> 7;
	t->odd += (hit & (next << 7)) >> 7;
	if (fresh) {
		__u64 looked_up = fresh_blocks_q10(word, next, fresh);
		t->q10 += (__u32)looked_up + lane_sum(t->hits) * t->even_q10 + lane_sum(t->odd) * (t->odd_q10 - t->even_q10);
		t->hits = 0;
		t->odd = 0;
		keep_block(t, looked_up >> 32);
	}
}

/* scan_fast_words' copies (the argument is a constant: each call site is its own copy). */
#define FAST_ASCII 0 /* ASCII words only */
#define FAST_UTF8 1  /* ASCII and 2-byte characters (Greek, Cyrillic, Hebrew, Arabic, accented Latin) */
#define FAST_ANY 2   /* any UTF-8: 3- and 4-byte characters too (Devanagari, Thai, CJK beside ASCII) */

/* FAST_ANY's words per step: six (as PROMPT_WORDS) passed the verifier's 1M-insn limit. */
#define ANY_WORDS 4

/*
 * FAST_ANY stops at a word after its first that the wide copy takes (non-ASCII bytes only, one of
 * them a 3- or 4-byte lead, none 0xe0 or 0xe1: CJK text), which counts such words for less.
 * Bit 7 set in some lane when it stops; branch-free (nonzero), so the verifier walks one path.
 */
static __always_inline __u64 pure_wide(__u64 word, __u64 leads3, __u32 n)
{
	__u64 not_wide = ((word & HIGHS) ^ HIGHS) | (leads3 & ~((word << 3) | (word << 4) | (word << 5) | (word << 6)));

	return leads3 & HIGHS & (nonzero(not_wide & HIGHS) - 1) & -nonzero(n);
}

/*
 * Phase 4's fast path from pos: up to PROMPT_WORDS fast words wholly inside the window, their
 * keywords too while they lie in the first KEYWORD_SCAN_BYTES. Returns the bytes counted (0 when
 * the word at pos is not a fast one). A fast word holds no '"' and no '\\'. FAST_ASCII takes ASCII
 * words only. FAST_UTF8 also 2-byte characters and continuation bytes, whose block weights a
 * second pass adds (utf8_weights); a 3- or 4-byte lead stops it. FAST_ANY takes any bytes, its
 * second pass adds the 3- and 4-byte characters' weights too (three_weights). Neither UTF-8 copy
 * starts with a 3-byte lead pending (s->lead: its second byte comes next); the caller sees to it.
 */
static __always_inline __u32 scan_fast_words(struct scan_state *s, const struct head_buf *hb, __u32 pos, __u32 len,
					     __u32 mode)
{
	bool utf8 = mode != FAST_ASCII;
	__u32 words = mode == FAST_ANY ? ANY_WORDS : PROMPT_WORDS;
	__u64 prev = 1ull << (s->prev & 7); /* one-hot: the carries below without a branch each */
	__u64 prev2 = 1ull << (s->prev2 & 7);

	OPAQUE(prev);
	OPAQUE(prev2);
	struct word_counts c = {
		.carry_letter = carry_of(prev, CLS_LETTER) >> 7,
		.carry_digit_punct = carry_of(prev, CLS_DIGIT) >> 7 | carry_of(prev, CLS_PUNCT) >> 3,
		.carry_blank = carry_of(prev, CLS_BLANK),
		.carry_blank2 = carry_of(prev2, CLS_BLANK),
	};
	__u32 n = 0;

	ROLLED
	for (__u32 w = 0; w < words; w++) {
		__u32 at = pos + w * CHUNK;
		if (at + CHUNK > len)
			break;
		__u64 word = load64(hb, at);
		/* One branch: each term is non-zero exactly when its test holds (has_byte's mask). */
		__u64 quote = word ^ (ONES * '"');
		__u64 backslash = word ^ (ONES * '\\');
		__u64 leads3 = word & (word << 1) & (word << 2); /* 3- and 4-byte leads in bit 7 */
		__u64 refused = mode == FAST_ASCII ? word : mode == FAST_UTF8 ? leads3 : pure_wide(word, leads3, n);
		if ((((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash) | refused) & HIGHS)
			break;
		count_word(&c, word, utf8);
		n += CHUNK;
	}
	if (!n)
		return 0;
	s->words += lane_sum(c.words_letters & LOW_COUNT);
	s->letters += lane_sum((c.words_letters >> 4) & LOW_COUNT);
	s->digit_runs += lane_sum(c.digits_punct & LOW_COUNT);
	s->punct_runs += lane_sum((c.digits_punct >> 4) & LOW_COUNT);
	s->second_blanks += lane_sum(c.second_blanks);

	/* The keywords of the words in the prompt's first KEYWORD_SCAN_BYTES: a pass of their own (the
	 * counting loop above keeps its registers), which only a string's first steps take. */
	__u32 kw_end = s->prompt_from + KEYWORD_SCAN_BYTES;
	if (pos < kw_end) {
		__u64 before = window_lanes(s->kw_window); /* then the last keyword word's low */
		__u32 keywords = 0;
		ROLLED
		for (__u32 w = 0; w < words; w++) {
			__u32 at = pos + w * CHUNK;
			if (w * CHUNK >= n || at >= kw_end)
				break;
			__u64 word = load64(hb, at);
			/* word_keywords needs 7-bit lanes: a non-ASCII byte (never a keyword letter) as 0 */
			__u64 low = (word | LOWER) & (utf8 ? ~(((word & HIGHS) >> 7) * 0xff) : ~0ull);
			keywords |= word_keywords(low, before, kw_end - at);
			before = low;
		}
		s->keywords |= keywords;
		s->kw_window = word_window(before); /* a non-ASCII byte as 0: it matches no keyword either way */
	}
	if (utf8) {
		__u32 pair = s->hex_a & 0x1e; /* the pair kept from the last fast words (utf8_weights) */
		struct utf8_weights u = {
			.pair = (0xc0 | pair) * ONES,
			.even_q10 = block_q10(pair),
			.odd_q10 = block_q10(pair | 1),
		};
		ROLLED
		for (__u32 w = 0; w < words; w++) {
			if (w * CHUNK >= n)
				break;
			count_utf8(&u, load64(hb, pos + w * CHUNK), mode == FAST_ANY);
		}
		s->chars_q10 += u.q10 + lane_sum(u.hits) * u.even_q10 + lane_sum(u.odd) * (u.odd_q10 - u.even_q10);
		s->hex_a = u.pair & 0xff;
	}
	if (mode == FAST_ANY) {
		/* the block pair kept from the last FAST_ANY words in s->hex_b, which only a backslash-u
		 * escape uses (written before it is read), as s->hex_a keeps utf8_weights' pair */
		__u32 wide_q10 = token_block_q10[TOKEN_BLOCK_WIDE];
		__u64 off = wide_q10 == TOKEN_WIDE_NOT_UNIFORM ? HIGHS : 0; /* a .rodata constant: no branch left */
		struct three_weights t = {};
		keep_block(&t, s->hex_b);
		ROLLED
		for (__u32 w = 0; w < words; w++) {
			__u32 at = pos + w * CHUNK;
			if (w * CHUNK >= n)
				break;
			count_three(&t, load64(hb, at), load64(hb, at + 1), lanes_with_next(at, len), off);
		}
		s->chars_q10 += t.q10 + lane_sum(t.hits) * t.even_q10 + lane_sum(t.odd) * (t.odd_q10 - t.even_q10) +
				lane_sum(t.wide) * (wide_q10 & 0x7fff) +
				lane_sum(t.supplementary) * block_q10(TOKEN_BLOCK_SUPPLEMENTARY);
		s->hex_b = t.block;
	}
	s->lead = 0; /* a 3-byte lead in the last lane was weighed from the byte after it, or never is */
	struct word_classes last = classes_of(load64(hb, pos + n - CHUNK), utf8);
	s->prev2 = class_at(last.letters, last.digits, last.blanks, 6);
	s->prev = class_at(last.letters, last.digits, last.blanks, 7);
	s->raw += n;
	return n;
}

/*
 * Phase 4's fast path for wide text (CJK, kana, Hangul, emoji): up to WIDE_WORDS words from pos
 * whose eight bytes are all 3- and 4-byte characters' (no ASCII byte, no 2-byte lead), wholly
 * inside the window. Returns the bytes counted (0 when the word at pos is not one). count_byte
 * makes every such byte a letter, so a word adds 8 letters and no run but the one it may start;
 * no keyword ends in it (its lanes are no keyword letter; kw_window holds them as 0, as the
 * other fast copies do). A 3-byte character weighs its block's weight at its second byte in
 * count_byte: here every block from U+2000 weighs the table's one wide weight (TOKEN_BLOCK_WIDE,
 * TokenBlocks), so a lead weighs it when a continuation byte follows it (the byte after the word
 * read from the window: lane j of the load at index + 1 is the byte after lane j). A word with a
 * lead below U+2000 (0xe0, 0xe1), a surrogate (0xed before 0xa0 and above), or any 3-byte lead
 * when the wide blocks differ, is refused: the byte path looks those blocks up. A 4-byte lead
 * weighs the supplementary weight, as count_byte. A 3-byte lead in the last lane is weighed here,
 * so none is left pending (s->lead). Kept apart from the UTF-8 copy: folded into it, the loop's
 * callback passed the verifier's 1M-insn limit, and its own global function the 512-byte stack.
 */
static __always_inline __u32 scan_wide_words(struct scan_state *s, const struct head_buf *hb, __u32 pos, __u32 len)
{
	__u32 wide_q10 = token_block_q10[TOKEN_BLOCK_WIDE];
	__u64 off = wide_q10 == TOKEN_WIDE_NOT_UNIFORM ? HIGHS : 0; /* a .rodata constant: no branch left */
	__u64 wide = 0, supplementary = 0;
	__u32 n = 0;

	ROLLED
	for (__u32 w = 0; w < WIDE_WORDS; w++) {
		__u32 at = pos + w * CHUNK;
		if (at + CHUNK > len)
			break;
		__u64 word = load64(hb, at);
		__u64 next = load64(hb, at + 1);
		__u64 in = at + CHUNK < len ? HIGHS : HIGHS >> 8; /* the byte after lane 7 only inside the window */
		__u64 lead3 = lead3_lanes(word);
		__u64 two_byte = word & (word << 1) & ~(word << 2) & HIGHS;
		__u64 below_2000 = lead3 & ~((word << 4) | (word << 5) | (word << 6));
		__u64 surrogate = eq_mask(word, 0xed) & next & ((next << 1) | (next << 2)) & in;
		if (((word & HIGHS) ^ HIGHS) | two_byte | below_2000 | surrogate | (lead3 & off))
			break;
		wide += (lead3 & next & ~(next << 1) & in) >> 7;
		supplementary += lead4_lanes(word) >> 7;
		n += CHUNK;
	}
	if (!n)
		return 0;
	s->words += s->prev != CLS_LETTER;
	s->letters += n;
	s->chars_q10 += lane_sum(wide) * (wide_q10 & 0x7fff) + lane_sum(supplementary) * block_q10(TOKEN_BLOCK_SUPPLEMENTARY);
	s->prev = CLS_LETTER;
	s->prev2 = CLS_LETTER;
	s->lead = 0;
	s->kw_window = 0;
	s->raw += n;
	return n;
}

/*
 * Phase 4, one step from s->pos: the prompt string's features up to the closing quote (an escape
 * is one character), and keywords over its first KEYWORD_SCAN_BYTES bytes. Runs of fast words (ASCII,
 * then 2-byte UTF-8) go PROMPT_WORDS at a time (keywords matched a word at a time); anything else
 * (escapes, 3- and 4-byte characters, the closing quote) one byte at a time for CHUNK bytes. Every
 * step moves pos by CHUNK or more, so (len - start) / CHUNK steps from a string's start reach the window's end.
 */
static __always_inline long scan_string_step(struct head_buf *hb)
{
	struct scan_state *s = &hb->scan;
	__u32 base = s->pos;
	__u32 len = s->len;

	if (s->escape == 0) {
		__u32 n = scan_fast_words(s, hb, base, len, FAST_ASCII);
		/* the word at base holds a non-ASCII byte (or '"' or '\\', again refused). Without a 3-
		 * or 4-byte lead it takes the UTF-8 copy (Greek, Cyrillic, ...); a word of non-ASCII
		 * bytes only with such a lead, none 0xe0 or 0xe1, the wide copy (CJK text: the
		 * cheapest); any other FAST_ANY (Devanagari, Thai, CJK beside ASCII). None runs with a
		 * 3-byte lead pending (s->lead: its second byte comes next): the byte path weighs it.
		 * One call site per copy: the verifier walks each once. Marked unlikely so that clang
		 * lays these copies out after the ASCII copy and the byte path, which every request
		 * takes: under real traffic each cache line of code a packet touches is a miss. */
		__u64 first = load64(hb, base);
		__u64 wide = first & (first << 1) & (first << 2) & HIGHS;
		if (__builtin_expect(!n && s->lead == 0, 0)) {
			if (!wide)
				n = scan_fast_words(s, hb, base, len, FAST_UTF8);
			else if ((first & HIGHS) == HIGHS && !(wide & ~((first << 3) | (first << 4) | (first << 5) | (first << 6))))
				n = scan_wide_words(s, hb, base, len);
			else
				n = scan_fast_words(s, hb, base, len, FAST_ANY);
		}
		if (n) {
			s->pos = base + n;
			return 0;
		}
	}

	/*
	 * Not unrolled: a string's last word (its closing quote) and every escape take this path, so
	 * every request runs some of it, and under real traffic it runs from a cold instruction cache;
	 * eight inlined copies of count_byte were ~17 KB of the scan's code. Rolled, a chat's XDP run
	 * cost 15-50 % less under real traffic (docs/kernel-segments.md) and the same in test_run.
	 */
	ROLLED
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

#endif /* NEXUS_PROMPT_BPF_H_ */
