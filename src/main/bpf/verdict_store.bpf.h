/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Verdict storage, included by nexus_classify.bpf.c: where the XDP program puts a verdict and
 * where the TC chain and the data plane find it again.
 *
 *   verdict_slots      / verdict_slots6      mmap-able arrays, one slot per hash of the 4-tuple,
 *                                            seqlocked: the primary store, read without a syscall
 *   routing_decisions  / routing_decisions6  small LRU hashes per 4-tuple (IPv4 / IPv6): the
 *                                            fallback for connections that do not hold their slot
 *
 * Layouts, the slot hash, the collision rule and the seqlock protocol are in nexus_shared.h.
 * Ordering: the seqlock relies on x86-64's ordered loads and on __sync builtins being full
 * barriers (lock-prefixed); barrier() (bpf_helpers.h) only keeps the compiler from moving loads
 * across the seq reads.
 */
#ifndef VERDICT_STORE_BPF_H
#define VERDICT_STORE_BPF_H


/* IPv4 verdicts of connections not in their slot (moved out by a collision); LRU so the gone age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VERDICT_FALLBACK);
	__type(key, struct flow_key);
	__type(value, struct routing_decision);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} routing_decisions SEC(".maps");

/* The same for IPv6 clients (its own map: the 36-byte key would widen every IPv4 entry). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VERDICT_FALLBACK6);
	__type(key, struct flow_key6);
	__type(value, struct routing_decision);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} routing_decisions6 SEC(".maps");

/* IPv4 verdict slots, the primary store, mmap'ed by the data plane (VerdictSlots). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VERDICT_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct verdict_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} verdict_slots SEC(".maps");

/* IPv6 verdict slots. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VERDICT_SLOTS6);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct verdict_slot6);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} verdict_slots6 SEC(".maps");

/* One step of the request-line hash and the verdict check (LINE_HASH_* in nexus_shared.h). */
static __always_inline __u64 line_mix(__u64 h, __u64 word)
{
	h = (h ^ word) * LINE_HASH_MULT;
	return h ^ (h >> 32);
}

/* routing_decision.check: the request-line hash and the body length, mixed. */
static __always_inline __u32 verdict_check(__u32 request_line_hash, __u64 body_len)
{
	return line_mix(line_mix(LINE_HASH_SEED, request_line_hash), body_len);
}

static __always_inline __u32 slot_mix(__u32 h, __u32 word)
{
	return (h ^ word) * SLOT_HASH_MULT;
}

static __always_inline __u32 slot_index4(const struct flow_key *k)
{
	__u32 h = 0;

	h = slot_mix(h, k->src_ip);
	h = slot_mix(h, k->dst_ip);
	h = slot_mix(h, (__u32)k->src_port | ((__u32)k->dst_port << 16));
	h ^= h >> 15;
	return h & (VERDICT_SLOTS - 1);
}

static __always_inline __u32 slot_index6(const struct flow_key6 *k)
{
	__u32 h = 0;

#pragma unroll
	for (int i = 0; i < 4; i++)
		h = slot_mix(h, k->src_ip[i]);
#pragma unroll
	for (int i = 0; i < 4; i++)
		h = slot_mix(h, k->dst_ip[i]);
	h = slot_mix(h, (__u32)k->src_port | ((__u32)k->dst_port << 16));
	h ^= h >> 15;
	return h & (VERDICT_SLOTS6 - 1);
}

static __always_inline __u64 pack_decision(const struct routing_decision *rd)
{
	return *(const __u64 *)rd;
}

static __always_inline bool same_key4(const struct flow_key *a, const struct flow_key *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->src_port == b->src_port &&
	       a->dst_port == b->dst_port;
}

static __always_inline bool same_key6(const struct flow_key6 *a, const struct flow_key6 *b)
{
	bool same = a->src_port == b->src_port && a->dst_port == b->dst_port;

#pragma unroll
	for (int i = 0; i < 4; i++)
		same = same && a->src_ip[i] == b->src_ip[i] && a->dst_ip[i] == b->dst_ip[i];
	return same;
}

/* The heads byte of a packed verdict (routing_decision.heads, byte 7 of the little-endian word). */
static __always_inline __u8 packed_heads(__u64 packed)
{
	return packed >> 56;
}

/*
 * Puts a verdict word into a fallback map. An existing entry is overwritten in place (an LRU update
 * allocates a fresh node each time, the costliest step of the program), with one 64-bit store.
 */
static __always_inline void fallback_put(void *map, const void *key, __u64 packed)
{
	__u64 *cur = bpf_map_lookup_elem(map, key);

	if (cur)
		*(volatile __u64 *)cur = packed;
	else
		bpf_map_update_elem(map, key, &packed, BPF_ANY);
}

/* The connection's head count in a fallback map (0 when it has no entry there). */
static __always_inline __u8 fallback_heads(void *map, const void *key)
{
	struct routing_decision *cur = bpf_map_lookup_elem(map, key);

	return cur ? cur->heads : 0;
}

/*
 * Stores rd (heads set here) for *key_ptr: in its slot of `slots`, else in `fallback` (see
 * nexus_shared.h). The slot's seq, key and verdict are read first; the compare-and-swap of seq
 * from that even value proves nobody wrote the slot since, so the holder moved to the fallback map
 * and the head count taken from the slot are the latest.
 */
#define STORE_VERDICT(slots, fallback, index, key_ptr, rd, same_key)                                \
	do {                                                                                        \
		__u32 index_ = (index);                                                            \
		typeof(*(slots).value) *slot_ = bpf_map_lookup_elem(&(slots), &index_);            \
		bool stored_ = false;                                                              \
		if (slot_) {                                                                       \
			__u32 seq_ = *(volatile __u32 *)&slot_->seq;                               \
			barrier();                                                                 \
			typeof(slot_->key) held_ = slot_->key;                                     \
			__u64 held_verdict_ = *(volatile __u64 *)&slot_->verdict;                 \
			barrier();                                                                 \
			if (!(seq_ & 1) && *(volatile __u32 *)&slot_->seq == seq_) {              \
				if (same_key(&held_, key_ptr)) {                                   \
					(rd).heads = packed_heads(held_verdict_) + 1;              \
				} else {                                                           \
					if (held_.dst_port != 0) /* not empty: keep it readable */ \
						fallback_put(&(fallback), &held_, held_verdict_);  \
					(rd).heads = fallback_heads(&(fallback), key_ptr) + 1;     \
				}                                                                  \
				if (__sync_val_compare_and_swap(&slot_->seq, seq_, seq_ + 1) == seq_) { \
					slot_->key = *(key_ptr);                                   \
					*(volatile __u64 *)&slot_->verdict = pack_decision(&(rd)); \
					__sync_fetch_and_add(&slot_->seq, 1);                      \
					stored_ = true;                                            \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		if (!stored_) { /* another CPU is writing the slot: the fallback map takes it */   \
			(rd).heads = fallback_heads(&(fallback), key_ptr) + 1;                     \
			fallback_put(&(fallback), key_ptr, pack_decision(&(rd)));                  \
		}                                                                                  \
	} while (0)

static __always_inline void store_verdict4(const struct flow_key *key, __u32 check, __u8 score, __u8 tier,
					   __u8 flags)
{
	struct routing_decision rd = { .check = check, .score = score, .tier = tier, .flags = flags };

	STORE_VERDICT(verdict_slots, routing_decisions, slot_index4(key), key, rd, same_key4);
}

static __always_inline void store_verdict6(const struct flow_key6 *key, __u32 check, __u8 score, __u8 tier,
					   __u8 flags)
{
	struct routing_decision rd = { .check = check, .score = score, .tier = tier, .flags = flags };

	STORE_VERDICT(verdict_slots6, routing_decisions6, slot_index6(key), key, rd, same_key6);
}

/*
 * The TC chain's read: the tier of the connection's latest verdict, from its slot (seqlocked, as
 * the data plane reads it) or else the fallback map; -1 when neither holds the connection.
 */
#define STORED_TIER(slots, fallback, index, key_ptr, same_key)                                      \
	({                                                                                          \
		int tier_ = -1;                                                                    \
		__u32 index_ = (index);                                                            \
		typeof(*(slots).value) *slot_ = bpf_map_lookup_elem(&(slots), &index_);            \
		if (slot_) {                                                                       \
			__u32 seq_ = *(volatile __u32 *)&slot_->seq;                               \
			barrier();                                                                 \
			bool same_ = same_key(&slot_->key, key_ptr);                               \
			__u8 slot_tier_ = *(volatile __u8 *)&slot_->verdict.tier;                  \
			barrier();                                                                 \
			if (same_ && !(seq_ & 1) && *(volatile __u32 *)&slot_->seq == seq_)       \
				tier_ = slot_tier_;                                                \
		}                                                                                  \
		if (tier_ < 0) {                                                                   \
			struct routing_decision *rd_ = bpf_map_lookup_elem(&(fallback), key_ptr);  \
			if (rd_)                                                                   \
				tier_ = rd_->tier;                                                 \
		}                                                                                  \
		tier_;                                                                             \
	})

static __always_inline int stored_tier4(const struct flow_key *key)
{
	return STORED_TIER(verdict_slots, routing_decisions, slot_index4(key), key, same_key4);
}

static __always_inline int stored_tier6(const struct flow_key6 *key)
{
	return STORED_TIER(verdict_slots6, routing_decisions6, slot_index6(key), key, same_key6);
}

#endif /* VERDICT_STORE_BPF_H */
