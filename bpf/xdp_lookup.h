/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * VIP lookup, connection table and the Maglev pick.
 */
#ifndef MAGLEV_XDP_LOOKUP_H
#define MAGLEV_XDP_LOOKUP_H

#include "xdp_maps.h"
#include "xdp_counters.h"
#include "xdp_parse.h"
#include "maglev_hash.h"
#include "maglev_bounded.h"

/* The VIP of key vk from the cache, copied to *out; 0: not cached. */
static __always_inline int maglev_vip_cached(const struct maglev_vip_key *vk,
					     struct maglev_vip_info *out)
{
	__u32 i = maglev_vip_cache_index(vk);
	struct maglev_vip_cache_slot *c = bpf_map_lookup_elem(&maglev_vipcache, &i);
	struct maglev_vip_info v;

	if (!c || !maglev_vip_key_eq(&c->key, vk))
		return 0;
	v = c->info;
	if (maglev_vip_cache_check(vk, &v) != c->check)
		return 0;
	*out = v;
	return 1;
}

/* One VIP key: the cache, else the hash map. */
static __always_inline int maglev_vip_get(const struct maglev_vip_key *vk,
					  struct maglev_vip_info *out)
{
	struct maglev_vip_info *vip;

	if (maglev_vip_cached(vk, out))
		return 1;
	vip = bpf_map_lookup_elem(&maglev_vips, vk);
	if (!vip)
		return 0;
	*out = *vip;
	return 1;
}

/* vk holds the destination address and family; exact port first, then the
 * all-ports VIP, each only if the address filter says such a key exists.
 * The VIP is copied to *out; 0: no VIP.
 */
static __always_inline int maglev_vip_find(struct maglev_vip_key *vk,
					   const struct maglev_vip_addr *va, __u16 port, __u8 proto,
					   struct maglev_vip_info *out)
{
	int ports, any;

	if (proto == IPPROTO_TCP) {
		ports = va->tcp_ports;
		any = va->tcp_any;
	} else {
		ports = va->udp_ports;
		any = va->udp_any;
	}
	vk->proto = proto;
	if (ports) {
		vk->port = port;
		if (maglev_vip_get(vk, out))
			return 1;
	}
	if (any) {
		vk->port = 0;
		return maglev_vip_get(vk, out);
	}
	return 0;
}

/* Same, without the address filter (ICMP errors: the inner source is the VIP). */
static __always_inline struct maglev_vip_info *maglev_vip_find_any(struct maglev_vip_key *vk,
								   __u16 port)
{
	struct maglev_vip_info *vip;

	vk->port = port;
	vip = bpf_map_lookup_elem(&maglev_vips, vk);
	if (vip)
		return vip;
	vk->port = 0;
	return bpf_map_lookup_elem(&maglev_vips, vk);
}

static __always_inline __u64 maglev_pkt_hash(const struct maglev_pkt *pkt,
					     const struct maglev_config *cfg)
{
	struct maglev_seed seed = {.k0 = cfg->seed_k0, .k1 = cfg->seed_k1};
	const struct maglev_flow_key *k = &pkt->key;

	if (k->family == MAGLEV_AF_INET)
		return maglev_flow_hash_v4(&seed, k->src[0], k->dst[0], k->sport, k->dport,
					   k->proto);
	return maglev_flow_hash_v6(&seed, k->src, k->dst, k->sport, k->dport, k->proto);
}

static __always_inline int maglev_overcap_marked(__u32 idx)
{
	__u32 *m = bpf_map_lookup_elem(&maglev_overcap, &idx);

	return m && *m;
}

/* maglev_bounded_probe()'s mark test: the over-cap map (ctx unused). */
static __always_inline int maglev_overcap_cb(const void *ctx, __u32 idx)
{
	return maglev_overcap_marked(idx);
}

/*
 * Bounded loads: if the pick idx of flow hash h in VIP vip_id's table is
 * over its cap, the first backend under cap on the flow's seeded probe
 * sequence (include/maglev_bounded.h); 0: none. Only packets that open a
 * flow come here (a TCP SYN, a UDP packet, neither with a usable entry): a
 * recorded flow never moves, nor does a TCP connection whose entry is gone
 * (its next packets are no SYN and go to the pick). A global function: the
 * verifier checks it once, on its own, instead of once for every state of its
 * callers (inlined, the eight probes nearly tripled the program's verified
 * instructions).
 */
__attribute__((noinline)) int maglev_probe(__u32 vip_id, __u32 idx, __u64 h, __u64 k0, __u64 k1)
{
	struct maglev_seed seed = {.k0 = k0, .k1 = k1};
	__u32 zero = 0, *t;
	void *table;

	if (!maglev_overcap_marked(idx))
		return 0;
	table = bpf_map_lookup_elem(&maglev_tables, &vip_id);
	if (!table)
		return 0;
	t = bpf_map_lookup_elem(table, &zero);
	if (!t)
		return 0;
	return (int)maglev_bounded_probe(&seed, h, t, MAGLEV_TABLE_SIZE, maglev_overcap_cb, NULL);
}

static __always_inline int maglev_backend_usable(const struct maglev_backend *be)
{
	return be->flags & (MAGLEV_BACKEND_F_UP | MAGLEV_BACKEND_F_DRAIN);
}

static __always_inline int maglev_idx_usable(__u32 idx)
{
	struct maglev_backend *be = bpf_map_lookup_elem(&maglev_backends, &idx);

	return be && maglev_backend_usable(be);
}

/* Backend slot of this flow in the VIP's current table; 0: none. The inner
 * map pointer is taken once, so the whole lookup sees one table: *prev is
 * the slot's previous owner in that same table (0: none). spilled non-NULL:
 * a packet that opens a flow, which honours the over-cap marks.
 */
static __always_inline __u32 maglev_pick(const struct maglev_pkt *pkt,
					 const struct maglev_config *cfg, __u32 vip_id, int *reason,
					 __u32 *prev, __u8 *spilled)
{
	struct maglev_table *t;
	__u32 slot, zero = 0, idx;
	void *table;
	__u64 h;
	int j;

	table = bpf_map_lookup_elem(&maglev_tables, &vip_id);
	if (!table) {
		*reason = MAGLEV_REASON_DROP_NO_TABLE;
		return 0;
	}
	t = bpf_map_lookup_elem(table, &zero);
	h = maglev_pkt_hash(pkt, cfg);
	slot = maglev_slot(h, MAGLEV_TABLE_SIZE);
	/* Always in range, but the verifier does not track the range of a
	 * modulo: hide the value from the compiler so the check stays.
	 */
	asm volatile("" : "+r"(slot));
	if (!t || slot >= MAGLEV_TABLE_SIZE) {
		*reason = MAGLEV_REASON_DROP_NO_TABLE;
		return 0;
	}
	idx = t->owner[slot];
	*prev = t->prev[slot];
	if (!idx) {
		*reason = MAGLEV_REASON_DROP_NO_BACKEND;
	} else if (spilled) {
		j = maglev_probe(vip_id, idx, h, cfg->seed_k0, cfg->seed_k1);
		if (j > 0) {
			idx = (__u32)j;
			*spilled = 1;
		}
	} else if (!maglev_idx_usable(idx)) {
		/* A pick held in its slots while down (settle_ms): any other
		 * packet is re-picked as if the table had been rebuilt without
		 * it, to the probe sequence's first unmarked backend.
		 */
		j = maglev_probe(vip_id, idx, h, cfg->seed_k0, cfg->seed_k1);
		if (j > 0)
			idx = (__u32)j;
	}
	return idx;
}

/* Per-CPU new-flow budget: at most new_flow_limit inserts per second. */
static __always_inline int maglev_insert_allowed(const struct maglev_config *cfg, __u64 now)
{
	struct maglev_ratelim *rl;
	__u32 zero = 0;

	if (!cfg->new_flow_limit)
		return 1;
	rl = bpf_map_lookup_elem(&maglev_ratelim, &zero);
	if (!rl)
		return 1;
	if (now - rl->window_start_ns >= 1000000000ULL) {
		rl->window_start_ns = now;
		rl->inserts = 0;
	}
	if (rl->inserts >= cfg->new_flow_limit)
		return 0;
	rl->inserts++;
	return 1;
}

#endif /* MAGLEV_XDP_LOOKUP_H */
