/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Included by nexus_classify.bpf.c: Ethernet / IPv4 or IPv6 / TCP up to the payload of a segment
 * to a data-plane port (parse_tcp), read by XDP and by the TC chain, and load_bytes for either context.
 */
#ifndef NEXUS_PARSE_BPF_H_
#define NEXUS_PARSE_BPF_H_

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define IPV6_HLEN 40
#define ETH_HLEN 14
#define MAX_HEADERS (ETH_HLEN + 60 + 60)
#define IP_FRAGMENT_MASK 0x3fff /* MF flag and fragment offset */

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

#endif /* NEXUS_PARSE_BPF_H_ */
