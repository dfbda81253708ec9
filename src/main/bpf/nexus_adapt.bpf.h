/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included by nexus_classify.bpf.c: the adaptive loop's maps and its timer callback
 * (recalibrate); the entry point that arms it, nexus_adapt_arm, stays in nexus_classify.bpf.c.
 */
#ifndef NEXUS_ADAPT_BPF_H_
#define NEXUS_ADAPT_BPF_H_

/* ======================================================================================
 * Adaptive recalibration: a bpf_timer drains latency_ringbuf every period and runs two stages
 * on what it drained, each on its own settings, either or both acting in one period:
 *   - latency: P95 per tier; lowers score_thresholds.nano_max when nano's P95 is over its target,
 *     more the further over (and raises it back a step at a time after good periods);
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
 * How far one period over target lowers nano_max: in proportion to the miss, step * p95 / target
 * rounded down, at least one step and at most ADAPT_CUT_MAX_STEPS steps. A far miss should not
 * take many periods (each 10 s by default) to act on; the cap keeps one period's outlier P95 from
 * emptying nano. No overflow: step and p95 are u32, their product fits u64; target is not 0.
 */
static __always_inline __u32 nano_cut(__u32 step, __u32 p95_us, __u32 target_us)
{
	__u64 cut = (__u64)step * p95_us / target_us;

	if (cut < step)
		return step;
	if (cut > (__u64)step * ADAPT_CUT_MAX_STEPS)
		return step * ADAPT_CUT_MAX_STEPS;
	return (__u32)cut;
}

/*
 * The latency stage: lowers nano_max by nano_cut when nano's P95 is over its target, raises it
 * back by one step after raise_after good periods, with a compare-and-set on score_thresholds.
 * Returns without a change when the period gives no decision.
 */
static __always_inline void latency_stage(const struct adaptive_settings *s, struct adaptive_stats *st,
					  const __u32 *p95, const __u32 *samples)
{
	__u32 zero = 0;
	struct score_thresholds *cur, seen, next;
	__u64 seen_word, next_word;
	struct recalibration_event *ev;
	__u32 nano_target = s->target_p95_us[TIER_NANO], step = s->step, floor = s->floor, old_nano_max, cut;
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
		cut = nano_cut(step, p95[TIER_NANO], nano_target);
		next.nano_max = old_nano_max - floor > cut ? old_nano_max - cut : floor;
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

#endif /* NEXUS_ADAPT_BPF_H_ */
