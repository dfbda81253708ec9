// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor under bench/kernel-bench.sh's real-traffic figures: an XDP and a TC program that do
 * nothing. With kernel.bpf_stats_enabled the kernel times every program run with two sched_clock()
 * reads around it, and in generic (skb) XDP the packet reaches the program through the same path
 * whatever the program does; what these two programs report under the same traffic is what any
 * program pays on this machine before its first instruction does work. Bench only: not in the jar.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK 0 /* linux/pkt_cls.h: a #define, so not in vmlinux.h */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int nexus_empty_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("tc")
int nexus_empty_tc(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}
