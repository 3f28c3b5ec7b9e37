// SPDX-License-Identifier: GPL-2.0-only
/*
 * Encapsulation toward a backend, in the XDP program's wire format: IPIP in
 * all four family pairs (IPv4 or IPv6 inner by the VIP, IPv4 or IPv6 outer
 * by the backend) or GUE (include/maglev_gue.h: outer UDP to the VIP's GUE
 * port, the GUE header naming the inner protocol, with second chance the
 * slot's previous owner in its optional fields, the inner IP packet). The
 * balancer is a forwarding hop: the inner TTL / hop limit is decremented
 * (RFC 2003 3.1). The outer packet goes out via ip_local_out/ip6_local_out,
 * so routing, the OUTPUT hooks and fragmentation of an outer packet larger
 * than the path MTU are the stack's: the outer header never sets DF, and
 * IPv6 outer packets may be fragmented here.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/dsfield.h>
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

/* Host bits of a prefix within one 32-bit word, host order. */
static u32 maglev_host_mask(unsigned int plen)
{
	return plen >= 32 ? 0 : 0xffffffffU >> plen;
}

/* src4 itself at /32; inside a shorter prefix the host bits are the fold's. */
static __be32 maglev_outer_src4(const struct maglev_settings *cfg, u32 fold)
{
	u32 m = maglev_host_mask(cfg->src4_plen);

	if (!cfg->src4)
		return 0;
	return htonl((ntohl(cfg->src4) & ~m) | (fold & m));
}

/* As in XDP, only the last 32 bits vary, whatever the prefix length. */
static void maglev_outer_src6(const struct maglev_settings *cfg, u32 fold,
			      struct in6_addr *src)
{
	unsigned int plen = cfg->src6_plen;
	u32 m = plen >= 96 ? maglev_host_mask(plen - 96) : 0xffffffffU;

	*src = cfg->src6;
	if (ipv6_addr_any(src))
		return;
	src->s6_addr32[3] = htonl((ntohl(src->s6_addr32[3]) & ~m) | (fold & m));
}

/* Bytes of UDP + GUE in front of the inner packet (0: IPIP). */
static int maglev_gue_len(bool gue, const struct maglev_pick *p)
{
	if (!gue)
		return 0;
	return sizeof(struct udphdr) + sizeof(struct maglev_gue_hdr) +
	       (p->prev ? sizeof(struct maglev_gue_prev) : 0);
}

/* UDP and GUE headers, the previous owner in the options if p carries one. */
static void maglev_gue_push(struct sk_buff *skb, u32 params, u32 fold, u8 inner_proto,
			    const struct maglev_pick *p)
{
	struct maglev_gue_hdr *gh;
	struct udphdr *uh;

	if (p->prev) {
		struct maglev_gue_prev *gp = skb_push(skb, sizeof(*gp));

		gp->type = MAGLEV_GUE_PREV_TYPE;
		gp->family = p->prev->family;
		gp->pad = 0;
		memcpy(gp->addr, p->prev->addr.words, sizeof(gp->addr));
	}
	gh = skb_push(skb, sizeof(*gh));
	gh->ver_c_hlen = p->prev ? MAGLEV_GUE_PREV_WORDS : 0;
	gh->proto = inner_proto;
	gh->flags = p->prev ? htons(MAGLEV_GUE_F_PREV) : 0;
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
static void maglev_drop(struct maglev_net *mn, const struct maglev_pick *p,
			enum maglev_genl_stat why, struct sk_buff *skb)
{
	maglev_count(mn, why, 1);
	this_cpu_inc(p->vip->stats->drops);
	kfree_skb(skb);
}

/* Account for what the stack did with the outer packet: a VIP's packets
 * and bytes count only what was handed on successfully.
 */
static void maglev_sent(struct maglev_net *mn, const struct maglev_pick *p,
			const struct maglev_flow *fl, int err, unsigned int inner_len)
{
	if (net_xmit_eval(err)) {
		maglev_count(mn, MAGLEV_STAT_TX_ERROR, 1);
		this_cpu_inc(p->vip->stats->drops);
		return;
	}
	maglev_count(mn, MAGLEV_STAT_FORWARDED, 1);
	maglev_count(mn, MAGLEV_STAT_FORWARDED_BYTES, inner_len);
	if (p->prev)
		maglev_count(mn, MAGLEV_STAT_SC_CARRIED, 1);
	if (fl->icmp)
		maglev_count(mn, MAGLEV_STAT_ICMP_FORWARDED, 1);
	this_cpu_inc(p->vip->stats->packets);
	this_cpu_add(p->vip->stats->bytes, inner_len);
}

static void maglev_xmit4(struct net *net, struct maglev_net *mn, const struct maglev_pick *p,
			 const struct maglev_flow *fl, struct sk_buff *skb, u32 fold,
			 u8 inner_proto, u8 tos, unsigned int inner_len)
{
	u32 params = READ_ONCE(p->vip->params);
	bool gue = maglev_vip_encap(params) == MAGLEV_ENCAP_GUE;
	int hlen = sizeof(struct iphdr) + maglev_gue_len(gue, p);
	struct flowi4 fl4 = {
		.daddr = p->be->addr.v4,
		.saddr = maglev_outer_src4(p->cfg, fold),
		.flowi4_proto = gue ? IPPROTO_UDP : inner_proto,
		.flowi4_mark = skb->mark,
		/* A per-flow source from a prefix need not be a local address. */
		.flowi4_flags = FLOWI_FLAG_ANYSRC,
	};
	struct iphdr *iph;
	struct rtable *rt;

	/* A reassembled datagram near 64 KiB: tot_len would wrap. */
	if (skb->len + hlen > IP_MAX_MTU) {
		maglev_drop(mn, p, MAGLEV_STAT_TOO_BIG, skb);
		return;
	}
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt)) {
		maglev_drop(mn, p, MAGLEV_STAT_NO_ROUTE, skb);
		return;
	}
	if (skb_cow_head(skb, LL_RESERVED_SPACE(rt->dst.dev) + hlen)) {
		ip_rt_put(rt);
		maglev_drop(mn, p, MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	if (gue)
		maglev_gue_push(skb, params, fold, inner_proto, p);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->frag_off = 0;
	iph->ttl = ip4_dst_hoplimit(&rt->dst);
	iph->protocol = fl4.flowi4_proto;
	iph->saddr = fl4.saddr;
	iph->daddr = fl4.daddr;
	iph->tot_len = htons(skb->len);
	__ip_select_ident(net, iph, 1);
	if (gue)
		maglev_gue_csum4(skb, fl4.saddr, fl4.daddr);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_dst_set(skb, &rt->dst);
	maglev_sent(mn, p, fl, ip_local_out(net, NULL, skb), inner_len);
}

static void maglev_xmit6(struct net *net, struct maglev_net *mn, const struct maglev_pick *p,
			 const struct maglev_flow *fl, struct sk_buff *skb, u32 fold,
			 u8 inner_proto, u8 tos, unsigned int inner_len)
{
	u32 params = READ_ONCE(p->vip->params);
	bool gue = maglev_vip_encap(params) == MAGLEV_ENCAP_GUE;
	int hlen = sizeof(struct ipv6hdr) + maglev_gue_len(gue, p);
	struct flowi6 fl6 = {
		.daddr = p->be->addr.v6,
		.flowi6_proto = gue ? IPPROTO_UDP : inner_proto,
		.flowi6_mark = skb->mark,
	};
	struct dst_entry *dst = NULL;
	struct ipv6hdr *ip6h;

	/* payload_len is 16 bits and the module sends no jumbograms. */
	if (skb->len + hlen - sizeof(*ip6h) > IPV6_MAXPLEN) {
		maglev_drop(mn, p, MAGLEV_STAT_TOO_BIG, skb);
		return;
	}
	maglev_outer_src6(p->cfg, fold, &fl6.saddr);
	if (ip6_dst_lookup(net, NULL, &dst, &fl6)) {
		maglev_drop(mn, p, MAGLEV_STAT_NO_ROUTE, skb);
		return;
	}
	if (skb_cow_head(skb, LL_RESERVED_SPACE(dst->dev) + hlen)) {
		dst_release(dst);
		maglev_drop(mn, p, MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	if (gue)
		maglev_gue_push(skb, params, fold, inner_proto, p);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	/* The flow label carries the flow fold, for ECMP past the balancer. */
	ip6_flow_hdr(ip6h, tos, htonl(fold & MAGLEV_FLOWLABEL_BITS));
	ip6h->nexthdr = fl6.flowi6_proto;
	ip6h->hop_limit = ip6_dst_hoplimit(dst);
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = fl6.daddr;
	if (gue)
		maglev_gue_csum6(skb, &fl6.saddr, &fl6.daddr);
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	/* Let ip6_fragment split an outer packet larger than the path MTU. */
	skb->ignore_df = 1;
	skb_dst_set(skb, dst);
	maglev_sent(mn, p, fl, ip6_local_out(net, NULL, skb), inner_len);
}

/* Inner TTL / hop limit: drop at 1, else decrement (checksum updated). */
static int maglev_dec_ttl(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		if (ip_hdr(skb)->ttl <= 1)
			return -ETIMEDOUT;
		if (skb_ensure_writable(skb, sizeof(struct iphdr)))
			return -ENOMEM;
		ip_decrease_ttl(ip_hdr(skb));
		return 0;
	}
	if (ipv6_hdr(skb)->hop_limit <= 1)
		return -ETIMEDOUT;
	if (skb_ensure_writable(skb, sizeof(struct ipv6hdr)))
		return -ENOMEM;
	ipv6_hdr(skb)->hop_limit--;
	return 0;
}

static void maglev_xmit_one(struct net *net, struct maglev_net *mn, const struct maglev_pick *p,
			    const struct maglev_flow *fl, struct sk_buff *skb, u32 fold)
{
	unsigned int inner_len = skb->len;
	u8 inner_proto, tos;
	int err;

	/*
	 * Resolve a pending checksum now: the outer packet may be fragmented
	 * and its receiver must see a finished inner packet.
	 */
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb)) {
		maglev_drop(mn, p, MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	err = maglev_dec_ttl(skb);
	if (err) {
		maglev_drop(mn, p, err == -ETIMEDOUT ? MAGLEV_STAT_TTL_EXPIRED :
			    MAGLEV_STAT_ENCAP_ERROR, skb);
		return;
	}
	if (skb->protocol == htons(ETH_P_IP)) {
		inner_proto = IPPROTO_IPIP;
		tos = ipv4_get_dsfield(ip_hdr(skb));
	} else {
		inner_proto = IPPROTO_IPV6;
		tos = ipv6_get_dsfield(ipv6_hdr(skb));
	}
	/* Not for us any more: drop conntrack, dst and receive metadata. */
	skb_scrub_packet(skb, false);
	skb->ip_summed = CHECKSUM_NONE;

	if (p->be->family == MAGLEV_AF_INET)
		maglev_xmit4(net, mn, p, fl, skb, fold, inner_proto, tos, inner_len);
	else
		maglev_xmit6(net, mn, p, fl, skb, fold, inner_proto, tos, inner_len);
}

void maglev_xmit(struct net *net, struct maglev_net *mn, const struct maglev_pick *p,
		 const struct maglev_flow *fl, struct sk_buff *skb)
{
	u32 fold = maglev_flow_fold(fl);
	struct sk_buff *segs, *seg, *next;

	if (!skb_is_gso(skb)) {
		maglev_xmit_one(net, mn, p, fl, skb, fold);
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
		maglev_xmit_one(net, mn, p, fl, seg, fold);
	}
}
