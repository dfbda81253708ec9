// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * TLB flushes seen in the router's process, per reason: the TLB shootdown IPIs that a process
 * sharing one address space between its tiers pays for mprotect/munmap/page migration (the
 * failure mode the one-process design must keep small). A separate object from the data path:
 * it attaches to a tracepoint, not to an interface, and loads and unloads with the metrics.
 *
 *   tp_btf/tlb_flush  nexus_tlb_flush  count tlb_flushes[reason] when current's tgid is the router's
 *
 * tp_btf (a BTF raw tracepoint) needs no tracefs mount. The filter is on the task running when the
 * event fires: flushes this process starts (send IPI, local and mm shootdowns) and the remote
 * shootdowns its other threads take; an IPI taken while another process runs on that CPU is not
 * counted (that CPU only runs our mm lazily).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "nexus_metrics.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time setting: the process whose flushes count (its tgid); 0 counts every process. */
const volatile __u32 target_tgid = 0;

/* Flush events per reason (see TLB_REASON_SLOTS), per CPU; read and summed by TlbFlushCounter. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TLB_REASON_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} tlb_flushes SEC(".maps");

SEC("tp_btf/tlb_flush")
int BPF_PROG(nexus_tlb_flush, int reason, unsigned long pages)
{
	if (target_tgid && (__u32)(bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__u32 key = reason >= 0 && reason < TLB_REASON_SLOTS - 1 ? (__u32)reason : TLB_REASON_SLOTS - 1;
	__u64 *count = bpf_map_lookup_elem(&tlb_flushes, &key);
	if (count)
		*count += 1;
	return 0;
}
