/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included by nexus_classify.bpf.c: from the features to a verdict: the token estimate
 * (prompt_tokens_q10), the calibrated gain (token_model), and score_body, which runs phases 3 and 4
 * and scores; the tier (tier_for) is in nexus_classify.bpf.c, beside the other built-in defaults.
 */
#ifndef NEXUS_SCORE_BPF_H_
#define NEXUS_SCORE_BPF_H_

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
	v->prompt_tokens = (q10 + 512) >> 10;
	return 0;
}

#endif /* NEXUS_SCORE_BPF_H_ */
