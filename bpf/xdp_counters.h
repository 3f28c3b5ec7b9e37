/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Counters. Every packet ends in exactly one reason (include/maglev_maps.h),
 * so the reason map accounts for all traffic the program saw; per-CPU array
 * lookups with a constant key are inlined by the verifier.
 */
#ifndef MAGLEV_XDP_COUNTERS_H
#define MAGLEV_XDP_COUNTERS_H

#include "xdp_maps.h"
#include "xdp_slowpath_budget.h"

static __always_inline int maglev_verdict(__u32 reason, int action)
{
	__u64 *c;

	/* The slow path's budget (xdp_slowpath_budget.h). */
	if (action == XDP_PASS && maglev_reason_is_slowpath(reason) && !maglev_slowpath_admit()) {
		reason = MAGLEV_REASON_DROP_SLOW_PATH;
		action = XDP_DROP;
	}
	c = bpf_map_lookup_elem(&maglev_reasons, &reason);

	if (c)
		*c += 1;
	return action;
}

/* Given the full enum name (MAGLEV_REASON_PASS_NOT_VIP), so that grep finds
 * every place a reason is counted.
 */
#define MAGLEV_PASS(r) maglev_verdict(r, XDP_PASS)
#define MAGLEV_DROP(r) maglev_verdict(r, XDP_DROP)
#define MAGLEV_TX(r)   maglev_verdict(r, XDP_TX)

/* An ICMP error of a type the slow-path module forwards (ICMPv4
 * unreachable and time exceeded, ICMPv6 unreachable, too big and time
 * exceeded), passed up as pass_icmp: within the slow path's budget, as the
 * reasons of maglev_reason_is_slowpath() are (issue 31 item 6). Other ICMP
 * passed as pass_icmp (neighbour discovery, echo replies) is not the
 * module's, and is not budgeted.
 */
static __always_inline int maglev_pass_icmp_error(void)
{
	if (!maglev_slowpath_admit())
		return MAGLEV_DROP(MAGLEV_REASON_DROP_SLOW_PATH);
	return MAGLEV_PASS(MAGLEV_REASON_PASS_ICMP);
}

static __always_inline void maglev_count(__u32 ctr)
{
	__u64 *c = bpf_map_lookup_elem(&maglev_ctrs, &ctr);

	if (c)
		*c += 1;
}

static __always_inline void maglev_count_fwd(__u32 vip_id, __u32 be_idx, __u64 bytes, int new_flow)
{
	struct maglev_vip_stats *vs = bpf_map_lookup_elem(&maglev_vipstat, &vip_id);
	struct maglev_backend_stats *bs = bpf_map_lookup_elem(&maglev_bestat, &be_idx);

	if (vs) {
		vs->packets++;
		vs->bytes += bytes;
		vs->new_flows += new_flow;
	}
	if (bs) {
		bs->packets++;
		bs->bytes += bytes;
		bs->new_flows += new_flow;
	}
}

static __always_inline void maglev_count_spill(__u32 vip_id)
{
	__u64 *c = bpf_map_lookup_elem(&maglev_vipspill, &vip_id);

	if (c)
		*c += 1;
}

#endif /* MAGLEV_XDP_COUNTERS_H */
