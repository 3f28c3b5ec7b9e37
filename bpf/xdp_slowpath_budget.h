/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The slow path's budget (issue 14 item 7): packets passed up for the slow
 * path (fragments, IPv4 options on ICMP, IPv6 extension headers XDP does
 * not walk (AH too), too big without DF, and the ICMP errors of the types
 * the module forwards that XDP passes: maglev_pass_icmp_error() in
 * xdp_counters.h, issue 31 item 6) cost the stack and the module far more than
 * a forwarded packet, and any sender can make them (one NOP option). Per
 * CPU, at most maglev_config.slow_path_limit of them per second go up, with
 * a burst of 10 ms worth; the rest are dropped as drop_slow_path. 0 means
 * unlimited.
 *
 * GCRA (a token bucket kept as one time): tat is when the bucket is next
 * empty; a packet is admitted if tat - now stays within the burst, and
 * pushes tat one interval on. Per-CPU state: no atomics, no sharing.
 *
 * The hook is maglev_verdict() (xdp_counters.h): only passes with one of
 * these reasons reach it, and for constant reasons the test folds away.
 */
#ifndef MAGLEV_XDP_SLOWPATH_BUDGET_H
#define MAGLEV_XDP_SLOWPATH_BUDGET_H

#include "xdp_maps.h"

/* One bucket holds 1 / MAGLEV_SLOW_PATH_BURST_DIV s of the limit (10 ms). */
#define MAGLEV_SLOW_PATH_BURST_DIV 100

struct maglev_slowpath_bucket {
	__u64 tat_ns;
	/* Derived from limit, kept so that the divisions run only when the
	 * configured limit changes.
	 */
	__u64 interval_ns, burst_ns;
	__u32 limit;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_slowpath_bucket);
} maglev_slowbud SEC(".maps");

/* The reasons that send a VIP's packet to the slow path. */
static __always_inline int maglev_reason_is_slowpath(__u32 reason)
{
	return reason == MAGLEV_REASON_PASS_IP_FRAG || reason == MAGLEV_REASON_PASS_IPV6_FRAG ||
	       reason == MAGLEV_REASON_PASS_IP_OPTIONS || reason == MAGLEV_REASON_PASS_IPV6_EXT ||
	       reason == MAGLEV_REASON_PASS_NEED_FRAG;
}

/* 1: within this CPU's budget (and counted against it), 0: over it. A
 * subprogram of its own: off the fast path, and its locals stay out of the
 * callers' stack frames (inlined at every verdict they overflow 512 bytes).
 */
static __attribute__((noinline)) int maglev_slowpath_admit(void)
{
	struct maglev_slowpath_bucket *b;
	struct maglev_config *cfg;
	__u64 now, tat, interval, burst;
	__u32 zero = 0, limit, n;

	cfg = bpf_map_lookup_elem(&maglev_cfg, &zero);
	if (!cfg || !cfg->slow_path_limit)
		return 1;
	b = bpf_map_lookup_elem(&maglev_slowbud, &zero);
	if (!b)
		return 1;
	limit = cfg->slow_path_limit;
	if (b->limit != limit) {
		interval = 1000000000ULL / limit;
		n = limit / MAGLEV_SLOW_PATH_BURST_DIV;
		b->interval_ns = interval;
		b->burst_ns = interval * (n ? n : 1);
		b->limit = limit;
	}
	interval = b->interval_ns;
	burst = b->burst_ns;
	now = bpf_ktime_get_ns();
	tat = b->tat_ns > now ? b->tat_ns : now;
	if (tat - now + interval > burst)
		return 0;
	b->tat_ns = tat + interval;
	return 1;
}

#endif /* MAGLEV_XDP_SLOWPATH_BUDGET_H */
