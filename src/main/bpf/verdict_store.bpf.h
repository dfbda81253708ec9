/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Verdict storage, included by nexus_classify.bpf.c: where the XDP program puts a verdict and
 * where the TC chain and the data plane find it again.
 *
 *   routing_decisions  / routing_decisions6  LRU hash per 4-tuple (IPv4 / IPv6): every connection
 *   verdict_slots      / verdict_slots6      mmap-able arrays, one slot per hash of the 4-tuple,
 *                                            seqlocked: the data plane's syscall-free read
 *
 * Layouts, the slot hash and the seqlock protocol are in nexus_shared.h.
 */
#ifndef VERDICT_STORE_BPF_H
#define VERDICT_STORE_BPF_H

#define VS_FNV_PRIME 0x01000193u

/* Latest verdict per IPv4 client connection; LRU so idle connections age out. Read by the data plane. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1000000);
	__type(key, struct flow_key);
	__type(value, struct routing_decision);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} routing_decisions SEC(".maps");

/* The same for IPv6 clients (its own map: the 36-byte key would widen every IPv4 entry). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 262144);
	__type(key, struct flow_key6);
	__type(value, struct routing_decision);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} routing_decisions6 SEC(".maps");

/* IPv4 verdict slots, mmap'ed read-only by the data plane (VerdictSlots). */
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

/* routing_decision.check: the request-line hash continued (FNV-1a) over body_len's 8 bytes, LE. */
static __always_inline __u32 verdict_check(__u32 request_line_hash, __u64 body_len)
{
	__u32 h = request_line_hash;

#pragma unroll
	for (int i = 0; i < 8; i++)
		h = (h ^ ((body_len >> (i * 8)) & 0xff)) * VS_FNV_PRIME;
	return h;
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

/*
 * Seqlock writer. Two CPUs may write one slot at once (two connections with the same slot
 * index): the compare-and-swap makes the second one give up instead of interleaving, and its
 * verdict is in routing_decisions anyway. __sync builtins are full barriers (lock-prefixed on
 * x86), so the key and verdict stores land between the two seq updates.
 */
#define WRITE_SLOT(slot, flow_key_ptr, packed)                                              \
	do {                                                                                \
		__u32 seq_ = *(volatile __u32 *)&(slot)->seq;                              \
		if (!(seq_ & 1) && __sync_val_compare_and_swap(&(slot)->seq, seq_, seq_ + 1) == seq_) { \
			(slot)->key = *(flow_key_ptr);                                     \
			*(volatile __u64 *)&(slot)->verdict = (packed);                   \
			__sync_fetch_and_add(&(slot)->seq, 1);                             \
		}                                                                           \
	} while (0)

/*
 * A keep-alive connection already has an entry: overwrite it in place (an LRU update allocates a
 * fresh node each time, the costliest step of the program), with one 64-bit store.
 */
#define STORE_DECISION(map, key_ptr, rd)                                                    \
	({                                                                                  \
		struct routing_decision *cur_ = bpf_map_lookup_elem(map, key_ptr);        \
		if (cur_) {                                                                 \
			(rd).heads = cur_->heads + 1;                                       \
			*(volatile __u64 *)cur_ = pack_decision(&(rd));                    \
		} else {                                                                    \
			bpf_map_update_elem(map, key_ptr, &(rd), BPF_ANY);                  \
		}                                                                           \
		pack_decision(&(rd));                                                       \
	})

static __always_inline void store_verdict4(const struct flow_key *key, __u32 check, __u8 score, __u8 tier,
					   __u8 flags)
{
	struct routing_decision rd = { .check = check, .score = score, .tier = tier, .flags = flags, .heads = 1 };
	__u64 packed = STORE_DECISION(&routing_decisions, key, rd);
	__u32 index = slot_index4(key);
	struct verdict_slot *slot = bpf_map_lookup_elem(&verdict_slots, &index);

	if (slot)
		WRITE_SLOT(slot, key, packed);
}

static __always_inline void store_verdict6(const struct flow_key6 *key, __u32 check, __u8 score, __u8 tier,
					   __u8 flags)
{
	struct routing_decision rd = { .check = check, .score = score, .tier = tier, .flags = flags, .heads = 1 };
	__u64 packed = STORE_DECISION(&routing_decisions6, key, rd);
	__u32 index = slot_index6(key);
	struct verdict_slot6 *slot = bpf_map_lookup_elem(&verdict_slots6, &index);

	if (slot)
		WRITE_SLOT(slot, key, packed);
}

/* The TC chain's read: the tier of the connection's latest verdict, or -1 when it has none. */
static __always_inline int stored_tier4(const struct flow_key *key)
{
	struct routing_decision *rd = bpf_map_lookup_elem(&routing_decisions, key);

	return rd ? rd->tier : -1;
}

static __always_inline int stored_tier6(const struct flow_key6 *key)
{
	struct routing_decision *rd = bpf_map_lookup_elem(&routing_decisions6, key);

	return rd ? rd->tier : -1;
}

#endif /* VERDICT_STORE_BPF_H */
