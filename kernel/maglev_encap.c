// SPDX-License-Identifier: GPL-2.0-only
/*
 * Encapsulation toward a backend, in the XDP program's wire format: IPIP in
 * all four family pairs (IPv4 or IPv6 inner by the VIP, IPv4 or IPv6 outer
 * by the backend) or GUE (include/maglev_gue.h: outer UDP to the VIP's GUE
 * port, the GUE header naming the inner protocol, with second chance the
 * slot's previous owner in its optional fields, the inner IP packet). The
 * balancer is a forwarding hop: the inner TTL / hop limit is decremented
 * (RFC 2003 3.1). The outer packet goes out via ip_local_out/ip6_local_out,
 * so routing and the OUTPUT hooks are the stack's. An inner packet that
 * would not fit the route's MTU with the outer headers is cut first when
 * it was reassembled here (or is IPv4 without DF), to fragments no larger
 * than the client's (maglev_refragment), so a backend without tunnel
 * devices still gets it; such fragments carry no second-chance previous
 * owner. One that may not be cut (IPv4 with DF, IPv6) is answered with ICMP
 * "fragmentation needed" / "packet too big" instead (maglev_too_big). Beyond
 * that (ICMP errors, IPv6 of at most 1280 bytes) the stack fragments the
 * outer packet: its header never sets DF, and IPv6 outer packets may be
 * fragmented here.
 */
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/dsfield.h>
#include <net/icmp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>

#include "maglev.h"
#include "maglev_gue.h"

/* The 20 bits of an IPv6 flow label, host order. */
#define MAGLEV_FLOWLABEL_BITS 0xfffff

/*
 * The per-flow fold shared with the XDP and TC programs (include/
 * maglev_hash.h): it picks the outer source inside the configured prefix, the
 * GUE source port and the IPv6 flow label, so a flow's outer packets look
 * the same whichever data plane sent them.
 */
static u32 maglev_flow_fold(const struct maglev_flow *fl)
{
	return maglev_outer_fold((const u32 *)fl->saddr.words, (__force u16)fl->sport,
				 (__force u16)fl->dport);
}

/* src4 itself at /32; inside a shorter prefix the host bits are the fold's. */
static __be32 maglev_outer_src4(const struct maglev_settings *cfg, u32 fold)
{
	if (!cfg->src4)
		return 0;
	return htonl(maglev_outer_src_word(ntohl(cfg->src4), fold,
					   maglev_outer_host_mask(cfg->src4_plen, 0)));
}

/* As in XDP, only the last 32 bits vary, whatever the prefix length. */
static void maglev_outer_src6(const struct maglev_settings *cfg, u32 fold,
			      struct in6_addr *src)
{
	u32 m = maglev_outer_host_mask(cfg->src6_plen, 96);

	*src = cfg->src6;
	if (ipv6_addr_any(src))
		return;
	src->s6_addr32[3] = htonl(maglev_outer_src_word(ntohl(src->s6_addr32[3]), fold, m));
}

/* Bytes of UDP + GUE in front of the inner packet (0: IPIP). */
static int maglev_gue_len(bool gue, const struct maglev_backend_entry *prev)
{
	if (!gue)
		return 0;
	return sizeof(struct udphdr) + sizeof(struct maglev_gue_hdr) +
	       (prev ? sizeof(struct maglev_gue_prev) : 0);
}

/* UDP and GUE headers, the previous owner in the options if prev is set. */
static void maglev_gue_push(struct sk_buff *skb, u32 params, u32 fold, u8 inner_proto,
			    const struct maglev_backend_entry *prev)
{
	struct maglev_gue_hdr *gh;
	struct udphdr *uh;

	if (prev) {
		struct maglev_gue_prev *gp = skb_push(skb, sizeof(*gp));

		gp->type = MAGLEV_GUE_PREV_TYPE;
		gp->family = prev->family;
		gp->pad = 0;
		memcpy(gp->addr, prev->addr.words, sizeof(gp->addr));
	}
	gh = skb_push(skb, sizeof(*gh));
	gh->ver_c_hlen = prev ? MAGLEV_GUE_PREV_WORDS : 0;
	gh->proto = inner_proto;
	/* Private data needs no flag, and fou drops any but P (maglev_gue.h). */
	gh->flags = 0;
	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(MAGLEV_GUE_SPORT(fold));
	uh->dest = maglev_vip_gue_port(params);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/* Full software checksum: the payload may be a reassembled frag_list skb. */
static void maglev_gue_csum4(struct sk_buff *skb, __be32 saddr, __be32 daddr)
{
	int off = skb_transport_offset(skb);
	struct udphdr *uh = udp_hdr(skb);
	__wsum csum = skb_checksum(skb, off, skb->len - off, 0);

	uh->check = csum_tcpudp_magic(saddr, daddr, skb->len - off, IPPROTO_UDP, csum);
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
}

static void maglev_gue_csum6(struct sk_buff *skb, const struct in6_addr *saddr,
			     const struct in6_addr *daddr)
{
	int off = skb_transport_offset(skb);
	struct udphdr *uh = udp_hdr(skb);
	__wsum csum = skb_checksum(skb, off, skb->len - off, 0);

	uh->check = csum_ipv6_magic(saddr, daddr, skb->len - off, IPPROTO_UDP, csum);
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
}

/* A packet of p->vip lost after the pick: counted by reason and per VIP. */
static void maglev_lost(struct maglev_net *mn, const struct maglev_sp_pick *p,
			enum maglev_genl_stat why)
{
	maglev_sp_count(mn, why, 1);
	this_cpu_inc(p->vip->stats->drops);
}

static void maglev_drop(struct maglev_net *mn, const struct maglev_sp_pick *p,
			enum maglev_genl_stat why, struct sk_buff *skb)
{
	maglev_lost(mn, p, why);
	kfree_skb(skb);
}

/* Account for one inner packet (all its fragments) once it was handed on:
 * a VIP's packets and bytes count only what was sent successfully.
 */
static void maglev_sent(struct maglev_net *mn, const struct maglev_sp_pick *p,
			const struct maglev_flow *fl, unsigned int inner_len, bool carried)
{
	maglev_sp_count(mn, MAGLEV_STAT_FORWARDED, 1);
	maglev_sp_count(mn, MAGLEV_STAT_FORWARDED_BYTES, inner_len);
	if (carried)
		maglev_sp_count(mn, MAGLEV_STAT_SC_CARRIED, 1);
	if (fl->icmp)
		maglev_sp_count(mn, MAGLEV_STAT_ICMP_FORWARDED, 1);
	if (p->spilled)
		maglev_sp_count(mn, MAGLEV_STAT_SPILLED, 1);
	this_cpu_inc(p->vip->stats->packets);
	this_cpu_add(p->vip->stats->bytes, inner_len);
}

/* What every outer packet of one inner packet (or of its fragments) shares. */
struct maglev_tx {
	struct net *net;
	const struct maglev_sp_pick *p;
	/* Second chance: the previous owner carried in GUE, or NULL. */
	const struct maglev_backend_entry *prev;
	struct dst_entry *dst; /* the outer route; one reference held */
	u32 params;
	u32 fold;
	int hlen; /* outer IP + UDP + GUE */
	bool gue;
	bool outer6;
	u8 inner_proto;
	u8 tos;
	union {
		struct flowi4 fl4;
		struct flowi6 fl6;
	};
	enum maglev_genl_stat err; /* first failure, 0: none */
};

/* Prepend the outer headers to skb (the inner packet or one fragment of
 * it) and send it; consumes skb. Returns 0 or the reason it was lost.
 */
static enum maglev_genl_stat maglev_push_send(struct maglev_tx *tx, struct sk_buff *skb)
{
	struct net_device *dev = tx->dst->dev;
	int err;

	if (skb_cow_head(skb, LL_RESERVED_SPACE(dev) + tx->hlen)) {
		kfree_skb(skb);
		return MAGLEV_STAT_ENCAP_ERROR;
	}
	if (tx->gue)
		maglev_gue_push(skb, tx->params, tx->fold, tx->inner_proto, tx->prev);
	if (!tx->outer6) {
		struct iphdr *iph = skb_push(skb, sizeof(*iph));

		skb_reset_network_header(skb);
		iph->version = 4;
		iph->ihl = sizeof(*iph) >> 2;
		iph->tos = tx->tos;
		iph->frag_off = 0;
		iph->ttl = ip4_dst_hoplimit(tx->dst);
		iph->protocol = tx->fl4.flowi4_proto;
		iph->saddr = tx->fl4.saddr;
		iph->daddr = tx->fl4.daddr;
		iph->tot_len = htons(skb->len);
		__ip_select_ident(tx->net, iph, 1);
		if (tx->gue)
			maglev_gue_csum4(skb, tx->fl4.saddr, tx->fl4.daddr);
		skb->protocol = htons(ETH_P_IP);
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		skb_dst_set(skb, dst_clone(tx->dst));
		err = ip_local_out(tx->net, NULL, skb);
	} else {
		struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

		skb_reset_network_header(skb);
		/* The flow label carries the flow fold, for ECMP past the balancer. */
		ip6_flow_hdr(ip6h, tx->tos, htonl(tx->fold & MAGLEV_FLOWLABEL_BITS));
		ip6h->nexthdr = tx->fl6.flowi6_proto;
		ip6h->hop_limit = ip6_dst_hoplimit(tx->dst);
		ip6h->saddr = tx->fl6.saddr;
		ip6h->daddr = tx->fl6.daddr;
		if (tx->gue)
			maglev_gue_csum6(skb, &tx->fl6.saddr, &tx->fl6.daddr);
		skb->protocol = htons(ETH_P_IPV6);
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		/* Let ip6_fragment split an outer packet larger than the path MTU. */
		skb->ignore_df = 1;
		skb_dst_set(skb, dst_clone(tx->dst));
		err = ip6_local_out(tx->net, NULL, skb);
	}
	return net_xmit_eval(err) ? MAGLEV_STAT_TX_ERROR : 0;
}

/*
 * Re-fragmenting the inner packet (issue 14 item 10). A backend that runs
 * only the decap program has no tunnel device and no reassembly of outer
 * packets: an outer packet the stack fragments never reaches its inner
 * socket. So the inner packet is cut into fragments no larger than those
 * the client sent (frag_max_size, recorded by the reassembly, as Open
 * vSwitch does after conntrack) and small enough that each outer packet
 * fits the route's MTU; each fragment is encapsulated on its own and the
 * backend's stack reassembles the inner packet. ip_do_fragment and
 * ip6_fragment read the MTU from the skb's route: they get a dst of the
 * inner family on the stack, on the outer device, like OVS's.
 */
static DEFINE_PER_CPU(struct maglev_tx *, maglev_frag_tx);

static unsigned int maglev_frag_dst_mtu(const struct dst_entry *dst)
{
	return READ_ONCE(dst->dev->mtu);
}

static struct dst_ops maglev_frag_dst_ops = {
	.family = AF_UNSPEC,
	.mtu = maglev_frag_dst_mtu,
};

static int maglev_frag_output(struct net *net, struct sock *sk, struct sk_buff *skb)
{
	struct maglev_tx *tx = this_cpu_read(maglev_frag_tx);
	enum maglev_genl_stat err;

	/* The fragment holds (a reference to) the on-stack dst: drop it. */
	skb_dst_drop(skb);
	err = maglev_push_send(tx, skb);
	if (err && !tx->err)
		tx->err = err;
	return 0;
}

/* skb: the whole inner packet; frag_size: the largest fragment to make. */
static void maglev_refragment(struct maglev_tx *tx, struct sk_buff *skb, unsigned int frag_size)
{
	int err;

	/* The hook runs in softirq; keep the per-CPU context ours throughout. */
	local_bh_disable();
	this_cpu_write(maglev_frag_tx, tx);
	skb->ignore_df = 1;
	if (skb->protocol == htons(ETH_P_IP)) {
		struct rtable rt = {};

		dst_init(&rt.dst, &maglev_frag_dst_ops, NULL, 1, DST_OBSOLETE_NONE, DST_NOCOUNT);
		rt.dst.dev = tx->dst->dev;
		skb_dst_set_noref(skb, &rt.dst);
		IPCB(skb)->frag_max_size = frag_size;
		err = ip_do_fragment(tx->net, NULL, skb, maglev_frag_output);
	} else {
		struct rt6_info rt6 = {};

		dst_init(&rt6.dst, &maglev_frag_dst_ops, NULL, 1, DST_OBSOLETE_NONE, DST_NOCOUNT);
		rt6.dst.dev = tx->dst->dev;
		skb_dst_set_noref(skb, &rt6.dst);
		IP6CB(skb)->frag_max_size = frag_size;
		err = ipv6_stub->ipv6_fragment(tx->net, NULL, skb, maglev_frag_output);
	}
	this_cpu_write(maglev_frag_tx, NULL);
	local_bh_enable();
	if (err && !tx->err)
		tx->err = MAGLEV_STAT_ENCAP_ERROR;
}

/* The outer route, source and addresses of tx; 0 or the reason to drop. */
static enum maglev_genl_stat maglev_route(struct maglev_tx *tx, const struct sk_buff *skb)
{
	const struct maglev_sp_pick *p = tx->p;

	if (!tx->outer6) {
		struct rtable *rt;

		tx->fl4 = (struct flowi4){
			.daddr = p->be->addr.v4,
			.saddr = maglev_outer_src4(p->cfg, tx->fold),
			.flowi4_proto = tx->gue ? IPPROTO_UDP : tx->inner_proto,
			.flowi4_mark = skb->mark,
			/* A per-flow source from a prefix need not be a local address. */
			.flowi4_flags = FLOWI_FLAG_ANYSRC,
		};
		rt = ip_route_output_key(tx->net, &tx->fl4);
		if (IS_ERR(rt))
			return MAGLEV_STAT_NO_ROUTE;
		tx->dst = &rt->dst;
		return 0;
	}
	tx->fl6 = (struct flowi6){
		.daddr = p->be->addr.v6,
		.flowi6_proto = tx->gue ? IPPROTO_UDP : tx->inner_proto,
		.flowi6_mark = skb->mark,
	};
	maglev_outer_src6(p->cfg, tx->fold, &tx->fl6.saddr);
	tx->dst = NULL;
	if (ip6_dst_lookup(tx->net, NULL, &tx->dst, &tx->fl6))
		return MAGLEV_STAT_NO_ROUTE;
	return 0;
}

/*
 * Whether the inner packet is cut before encapsulation, and to what size:
 * a reassembled one (frag_max: its largest fragment, 0 if it came whole),
 * or an IPv4 one without DF, that does not fit the route's MTU with the
 * outer headers. The others that do not fit were answered with ICMP
 * (maglev_too_big) unless they are ICMP errors or IPv6 of at most 1280
 * bytes: those go out whole and the stack fragments the outer packet (IPv6
 * routers do not fragment what they forward).
 */
static unsigned int maglev_frag_size(const struct maglev_tx *tx, const struct sk_buff *skb,
				     unsigned int frag_max)
{
	unsigned int mtu = dst_mtu(tx->dst), room;

	if (mtu <= tx->hlen)
		return 0;
	room = mtu - tx->hlen;
	if (skb->len <= room)
		return 0;
	if (!frag_max && (skb->protocol != htons(ETH_P_IP) ||
			  (ip_hdr(skb)->frag_off & htons(IP_DF))))
		return 0;
	return frag_max && frag_max < room ? frag_max : room;
}

/*
 * A packet that would not fit the route once encapsulated and may not be
 * cut (IPv4 with DF; IPv6, which came whole) is answered as the XDP program
 * answers such packets (bpf/xdp_icmp.h): ICMP "fragmentation needed" /
 * "packet too big" to the client with the MTU the outer headers leave, and
 * dropped (issue 31 item 5). XDP passes these up when they have IPv4
 * options or IPv6 extension headers; sent whole, the stack fragmented the
 * outer packet, which a backend without tunnel devices cannot use, and the
 * client's path-MTU discovery never heard of it. Never about an ICMP error
 * (RFC 1122 3.2.2); an IPv6 packet of at most 1280 bytes still goes whole,
 * as no smaller MTU may be told. Returns true if the packet is to be
 * dropped. The quote is the packet as it came (TTL not yet decremented).
 */
static bool maglev_too_big(const struct maglev_tx *tx, struct sk_buff *skb,
			   const struct maglev_flow *fl)
{
	unsigned int mtu = dst_mtu(tx->dst), room;
	struct flowi4 fl4 = {};
	struct rtable *rt;

	if (fl->icmp || mtu <= tx->hlen || skb->len <= mtu - tx->hlen)
		return false;
	room = mtu - tx->hlen;
	if (skb->protocol == htons(ETH_P_IPV6)) {
		if (skb->len <= IPV6_MIN_MTU)
			return false;
		icmpv6_send(skb, ICMPV6_PKT_TOOBIG, 0, max_t(unsigned int, room, IPV6_MIN_MTU));
		return true;
	}
	if (!(ip_hdr(skb)->frag_off & htons(IP_DF)))
		return false;
	/* icmp_send() wants a route, and before routing the skb has none. */
	fl4.daddr = ip_hdr(skb)->saddr;
	fl4.flowi4_mark = skb->mark;
	rt = ip_route_output_key(tx->net, &fl4);
	if (!IS_ERR(rt)) {
		skb_dst_drop(skb);
		skb_dst_set(skb, &rt->dst);
		icmp_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, htonl(room));
	}
	return true;
}

/* Inner TTL / hop limit (more than 1: checked first), decremented, the
 * checksum updated.
 */
static int maglev_dec_ttl(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		if (skb_ensure_writable(skb, sizeof(struct iphdr)))
			return -ENOMEM;
		ip_decrease_ttl(ip_hdr(skb));
		return 0;
	}
	if (skb_ensure_writable(skb, sizeof(struct ipv6hdr)))
		return -ENOMEM;
	ipv6_hdr(skb)->hop_limit--;
	return 0;
}

static void maglev_xmit_one(struct net *net, struct maglev_net *mn, const struct maglev_sp_pick *p,
			    const struct maglev_flow *fl, struct sk_buff *skb, u32 fold,
			    unsigned int frag_max)
{
	struct maglev_tx tx = {
		.net = net,
		.p = p,
		.params = READ_ONCE(p->vip->params),
		/* Not on a reassembled packet: its fragments would each carry
		 * it, and the backend cannot look up a socket for a fragment.
		 */
		.prev = frag_max ? NULL : p->prev,
		.fold = fold,
		.outer6 = p->be->family == MAGLEV_AF_INET6,
	};
	unsigned int inner_len = skb->len, size;
	enum maglev_genl_stat why;
	u8 ttl;

	tx.gue = maglev_vip_encap(tx.params) == MAGLEV_ENCAP_GUE;
	tx.hlen = (tx.outer6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		  maglev_gue_len(tx.gue, tx.prev);
	/* The outer length field would overflow (a reassembled datagram near
	 * 64 KiB; IPv6 payload_len is 16 bits and the module sends no
	 * jumbograms).
	 */
	if (skb->len + tx.hlen - (tx.outer6 ? sizeof(struct ipv6hdr) : 0) >
	    (tx.outer6 ? IPV6_MAXPLEN : IP_MAX_MTU)) {
		maglev_drop(mn, p, MAGLEV_STAT_TOO_BIG, skb);
		return;
	}
	/*
	 * Resolve a pending checksum now: the outer packet may be fragmented
	 * and its receiver must see a finished inner packet.
	 */
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb)) {
		maglev_drop(mn, p, MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	if (skb->protocol == htons(ETH_P_IP)) {
		tx.inner_proto = IPPROTO_IPIP;
		tx.tos = ipv4_get_dsfield(ip_hdr(skb));
		ttl = ip_hdr(skb)->ttl;
	} else {
		tx.inner_proto = IPPROTO_IPV6;
		tx.tos = ipv6_get_dsfield(ipv6_hdr(skb));
		ttl = ipv6_hdr(skb)->hop_limit;
	}
	/* Before the size, as in XDP and ip_forward(). */
	if (ttl <= 1) {
		maglev_drop(mn, p, MAGLEV_STAT_TTL_EXPIRED, skb);
		return;
	}
	why = maglev_route(&tx, skb);
	if (why) {
		maglev_drop(mn, p, why, skb);
		return;
	}
	/* A reassembled packet is cut instead (maglev_frag_size). */
	if (!frag_max && maglev_too_big(&tx, skb, fl)) {
		dst_release(tx.dst);
		maglev_drop(mn, p, MAGLEV_STAT_TOO_BIG, skb);
		return;
	}
	if (maglev_dec_ttl(skb)) {
		dst_release(tx.dst);
		maglev_drop(mn, p, MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	size = maglev_frag_size(&tx, skb, frag_max);
	/*
	 * Cut: no previous owner either. The backend cannot look up a socket
	 * for a fragment, so each would be sent on and the datagram lost.
	 * The fragments were sized with room for it.
	 */
	if (size && tx.prev) {
		tx.prev = NULL;
		tx.hlen -= sizeof(struct maglev_gue_prev);
	}
	/* Not for us any more: drop conntrack, dst and receive metadata. */
	skb_scrub_packet(skb, false);
	skb->ip_summed = CHECKSUM_NONE;
	if (size)
		maglev_refragment(&tx, skb, size);
	else
		tx.err = maglev_push_send(&tx, skb);
	dst_release(tx.dst);
	if (tx.err)
		maglev_lost(mn, p, tx.err);
	else
		maglev_sent(mn, p, fl, inner_len, tx.prev);
}

void maglev_xmit(struct net *net, struct maglev_net *mn, const struct maglev_sp_pick *p,
		 const struct maglev_flow *fl, struct sk_buff *skb)
{
	u32 fold = maglev_flow_fold(fl);
	struct sk_buff *segs, *seg, *next;
	unsigned int frag_max;

	/* The largest fragment of a reassembled packet, before the control
	 * block is reused.
	 */
	if (skb->protocol == htons(ETH_P_IP))
		frag_max = IPCB(skb)->frag_max_size;
	else
		frag_max = IP6CB(skb)->frag_max_size;
	if (!skb_is_gso(skb)) {
		maglev_xmit_one(net, mn, p, fl, skb, fold, frag_max);
		return;
	}
	/* A GRO aggregate: segment in software, every segment is the same flow. */
	segs = skb_gso_segment(skb, 0);
	if (IS_ERR_OR_NULL(segs)) {
		maglev_drop(mn, p, MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		maglev_xmit_one(net, mn, p, fl, seg, fold, 0);
	}
}
