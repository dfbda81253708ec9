/*
 * Tenant limits counted at XDP (issue 48, docs/tenant-limits.md "The algorithm"): for a request
 * whose prompt XDP scored and whose IPv4 source falls in a prefix with minute limits, the request
 * and its charge (prompt tokens at unit gain + the assumed output cap) are counted in the tenant's
 * anchored windows, or the request is marked over a limit and nothing is counted. The data plane
 * reads the verdict's flags and answers 429 without any tier work; requests XDP did not count (blind,
 * IPv6, TLS) are counted by the data plane in the same windows with the same rule
 * (io.nexuscore.kernel.maps.TenantWindows), so one counter holds a tenant's limit.
 *
 * Concurrent requests of one tenant on several CPUs read, decide and add without a lock: the adds
 * are atomic, so nothing is lost, but two CPUs can both pass the last free unit (an overshoot of at
 * most one request per other CPU at the window's edge). A window that two CPUs open at once keeps
 * both adds.
 */
#ifndef NEXUS_LIMITS_BPF_H_
#define NEXUS_LIMITS_BPF_H_

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct tenant_key);
	__type(value, struct tenant_limit);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} tenant_limits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TENANT_LIMIT_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct tenant_window);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} tenant_windows SEC(".maps");

/* What a window holds now: its count while current, else 0 (it ended, or never opened). */
static __always_inline __u64 window_count(__u64 start, __u64 count, __u64 now)
{
	return start != 0 && now - start < LIMIT_WINDOW_NS ? count : 0;
}

/* Opens a new window at now when the current one ended (or none was open), then adds amount. */
static __always_inline void window_add(__u64 *start, __u64 *count, __u64 now, __u64 amount)
{
	__u64 seen = *start;
	if (seen == 0 || now - seen >= LIMIT_WINDOW_NS) {
		if (__sync_val_compare_and_swap(start, seen, now) == seen)
			*count = 0; /* the CPU that opened the window zeroes it; its add follows */
	}
	__sync_fetch_and_add(count, amount);
}

/*
 * Counts an IPv4 request XDP scored against its source prefix's minute limits; sets VERDICT_F_COUNTED
 * or an OVER_* flag. prompt_tokens: the prompt's tokens at unit gain, rounded.
 */
static __always_inline void count_tenant_request(__u32 saddr, __u64 prompt_tokens, struct verdict *v)
{
	struct tenant_key key = { .prefixlen = 32, .addr = saddr };
	struct tenant_limit *limit = bpf_map_lookup_elem(&tenant_limits, &key);
	if (!limit)
		return;
	__u32 slot = limit->slot;
	struct tenant_window *w = bpf_map_lookup_elem(&tenant_windows, &slot);
	if (!w)
		return;
	__u64 now = bpf_ktime_get_ns();
	__u64 charge = prompt_tokens + limit->output_tokens;

	if (limit->requests_per_minute &&
	    window_count(w->requests_start, w->requests, now) + 1 > limit->requests_per_minute) {
		v->flags |= VERDICT_F_OVER_REQUESTS;
		return;
	}
	if (limit->tokens_per_minute) {
		if (limit->tokens_whole && charge > limit->tokens_whole) {
			v->flags |= VERDICT_F_OVER_TOKENS | VERDICT_F_OVER_FOR_GOOD;
			return;
		}
		__u64 used = window_count(w->tokens_start, w->tokens, now);
		if (used != 0 && used + charge > limit->tokens_per_minute) {
			v->flags |= VERDICT_F_OVER_TOKENS;
			return;
		}
	}
	if (limit->requests_per_minute)
		window_add(&w->requests_start, &w->requests, now, 1);
	if (limit->tokens_per_minute)
		window_add(&w->tokens_start, &w->tokens, now, charge);
	v->flags |= VERDICT_F_COUNTED;
}

#endif /* NEXUS_LIMITS_BPF_H_ */
