/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hot flows (include/maglev_hot.h): one packet in sample_every of each VIP
 * (on average), per CPU, goes into that VIP's heavy-hitter trackers. Off
 * at load (maglev_hot_on 0, the default) the verifier removes it all: it
 * costs nothing. Loaded on, a sample_every of 0 costs an inlined array
 * lookup and a branch per forwarded packet; above 0, a per-CPU countdown,
 * and the update on the sampled packets (docs/benchmarks.md "Hot flows").
 */
#ifndef MAGLEV_XDP_HOT_H
#define MAGLEV_XDP_HOT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "maglev_hot.h"
#include "xdp_parse.h"
#include "xdp_cfg_maps.h"
#include "xdp_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_hot_cfg);
} maglev_hotcfg SEC(".maps");

/* Set by the library before load (maglev_dp_opts.hot_flows): read-only, so
 * 0 makes every branch below dead code the verifier drops.
 */
const volatile __u32 maglev_hot_on = 0;

/* A key of 0 outside the stack. */
static const __u32 maglev_hot_zero;

/* By vip_id; the library sizes it to one entry while hot flows are off. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_MAX_VIPS);
	__type(key, __u32);
	__type(value, struct maglev_hot_vip);
} maglev_hot SEC(".maps");

/* The sampled packet's update: a function of its own, so that its
 * registers and spills stay out of the balancer's frame (near the
 * verifier's 512-byte stack limit) and its code out of the path of the
 * packets not sampled. The next sample comes 1 to 2 * every - 1 packets
 * later, at random (every on average): a fixed gap would alias with
 * periodic traffic (a client sending every tenth packet of a VIP, sampled
 * every fourth, is seen in one sample of five or none).
 */
static __noinline void maglev_hot_update(struct maglev_hot_vip *v, const struct maglev_flow_key *k,
					 __u32 len, __u32 be, __u32 every)
{
	struct maglev_config *cfg = bpf_map_lookup_elem(&maglev_cfg, &maglev_hot_zero);
	struct maglev_conn_params *p = bpf_map_lookup_elem(&maglev_connkey, &maglev_hot_zero);

	if (!v || !k || !cfg || !p)
		return;
	v->countdown = every > 1 ? 1 + bpf_get_prandom_u32() % (2 * every - 1) : 1;
	maglev_hot_sample(v, k, maglev_conn_hash(k, p->seed),
			  maglev_hot_src_hash(k->src, cfg->seed_k0), len, be,
			  bpf_get_prandom_u32());
}

/*
 * A packet of pkt's flow (destination address dst, the VIP key's copy) of
 * VIP vip_id, going to backend be. The flow's hash is computed again for a
 * sampled packet: carrying the connection table's one to here would keep
 * it in a register (or spilled) through the whole hit path.
 *
 * No address of the caller's pkt or destination goes to a call: one that
 * does (a pointer to the function above, or &d->vip_id as a map key) keeps
 * the whole struct in memory through the whole program, every field
 * stored and read back, even while hot flows are off and the verifier
 * drops this code (docs/benchmarks.md "Hot flows": that cost the IPv6 hit
 * 3-8 ns). Only the sampled branch copies the key, from fields the
 * encapsulation reads anyway and the VIP key (in memory anyway: a map
 * key), so no field lives longer than it did.
 */
static __always_inline void maglev_hot_count(const struct maglev_pkt *pkt, const __u32 *dst,
					     __u32 vip_id, __u32 be)
{
	struct maglev_flow_key k __attribute__((aligned(8)));
	struct maglev_hot_cfg *hc;
	struct maglev_hot_vip *v;

#ifdef MAGLEV_HOT_NO_CALL
	/* The build without the call site (userspace/bench/hot_callsite.sh). */
	return;
#endif
	if (!maglev_hot_on)
		return;
	hc = bpf_map_lookup_elem(&maglev_hotcfg, &maglev_hot_zero);
	if (!hc || !hc->sample_every)
		return;
	v = bpf_map_lookup_elem(&maglev_hot, &vip_id);
	if (!v)
		return;
	if (v->countdown > 1) {
		v->countdown--;
		return;
	}
	__builtin_memcpy(k.src, pkt->key.src, sizeof(k.src));
	__builtin_memcpy(k.dst, dst, sizeof(k.dst));
	k.sport = pkt->key.sport;
	k.dport = pkt->key.dport;
	k.proto = pkt->key.proto;
	k.family = pkt->key.family;
	k.pad = 0;
	maglev_hot_update(v, &k, pkt->frame_len, be, hc->sample_every);
}

#endif /* MAGLEV_XDP_HOT_H */
