// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * maglev-lb balancer: parse, VIP lookup, connection table, Maglev pick,
 * encapsulate, XDP_TX. docs/datapath.md walks through it.
 */
#include "xdp_consts.h"
#include "xdp_maps.h"
#include "xdp_counters.h"
#include "xdp_parse.h"
#include "xdp_lookup.h"
#include "xdp_conn.h"
#include "xdp_encap.h"
#include "xdp_icmp.h"
#include "xdp_hot.h"

/* A parse result (reason + 1) to its action: PASS_* pass, DROP_* drop. */
static __always_inline int maglev_verdict_r(int r)
{
	__u32 reason = r - 1;

	return maglev_verdict(reason, (int)maglev_reason_action(reason));
}

static __always_inline int maglev_is_syn(const struct maglev_pkt *pkt)
{
	/* SYN without ACK: a new connection attempt. */
	return pkt->key.proto == IPPROTO_TCP &&
	       (pkt->tcp_flags & (MAGLEV_TCP_SYN | MAGLEV_TCP_ACK)) == MAGLEV_TCP_SYN;
}

/*
 * A SYN for a recorded flow keeps the recorded backend (checked as for any
 * packet) if either
 * - the entry is closing (the client sent a FIN or RST) and its last
 *   packet came no more than tcp_closed_ns ago (a spoofed FIN or RST and a
 *   spoofed SYN must not move a live connection, whose backend answers the
 *   SYN with a challenge ACK, RFC 5961; a real new connection on the tuple
 *   loses nothing on its old backend while that is usable), or
 * - the flow has sent more than its first packet and was used since the
 *   bucket's reference bits were last cleared (an established connection),
 *   or
 * - the flow has sent nothing but its first packet less than
 *   MAGLEV_CONN_SYN_KEEP_NS ago (a SYN retransmit: the first SYN's backend
 *   holds the half-open connection, and a fresh pick may differ once the
 *   table or the bounded loads' marks changed).
 * A SYN for a closing entry idle longer (counted expired), an idle, or an
 * older one-packet entry takes the pick.
 */
static __always_inline int maglev_syn_keeps(const struct maglev_conn_bucket *b, int way,
					    const struct maglev_conn_slot *c)
{
	__u8 ref = b->ref[way & (MAGLEV_CONN_WAYS - 1)];

	if (c->flags & MAGLEV_CONN_F_CLOSING) {
		if ((__s64)(bpf_ktime_get_coarse_ns() - c->conn.last_seen_ns) <=
		    (__s64)maglev_tcp_closed_ns)
			return 1;
		maglev_count(MAGLEV_CTR_CONN_EXPIRED);
		return 0;
	}
	if (ref == MAGLEV_CONN_REF_USED)
		return 1;
	/* A TCP entry's last_seen_ns is when it was written. */
	return !ref && (__s64)(bpf_ktime_get_coarse_ns() - c->conn.last_seen_ns) <
			       (__s64)MAGLEV_CONN_SYN_KEEP_NS;
}

/* A client packet that says its connection is open: a SYN (one that keeps
 * the entry, maglev_syn_keeps), or data without FIN or RST.
 */
static __always_inline int maglev_tcp_opens(const struct maglev_pkt *pkt)
{
	return (pkt->tcp_flags & (MAGLEV_TCP_SYN | MAGLEV_TCP_ACK)) == MAGLEV_TCP_SYN ||
	       (pkt->tcp_data && !(pkt->tcp_flags & (MAGLEV_TCP_FIN | MAGLEV_TCP_RST)));
}

/* Entry e's flags set to flags, if its value word still holds c's (the
 * copy validated): flags shares the word with the check word, swapped only
 * while the word is still c's, so a way refilled meanwhile is left alone.
 */
static __always_inline void maglev_conn_set_flags(struct maglev_conn_slot *e,
						  const struct maglev_conn_slot *c, __u8 flags)
{
	struct maglev_conn_slot m = *c;
	__u64 o, n;

	m.flags = flags;
	__builtin_memcpy(&o, &c->encap, sizeof(o));
	__builtin_memcpy(&n, &m.encap, sizeof(n));
	__sync_val_compare_and_swap((__u64 *)&e->encap, o, n);
}

/* Where a packet goes: the backend and the VIP data the encapsulation needs. */
struct maglev_dest {
	struct maglev_backend *be;
	struct maglev_backend *prev; /* second chance: carried in GUE, or NULL */
	__u32 idx;
	__u32 vip_id;
	__u16 gue_port;
	__u8 encap;
	__u8 new_flow;
	__u8 spilled; /* bounded loads: a probe, not the pick, took this new flow */
};

/* The backend of entry c (the copy maglev_conn_find validated) if it may
 * still be used (backend flags, generation, UDP idle time), else 0
 * (counted). Only
 * UDP reads the clock, and writes the entry's way e only when last_seen is
 * more than udp_idle_ns/16 old (last_seen is not in the check word: if the
 * way was refilled meanwhile, its new flow's last_seen is refreshed).
 */
static __always_inline __u32 maglev_conn_usable(struct maglev_conn_slot *e,
						const struct maglev_conn_slot *c,
						const struct maglev_config *cfg,
						const struct maglev_pkt *pkt,
						struct maglev_backend **bep, __u64 *now, int icmp)
{
	__u32 idx = c->conn.backend_idx;
	struct maglev_backend *be = bpf_map_lookup_elem(&maglev_backends, &idx);

	if (!be || be->gen != c->conn.backend_gen || !maglev_backend_usable(be)) {
		maglev_count(MAGLEV_CTR_CONN_REPICK);
		return 0;
	}
	if (!icmp && pkt->key.proto == IPPROTO_UDP && cfg->udp_idle_ns) {
		__s64 idle;

		*now = bpf_ktime_get_coarse_ns();
		/* Signed: another CPU may have stored a later clock reading
		 * than ours since (a negative idle time, not a huge one).
		 */
		idle = (__s64)(*now - c->conn.last_seen_ns);
		if (idle > (__s64)cfg->udp_idle_ns) {
			maglev_count(MAGLEV_CTR_CONN_EXPIRED);
			return 0;
		}
		/* Refresh rarely: a write per packet would bounce the
		 * entry's cache line between CPUs.
		 */
		if (idle > (__s64)(cfg->udp_idle_ns >> 4))
			e->conn.last_seen_ns = *now;
	}
	/* TCP's clock readings stay here (not *now): fewer states for the
	 * verifier to walk the rest of the program with.
	 */
	if (!icmp && (c->flags & MAGLEV_CONN_F_CLOSING)) {
		/* After the client's FIN or RST (or a spoofed one) every packet
		 * keeps the backend: a half-closed client's ACKs, a live
		 * connection's data. A SYN kept here or data means open: the
		 * mark goes. Anything else refreshes the entry (rarely, as
		 * UDP), so only a SYN after tcp_closed_ns of silence re-picks.
		 */
		if (maglev_tcp_opens(pkt)) {
			maglev_conn_set_flags(e, c, c->flags & ~MAGLEV_CONN_F_CLOSING);
		} else {
			__u64 t = bpf_ktime_get_coarse_ns();

			if ((__s64)(t - c->conn.last_seen_ns) > (__s64)(maglev_tcp_closed_ns >> 4))
				e->conn.last_seen_ns = t;
		}
	} else if (!icmp && (pkt->tcp_flags & (MAGLEV_TCP_FIN | MAGLEV_TCP_RST))) {
		/* FIN or RST from the client (tcp_flags is 0 for UDP): closing
		 * from now, marked once. last_seen_ns is not in the check word.
		 */
		e->conn.last_seen_ns = bpf_ktime_get_coarse_ns();
		maglev_conn_set_flags(e, c, c->flags | MAGLEV_CONN_F_CLOSING);
	}
	*bep = be;
	return idx;
}

/* IPv4 options or IPv6 extension headers, read again from the packet (rare
 * path) rather than carried in pkt, where a flag would split the verifier's
 * states of the whole forwarding path in two.
 */
static __always_inline int maglev_has_l3_opts(struct xdp_md *ctx, const struct maglev_pkt *pkt)
{
	__u8 b[8];

	if (bpf_xdp_load_bytes(ctx, pkt->l2_len, b, sizeof(b)))
		return 1;
	if (pkt->key.family == MAGLEV_AF_INET)
		return b[0] != 0x45;
	return b[6] != pkt->key.proto;
}

/* TTL, MTU, counters, encapsulation. dst: the destination address as the
 * VIP key holds it (NULL for an ICMP error, not counted in hot flows).
 */
static __always_inline int maglev_send(struct xdp_md *ctx, const struct maglev_pkt *pkt,
				       const struct maglev_dest *d, const struct maglev_config *cfg,
				       const __u32 *dst, int icmp)
{
	struct maglev_backend *be = d->be;
	__u32 over, mtu;

	if (!be)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_NO_BACKEND);
	if (pkt->ttl <= 1)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_TTL);
	over = (be->family == MAGLEV_AF_INET6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
	       (d->encap == MAGLEV_ENCAP_GUE ? sizeof(struct udphdr) + MAGLEV_GUE_HLEN : 0) +
	       (d->prev ? sizeof(struct maglev_gue_prev) : 0);
	if (cfg->mtu && pkt->l3_len + over > cfg->mtu) {
		/* Never an ICMP error about an ICMP error (RFC 1122 3.2.2).
		 * The too-big quote is the fixed header and 8 bytes: with
		 * options those are not the ports, so the kernel answers.
		 */
		if (icmp || !pkt->df || maglev_has_l3_opts(ctx, pkt))
			return MAGLEV_PASS(MAGLEV_REASON_PASS_NEED_FRAG);
		mtu = cfg->mtu - over;
		if (pkt->key.family == MAGLEV_AF_INET)
			return maglev_too_big4(ctx, pkt->l2_len, mtu);
		return maglev_too_big6(ctx, pkt->l2_len,
				       mtu < MAGLEV_IPV6_MIN_MTU ? MAGLEV_IPV6_MIN_MTU : mtu);
	}
	maglev_count_fwd(d->vip_id, d->idx, pkt->frame_len, d->new_flow);
	if (d->new_flow && d->spilled)
		maglev_count_spill(d->vip_id);
	/* Hot flows: where the counters above are, while the fields of the
	 * key the encapsulation reads are live anyway (after it, they would
	 * have to be kept through it). The encapsulation fails only if the
	 * head cannot move.
	 */
	if (!icmp)
		maglev_hot_count(pkt, dst, d->vip_id, d->idx);
	return maglev_encap(ctx, pkt, be, d->prev, d->encap,
			    d->gue_port ? d->gue_port : bpf_htons(MAGLEV_GUE_PORT_DEFAULT), cfg,
			    icmp ? MAGLEV_REASON_TX_ICMP_FORWARD : MAGLEV_REASON_TX_FORWARD);
}

/* Maglev pick from the VIP's current table; 0 and *reason if none. *prev:
 * the slot's previous owner (0: none). A packet that opens a flow (bounded:
 * a TCP SYN, a UDP packet) honours the over-cap marks; any other packet,
 * and an ICMP error, follows the pick.
 */
static __always_inline __u32 maglev_pick_backend(const struct maglev_pkt *pkt,
						 const struct maglev_config *cfg,
						 struct maglev_dest *d, int *reason, __u32 *prev,
						 int bounded)
{
	__u32 idx = maglev_pick(pkt, cfg, d->vip_id, reason, prev, bounded ? &d->spilled : NULL);

	if (!idx)
		return 0;
	d->be = bpf_map_lookup_elem(&maglev_backends, &idx);
	if (!d->be || !maglev_backend_usable(d->be)) {
		*reason = MAGLEV_REASON_DROP_NO_BACKEND;
		return 0;
	}
	d->idx = idx;
	return idx;
}

/* Write the flow's entry into way (the flow's own, -1: choose one), within
 * the per-CPU new-flow limit.
 */
static __always_inline void maglev_record(const struct maglev_pkt *pkt,
					  const struct maglev_config *cfg,
					  const struct maglev_dest *d, __u32 gen, __u64 now,
					  struct maglev_conn_bucket *b, __u64 h, int way)
{
	__u32 tag = maglev_conn_tag(h), w;
	struct maglev_conn_slot *s;

	if (!maglev_insert_allowed(cfg, now)) {
		maglev_count(MAGLEV_CTR_CONN_INSERT_SKIP);
		/* An older entry of a reused tuple would send the rest of
		 * this connection elsewhere.
		 */
		if (way >= 0 && maglev_is_syn(pkt))
			b->tag[way & (MAGLEV_CONN_WAYS - 1)] = 0;
		return;
	}
	w = way >= 0 ? (__u32)way : maglev_conn_victim(b, tag, now);
	w &= MAGLEV_CONN_WAYS - 1;
	if (way < 0 && b->tag[w])
		maglev_count(MAGLEV_CTR_CONN_EVICT);
	s = &b->slot[w];
	__builtin_memcpy(&s->key, &pkt->key, sizeof(s->key));
	s->conn.backend_idx = d->idx;
	s->conn.backend_gen = d->be->gen;
	s->conn.last_seen_ns = now;
	s->vip_id = d->vip_id;
	s->vip_gen = gen;
	s->encap = d->encap;
	s->flags = 0;
	s->gue_port = d->gue_port;
	s->check = maglev_conn_check(h, s);
	b->ref[w] = 0;
	b->tag[w] = tag;
	maglev_count(MAGLEV_CTR_CONN_INSERT);
}

/* The entry already says what a fresh pick says (SYN retransmit, reused
 * tuple): nothing to write. A closing entry is rewritten: the SYN starts a
 * new connection, which must not inherit the closing mark.
 */
static __always_inline int maglev_conn_same(const struct maglev_conn_slot *e,
					    const struct maglev_dest *d, __u32 gen)
{
	return e->conn.backend_idx == d->idx && e->conn.backend_gen == d->be->gen &&
	       e->vip_id == d->vip_id && e->vip_gen == gen && e->encap == d->encap &&
	       e->gue_port == d->gue_port && !(e->flags & MAGLEV_CONN_F_CLOSING);
}

/* The VIP map changed but the entry's cached VIP (c, read from way e) is
 * still the flow's: mark it current. vip_id and vip_gen share one aligned
 * word, swapped only if it still holds c's, so a way another CPU refilled
 * meanwhile for another VIP, or revalidated already, is left alone; vip_gen
 * is not in the check word, so no reader sees the slot half rewritten.
 */
static __always_inline void maglev_conn_revalidate(struct maglev_conn_slot *e,
						   const struct maglev_conn_slot *c, __u32 gen)
{
	__u32 old[2] = {c->vip_id, c->vip_gen}, new[2] = {c->vip_id, gen};
	__u64 o, n;

	__builtin_memcpy(&o, old, sizeof(o));
	__builtin_memcpy(&n, new, sizeof(n));
	__sync_val_compare_and_swap((__u64 *)&e->vip_id, o, n);
}

/*
 * Second chance: a TCP packet with no connection entry that is no SYN, on
 * a second-chance VIP whose slot changed owner recently, may belong to a
 * connection the previous owner holds (another balancer, or this one before
 * its table was flushed, sent it there). It goes to the current owner with
 * the previous one carried in GUE, whose decap sends it on if no local
 * socket claims it. Not recorded: the next packet must carry it too. The
 * previous owner must still exist, and be of the current owner's family
 * (the backend rewrites the outer addresses in place).
 */
static __always_inline int maglev_second_chance(const struct maglev_pkt *pkt,
						const struct maglev_vip_info *vi,
						struct maglev_dest *d, __u32 prev, int syn)
{
	struct maglev_backend *pb;

	if (!prev || prev == d->idx || syn || pkt->key.proto != IPPROTO_TCP ||
	    vi->encap != MAGLEV_ENCAP_GUE || !(vi->flags & MAGLEV_VIP_F_SECOND_CHANCE))
		return 0;
	pb = bpf_map_lookup_elem(&maglev_backends, &prev);
	if (!pb || !maglev_backend_usable(pb) || pb->family != d->be->family)
		return 0;
	d->prev = pb;
	maglev_count(MAGLEV_CTR_SC_CARRIED);
	return 1;
}

/*
 * A TCP/UDP packet to a VIP address. Established flows are found in the
 * connection table first; while the VIP map has not changed since the entry
 * was written (vip_gen), the entry's cached VIP saves the VIP lookup.
 * Otherwise: VIP lookup, then the entry if it belongs to that VIP, else the
 * Maglev pick and a new entry (within the new-flow limit). A SYN always
 * takes the pick.
 */
static __always_inline int maglev_lb(struct xdp_md *ctx, struct maglev_pkt *pkt,
				     struct maglev_vip_key *vk, const struct maglev_vip_addr *va)
{
	struct maglev_conn_slot *e = NULL, c;
	struct maglev_conn_bucket *b;
	struct maglev_vip_info vi = {};
	struct maglev_dest d = {};
	struct maglev_config *cfg;
	__u32 zero = 0, gen, *genp, prev = 0;
	int reason = 0, way, syn;
	__u64 now = 0, h = 0;

	cfg = bpf_map_lookup_elem(&maglev_cfg, &zero);
	genp = bpf_map_lookup_elem(&maglev_vipgen, &zero);
	if (!cfg || !genp)
		return XDP_ABORTED;
	gen = *genp;
	syn = maglev_is_syn(pkt);
	b = maglev_conn_find(&pkt->key, &h, &way, &c);
	if (!b)
		return XDP_ABORTED;
	/* From here on the entry is c; e is only written. */
	if (way >= 0) {
		e = &b->slot[way & (MAGLEV_CONN_WAYS - 1)];
		if (!syn || maglev_syn_keeps(b, way, &c))
			d.idx = maglev_conn_usable(e, &c, cfg, pkt, &d.be, &now, 0);
	}
	if (e && d.idx && c.vip_gen == gen) {
		d.vip_id = c.vip_id;
		d.encap = c.encap;
		d.gue_port = c.gue_port;
		/* Recently used: written only when it changes. A UDP flow
		 * (now read) is seen only by a packet in a later time slot
		 * than its last recorded one: PROVEN_NS later, or late
		 * enough to refresh last_seen_ns (a short udp_idle_ns); a
		 * TCP flow's age is judged at eviction (no clock here).
		 */
		if (b->ref[way & (MAGLEV_CONN_WAYS - 1)] != MAGLEV_CONN_REF_USED) {
			__s64 idle = (__s64)(now - c.conn.last_seen_ns);
			__u8 r = MAGLEV_CONN_REF_USED;

			if (now && !(b->ref[way & (MAGLEV_CONN_WAYS - 1)] & MAGLEV_CONN_REF_SEEN) &&
			    idle < (__s64)MAGLEV_CONN_PROVEN_NS &&
			    idle <= (__s64)(cfg->udp_idle_ns >> 4))
				r = MAGLEV_CONN_REF_RECENT;
			if (b->ref[way & (MAGLEV_CONN_WAYS - 1)] != r)
				b->ref[way & (MAGLEV_CONN_WAYS - 1)] = r;
		}
		maglev_count(MAGLEV_CTR_CONN_HIT);
	} else {
		if (e && c.vip_gen == gen) {
			/* A SYN (or a re-pick) of a known flow: the VIP map
			 * has not changed since the entry cached its VIP.
			 */
			d.vip_id = c.vip_id;
			d.encap = c.encap;
			d.gue_port = c.gue_port;
		} else {
			if (!maglev_vip_find(vk, va, pkt->key.dport, pkt->key.proto, &vi))
				return MAGLEV_PASS(MAGLEV_REASON_PASS_NOT_VIP);
			d.vip_id = vi.vip_id;
			d.encap = vi.encap;
			d.gue_port = vi.gue_port;
		}
		if (e && d.idx && c.vip_id == d.vip_id) {
			/* Same VIP after a VIP map change: keep the backend. */
			if (c.encap == d.encap && c.gue_port == d.gue_port)
				maglev_conn_revalidate(e, &c, gen);
			maglev_count(MAGLEV_CTR_CONN_HIT);
		} else {
			/* The over-cap marks only for a packet that opens a
			 * flow: a TCP SYN, or UDP (its entry is its flow). A
			 * TCP miss that is no SYN (evicted, expired, skipped
			 * under new_flow_limit, moved here by ECMP) belongs
			 * to a connection its pick may hold: a probe's
			 * backend would reset it.
			 */
			if (!maglev_pick_backend(pkt, cfg, &d, &reason, &prev,
						 syn || pkt->key.proto == IPPROTO_UDP)) {
				maglev_count(MAGLEV_CTR_CONN_MISS);
				return maglev_verdict(reason, XDP_DROP);
			}
			if (syn && e && maglev_conn_same(&c, &d, gen)) {
				maglev_count(MAGLEV_CTR_CONN_HIT);
			} else if (!e && maglev_second_chance(pkt, &vi, &d, prev, syn)) {
				maglev_count(MAGLEV_CTR_CONN_MISS);
			} else if (way == MAGLEV_CONN_WAY_BUSY) {
				/* Never over a way with this key: it may be
				 * another CPU rewriting this flow's entry.
				 */
				maglev_count(MAGLEV_CTR_CONN_MISS);
				maglev_count(MAGLEV_CTR_CONN_INSERT_SKIP);
				d.new_flow = 1;
			} else {
				maglev_count(MAGLEV_CTR_CONN_MISS);
				d.new_flow = 1;
				/* Every entry records when it was written
				 * (a TCP flow's age decides whether it is
				 * proven, maglev_conn_unproven).
				 */
				if (!now)
					now = bpf_ktime_get_coarse_ns();
				maglev_record(pkt, cfg, &d, gen, now, b, h, way);
			}
		}
	}
	/* One send for all cases: the verifier walks it once. */
	return maglev_send(ctx, pkt, &d, cfg, vk->addr, 0);
}

/* An ICMP error about the flow in pkt->key of VIP vip: it follows the flow
 * but never creates or refreshes an entry.
 */
static __always_inline int maglev_icmp_forward(struct xdp_md *ctx, struct maglev_pkt *pkt,
					       const struct maglev_vip_info *vip)
{
	struct maglev_conn_slot c;
	struct maglev_conn_bucket *b;
	struct maglev_dest d = {};
	struct maglev_config *cfg;
	__u64 now = 0, h = 0;
	int reason = 0, way;
	__u32 zero = 0, prev;

	cfg = bpf_map_lookup_elem(&maglev_cfg, &zero);
	if (!cfg)
		return XDP_ABORTED;
	d.vip_id = vip->vip_id;
	d.encap = vip->encap;
	d.gue_port = vip->gue_port;
	b = maglev_conn_find(&pkt->key, &h, &way, &c);
	if (b && way >= 0 && c.vip_id == d.vip_id)
		d.idx = maglev_conn_usable(&b->slot[way & (MAGLEV_CONN_WAYS - 1)], &c, cfg, pkt,
					   &d.be, &now, 1);
	if (!d.idx && !maglev_pick_backend(pkt, cfg, &d, &reason, &prev, 0))
		return maglev_verdict(reason, XDP_DROP);
	return maglev_send(ctx, pkt, &d, cfg, NULL, 1);
}

/* The address filter slot of vk; NULL when no VIP key maps there. */
static __always_inline struct maglev_vip_addr *maglev_filter(const struct maglev_vip_key *vk)
{
	__u32 slot = maglev_vip_filter_slot(vk->addr, vk->family);
	struct maglev_vip_addr *va = bpf_map_lookup_elem(&maglev_vaddrs, &slot);

	if (!va || !*(__u64 *)va)
		return NULL;
	return va;
}

/* vk (address and family, port and proto 0) is a VIP address, not only a
 * filter slot it shares with one.
 */
static __always_inline int maglev_vip_addr_exact(const struct maglev_vip_key *vk)
{
	return bpf_map_lookup_elem(&maglev_vipaddrs, vk) != NULL;
}

static __always_inline int maglev_icmp4(struct xdp_md *ctx, void *data, __u32 l2, struct iphdr *iph,
					__u32 tot, struct maglev_vip_key *vk)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct icmphdr *ic = (void *)(iph + 1);
	struct maglev_vip_info *vip;
	struct maglev_pkt pkt;
	struct iphdr *in;
	__u16 *ports;

	if ((void *)(ic + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L4_TRUNC);
	if (ic->type == ICMP_ECHO) {
		if (!maglev_vip_addr_exact(vk))
			return MAGLEV_PASS(MAGLEV_REASON_PASS_NOT_VIP);
		return maglev_echo4(data, iph, ic);
	}
	if (ic->type == ICMP_TIME_EXCEEDED)
		return maglev_pass_icmp_error();
	if (ic->type != ICMP_DEST_UNREACH)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_ICMP);
	in = (void *)(ic + 1);
	if ((void *)(in + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ICMP_BAD);
	if (in->version != 4 || in->ihl < 5)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ICMP_BAD);
	if (in->ihl != 5 || (in->protocol != IPPROTO_TCP && in->protocol != IPPROTO_UDP))
		return maglev_pass_icmp_error();
	ports = (void *)(in + 1);
	if ((void *)(ports + 2) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ICMP_BAD);
	/* The quoted packet went VIP -> client: reverse it into the flow key. */
	__builtin_memset(&pkt, 0, sizeof(pkt));
	pkt.key.family = MAGLEV_AF_INET;
	pkt.key.proto = in->protocol;
	pkt.key.src[0] = in->daddr;
	pkt.key.dst[0] = in->saddr;
	pkt.key.sport = ports[1];
	pkt.key.dport = ports[0];
	vk->addr[0] = in->saddr;
	vk->proto = in->protocol;
	vip = maglev_vip_find_any(vk, ports[0]);
	if (!vip)
		return maglev_pass_icmp_error();
	pkt.l2_len = l2;
	pkt.l3_len = tot;
	pkt.frame_len = data_end - data;
	pkt.tos = iph->tos;
	pkt.ttl = iph->ttl;
	return maglev_icmp_forward(ctx, &pkt, vip);
}

static __always_inline int maglev_v4(struct xdp_md *ctx, __u32 l2)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct maglev_vip_key vk = {};
	struct maglev_vip_addr *va;
	struct maglev_pkt pkt;
	struct iphdr *iph;
	__u32 tot, ihl;
	int r;

	if (l2 < 14 || l2 > 22)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L2_TRUNC);
	iph = data + l2;
	if ((void *)(iph + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L3_TRUNC);
	if (iph->version != 4 || iph->ihl < 5)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L3_BAD);
	vk.addr[0] = iph->daddr;
	vk.family = MAGLEV_AF_INET;
	va = maglev_filter(&vk);
	if (!va)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_NOT_VIP);
	tot = maglev_bound16(bpf_ntohs(iph->tot_len));
	if (tot < iph->ihl * 4U || (void *)iph + tot > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L3_BAD);
	if (iph->frag_off & bpf_htons(MAGLEV_IP_MF | MAGLEV_IP_OFFSET))
		return MAGLEV_PASS(MAGLEV_REASON_PASS_IP_FRAG);
	ihl = iph->ihl * 4U;
	/* Options ride along in the encapsulated packet; only ICMP errors,
	 * whose quote the ICMP path reads at a fixed offset, take the slow path.
	 */
	if (iph->protocol == IPPROTO_ICMP) {
		if (ihl != sizeof(*iph))
			return MAGLEV_PASS(MAGLEV_REASON_PASS_IP_OPTIONS);
		return maglev_icmp4(ctx, data, l2, iph, tot, &vk);
	}
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_L4_PROTO);
	__builtin_memset(&pkt, 0, sizeof(pkt));
	pkt.key.family = MAGLEV_AF_INET;
	pkt.key.proto = iph->protocol;
	pkt.key.src[0] = iph->saddr;
	pkt.key.dst[0] = iph->daddr;
	r = maglev_parse_l4(&pkt, (void *)iph + ihl, data_end, tot - ihl);
	if (r)
		return maglev_verdict_r(r);
	pkt.l2_len = l2;
	pkt.l3_len = tot;
	pkt.frame_len = data_end - data;
	pkt.tos = iph->tos;
	pkt.ttl = iph->ttl;
	pkt.df = !!(iph->frag_off & bpf_htons(MAGLEV_IP_DF));
	return maglev_lb(ctx, &pkt, &vk, va);
}

static __always_inline int maglev_icmp6(struct xdp_md *ctx, void *data, __u32 l2,
					struct ipv6hdr *ip6, struct maglev_vip_key *vk)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct icmp6hdr *ic = (void *)(ip6 + 1);
	struct maglev_vip_info *vip;
	struct maglev_pkt pkt;
	struct ipv6hdr *in;
	__u16 *ports;

	if ((void *)(ic + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L4_TRUNC);
	if (ic->icmp6_type == ICMPV6_ECHO_REQUEST) {
		if (!maglev_vip_addr_exact(vk))
			return MAGLEV_PASS(MAGLEV_REASON_PASS_NOT_VIP);
		return maglev_echo6(data, ip6, ic);
	}
	if (ic->icmp6_type == ICMPV6_TIME_EXCEED)
		return maglev_pass_icmp_error();
	if (ic->icmp6_type != ICMPV6_DEST_UNREACH && ic->icmp6_type != ICMPV6_PKT_TOOBIG)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_ICMP);
	in = (void *)(ic + 1);
	if ((void *)(in + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ICMP_BAD);
	if ((*(__u8 *)in >> 4) != 6)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ICMP_BAD);
	if (in->nexthdr != IPPROTO_TCP && in->nexthdr != IPPROTO_UDP)
		return maglev_pass_icmp_error();
	ports = (void *)(in + 1);
	if ((void *)(ports + 2) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ICMP_BAD);
	__builtin_memset(&pkt, 0, sizeof(pkt));
	pkt.key.family = MAGLEV_AF_INET6;
	pkt.key.proto = in->nexthdr;
	__builtin_memcpy(pkt.key.src, &in->daddr, 16);
	__builtin_memcpy(pkt.key.dst, &in->saddr, 16);
	pkt.key.sport = ports[1];
	pkt.key.dport = ports[0];
	__builtin_memcpy(vk->addr, &in->saddr, 16);
	vk->proto = in->nexthdr;
	vip = maglev_vip_find_any(vk, ports[0]);
	if (!vip)
		return maglev_pass_icmp_error();
	pkt.l2_len = l2;
	pkt.l3_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
	pkt.frame_len = data_end - data;
	pkt.tos = bpf_ntohl(*(__be32 *)ip6) >> 20;
	pkt.ttl = ip6->hop_limit;
	return maglev_icmp_forward(ctx, &pkt, vip);
}

static __always_inline int maglev_v6(struct xdp_md *ctx, __u32 l2)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct maglev_vip_key vk = {};
	struct maglev_vip_addr *va;
	struct maglev_pkt pkt;
	struct ipv6hdr *ip6;
	__u32 plen, off = 0;
	__u8 nh;
	int r;

	if (l2 < 14 || l2 > 22)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L2_TRUNC);
	ip6 = data + l2;
	if ((void *)(ip6 + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L3_TRUNC);
	if ((*(__u8 *)ip6 >> 4) != 6)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L3_BAD);
	__builtin_memcpy(vk.addr, &ip6->daddr, 16);
	vk.family = MAGLEV_AF_INET6;
	va = maglev_filter(&vk);
	if (!va)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_NOT_VIP);
	plen = maglev_bound16(bpf_ntohs(ip6->payload_len));
	if ((void *)(ip6 + 1) + plen > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_L3_BAD);
	nh = ip6->nexthdr;
	if (maglev_ipv6_is_ext(nh)) {
		r = maglev_ipv6_ext(ctx, l2, &nh, plen, &off);
		if (r)
			return maglev_verdict_r(r);
		/* ICMPv6 errors are read at a fixed offset: slow path. */
		if (nh != IPPROTO_TCP && nh != IPPROTO_UDP)
			return MAGLEV_PASS(MAGLEV_REASON_PASS_IPV6_EXT);
		/* True of any such packet (the headers are longer still), and
		 * it gives the verifier the packet range a packet without
		 * extension headers has here: one state for both.
		 */
		if (nh == IPPROTO_TCP) {
			if ((void *)(ip6 + 1) + sizeof(struct tcphdr) > data_end)
				return MAGLEV_DROP(MAGLEV_REASON_DROP_L4_TRUNC);
		} else if ((void *)(ip6 + 1) + sizeof(struct udphdr) > data_end) {
			return MAGLEV_DROP(MAGLEV_REASON_DROP_L4_TRUNC);
		}
	}
	if (nh == IPPROTO_ICMPV6)
		return maglev_icmp6(ctx, data, l2, ip6, &vk);
	/* The module walks AH (ipv6_skip_exthdr): the slow path's budget. */
	if (nh == IPPROTO_AH)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_IPV6_EXT);
	if (nh != IPPROTO_TCP && nh != IPPROTO_UDP)
		return MAGLEV_PASS(MAGLEV_REASON_PASS_L4_PROTO);
	__builtin_memset(&pkt, 0, sizeof(pkt));
	pkt.key.family = MAGLEV_AF_INET6;
	pkt.key.proto = nh;
	__builtin_memcpy(pkt.key.src, &ip6->saddr, 16);
	__builtin_memcpy(pkt.key.dst, &ip6->daddr, 16);
	r = maglev_parse_l4(&pkt, (void *)(ip6 + 1) + off, data_end, plen - off);
	if (r)
		return maglev_verdict_r(r);
	pkt.l2_len = l2;
	pkt.l3_len = plen + sizeof(*ip6);
	pkt.frame_len = data_end - data;
	pkt.tos = bpf_ntohl(*(__be32 *)ip6) >> 20;
	pkt.ttl = ip6->hop_limit;
	pkt.df = 1; /* IPv6 routers never fragment */
	return maglev_lb(ctx, &pkt, &vk, va);
}

SEC("xdp")
int maglev_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__be16 proto = 0;
	__u32 l2 = 0;
	int r;

	r = maglev_parse_l2(data, data_end, &l2, &proto);
	if (r)
		return maglev_verdict_r(r);
	/* One bounded unknown instead of three constants: the verifier
	 * walks the rest of the program once, not once per VLAN depth.
	 */
	l2 = ETH_HLEN + maglev_vlan_bytes(l2);
	if (proto == bpf_htons(ETH_P_IP))
		return maglev_v4(ctx, l2);
	if (proto == bpf_htons(ETH_P_IPV6))
		return maglev_v6(ctx, l2);
	return MAGLEV_PASS(MAGLEV_REASON_PASS_NOT_IP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
