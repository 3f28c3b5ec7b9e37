/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The configuration maps the balancer (xdp_maps.h) and the health checks'
 * TC program (maglev_hc.bpf.c) both read: one declaration, so the two can
 * never disagree on what maglevd reuses between them (the pinned maps of
 * the XDP program are handed to the TC program by hc_encap.c).
 */
#ifndef MAGLEV_XDP_CFG_MAPS_H
#define MAGLEV_XDP_CFG_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maglev_maps.h"

/* The global config: MACs, outer source prefixes, limits. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_config);
} maglev_cfg SEC(".maps");

/* ifindex -> that interface's MACs (include/maglev_maps.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAGLEV_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct maglev_if_l2);
} maglev_ifl2 SEC(".maps");

/* Interface ifindex's own MACs, NULL: the config's pair. Looked up only
 * while some entry differs from that pair (maglev_config.if_l2_differs,
 * kept by the library): with one interface, or all alike, the hash lookup,
 * the largest single cost found on the hot path (docs/datapath.md), is
 * skipped and the result is the same.
 */
static __always_inline const struct maglev_if_l2 *maglev_if_l2(const struct maglev_config *cfg,
							       __u32 ifindex)
{
	if (!cfg->if_l2_differs)
		return NULL;
	return bpf_map_lookup_elem(&maglev_ifl2, &ifindex);
}

#endif /* MAGLEV_XDP_CFG_MAPS_H */
