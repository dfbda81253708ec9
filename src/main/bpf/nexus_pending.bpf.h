/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included by nexus_classify.bpf.c: a request head whose body comes in the flow's next segment
 * (pending_bodies; docs/kernel-segments.md).
 */
#ifndef NEXUS_PENDING_BPF_H_
#define NEXUS_PENDING_BPF_H_

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

#endif /* NEXUS_PENDING_BPF_H_ */
