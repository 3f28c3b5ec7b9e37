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

#endif /* MAGLEV_XDP_CFG_MAPS_H */
