/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Encapsulation toward the backend: IPIP in the four family combinations
 * (the outer family is the backend's, the inner the client's) or GUE (outer
 * IP + UDP + 4-byte GUE v0 header + inner IP). The frame keeps its VLAN
 * tags and leaves by XDP_TX to the configured next hop.
 *
 * Outer header fields (docs/datapath.md has the byte layout):
 *   IPv4: tos = inner DSCP/ECN, id 0, DF, ttl 64, source = src4 prefix with
 *         the host bits taken from the flow fold (below), checksum computed.
 *   IPv6: traffic class = inner DSCP/ECN, flow label = fold & 0xfffff,
 *         hop limit 64, source = src6 prefix, low 32 host bits from the fold.
 *   GUE:  UDP source 0x8000 | (fold & 0x7fff), destination the VIP's
 *         gue_port, checksum 0 (RFC 6935 allows it for tunnels; our decap
 *         does not check it), GUE version 0, flags 0, hlen 0 (5 with second
 *         chance's private data, include/maglev_gue.h), proto = 4 or 41.
 *   The inner TTL / hop limit is decremented (RFC 2003 3.1).
 */
#ifndef MAGLEV_XDP_ENCAP_H
#define MAGLEV_XDP_ENCAP_H

#include "xdp_consts.h"
#include "xdp_parse.h"
#include "xdp_counters.h"

static __always_inline __u32 maglev_outer_src4(const struct maglev_config *cfg, __u32 fold)
{
	return maglev_outer_src_word(cfg->src4_prefix, bpf_htonl(fold),
				     bpf_htonl(maglev_outer_host_mask(cfg->src4_plen, 0)));
}

static __always_inline void maglev_outer_src6(const struct maglev_config *cfg, __u32 fold,
					      __u32 *src)
{
	src[0] = cfg->src6_prefix[0];
	src[1] = cfg->src6_prefix[1];
	src[2] = cfg->src6_prefix[2];
	src[3] = maglev_outer_src_word(cfg->src6_prefix[3], bpf_htonl(fold),
				       bpf_htonl(maglev_outer_host_mask(cfg->src6_plen, 96)));
}

/* Decrement the inner TTL / hop limit in place (before the head moves). */
static __always_inline int maglev_dec_ttl(struct xdp_md *ctx, const struct maglev_pkt *pkt)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 vb = maglev_vlan_bytes(pkt->l2_len);

	if (pkt->key.family == MAGLEV_AF_INET) {
		struct iphdr *iph = data + ETH_HLEN + vb;
		__u32 check;

		if ((void *)(iph + 1) > data_end)
			return -1;
		/* RFC 1624 incremental update, as ip_decrease_ttl() does. */
		check = iph->check;
		check += bpf_htons(0x0100);
		iph->check = (__u16)(check + (check >= 0xffff));
		iph->ttl--;
	} else {
		struct ipv6hdr *ip6 = data + ETH_HLEN + vb;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		ip6->hop_limit--;
	}
	return 0;
}

/*
 * Prepend the outer headers. Returns the XDP action (counted). The caller
 * has checked TTL and MTU.
 */
static __always_inline int maglev_encap(struct xdp_md *ctx, const struct maglev_pkt *pkt,
					const struct maglev_backend *be,
					const struct maglev_backend *prev, __u8 encap,
					__u16 gue_port, const struct maglev_config *cfg,
					__u32 reason)
{
	int outer6 = be->family == MAGLEV_AF_INET6;
	int gue = encap == MAGLEV_ENCAP_GUE;
	/* Second chance: the previous owner in a GUE private field. */
	__u32 opt = gue && prev ? sizeof(struct maglev_gue_prev) : 0;
	__u32 over = (outer6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		     (gue ? sizeof(struct udphdr) + MAGLEV_GUE_HLEN : 0) + opt;
	__u8 inner_proto = pkt->key.family == MAGLEV_AF_INET ? IPPROTO_IPIP : IPPROTO_IPV6;
	__u32 fold = maglev_outer_fold(pkt->key.src, pkt->key.sport, pkt->key.dport);
	__u32 vb = maglev_vlan_bytes(pkt->l2_len), t1, t2;
	const struct maglev_if_l2 *l2;
	void *data, *data_end, *old, *l3;
	struct ethhdr *eth;
	__u32 saddr, daddr, sum;
	__u16 w0, w1, w4;
	__be16 *etype;
	void *next;

	if (maglev_dec_ttl(ctx, pkt))
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	if (bpf_xdp_adjust_head(ctx, -(int)over))
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (over > 52 + sizeof(struct maglev_gue_prev))
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	old = data + over;
	/* Every frame here has at least 22 bytes past the old L2 start. */
	if (old + 22 > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	t1 = *(__u32 *)(old + 12);
	t2 = *(__u32 *)(old + 16);
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	/* Both MACs in four word stores (a memcpy into the packed Ethernet
	 * header would be twelve byte loads and stores): the pair sits at
	 * offsets 0 and 6 of the interface's entry, 16 and 22 of the config,
	 * both 8-byte aligned. The interface's own pair first (XDP_TX leaves
	 * by the interface the frame came in on).
	 */
	_Static_assert(__builtin_offsetof(struct maglev_config, nexthop_mac) == 16 &&
			       __builtin_offsetof(struct maglev_config, src_mac) == 22 &&
			       __builtin_offsetof(struct maglev_if_l2, src_mac) == 6,
		       "MAC word copies assume these offsets");
	l2 = maglev_if_l2(cfg, ctx->ingress_ifindex);
	if (l2) {
		*(__u32 *)(data + 0) = *(const __u32 *)&l2->nexthop_mac[0];
		*(__u16 *)(data + 4) = *(const __u16 *)&l2->nexthop_mac[4];
		*(__u16 *)(data + 6) = *(const __u16 *)&l2->src_mac[0];
		*(__u32 *)(data + 8) = *(const __u32 *)&l2->src_mac[2];
	} else {
		*(__u32 *)(data + 0) = *(const __u32 *)&cfg->nexthop_mac[0];
		*(__u16 *)(data + 4) = *(const __u16 *)&cfg->nexthop_mac[4];
		*(__u16 *)(data + 6) = *(const __u16 *)&cfg->src_mac[0];
		*(__u32 *)(data + 8) = *(const __u32 *)&cfg->src_mac[2];
	}
	/* VLAN tags (TPID + TCI) move with the MAC header. */
	if (vb >= 4)
		*(__u32 *)(data + 12) = t1;
	if (vb >= 8)
		*(__u32 *)(data + 16) = t2;

	etype = data + 12 + vb;
	if ((void *)(etype + 1) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	*etype = outer6 ? bpf_htons(ETH_P_IPV6) : bpf_htons(ETH_P_IP);
	l3 = data + ETH_HLEN + vb;
	if (outer6) {
		struct ipv6hdr *o = l3;

		if ((void *)(o + 1) > data_end)
			return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
		*(__be32 *)o = bpf_htonl(0x60000000U | ((__u32)pkt->tos << 20) | (fold & 0xfffff));
		o->payload_len = bpf_htons(pkt->l3_len + over - sizeof(*o));
		o->nexthdr = gue ? IPPROTO_UDP : inner_proto;
		o->hop_limit = MAGLEV_OUTER_TTL;
		maglev_outer_src6(cfg, fold, (__u32 *)&o->saddr);
		__builtin_memcpy(&o->daddr, be->addr, 16);
		next = o + 1;
	} else {
		struct iphdr *o = l3;

		if ((void *)(o + 1) > data_end)
			return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
		/* Sum the header from registers: reading back the fields
		 * just stored in pieces stalls store forwarding.
		 */
		w0 = bpf_htons(0x4500 | pkt->tos);
		w1 = bpf_htons(pkt->l3_len + over);
		w4 = bpf_htons((MAGLEV_OUTER_TTL << 8) | (gue ? IPPROTO_UDP : inner_proto));
		saddr = maglev_outer_src4(cfg, fold);
		daddr = be->addr[0];
		sum = w0 + w1 + bpf_htons(MAGLEV_IP_DF) + w4 + (saddr & 0xffff) + (saddr >> 16) +
		      (daddr & 0xffff) + (daddr >> 16);
		*(__u16 *)o = w0;
		o->tot_len = w1;
		*(__u32 *)&o->id = bpf_htonl(MAGLEV_IP_DF); /* id 0, DF */
		*(__u16 *)&o->ttl = w4;
		o->check = maglev_csum_fold(sum);
		o->saddr = saddr;
		o->daddr = daddr;
		next = o + 1;
	}
	if (gue) {
		struct udphdr *uh = next;
		struct maglev_gue_hdr *gh = next + sizeof(*uh);

		if ((void *)(gh + 1) > data_end)
			return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
		uh->source = bpf_htons(MAGLEV_GUE_SPORT(fold));
		uh->dest = gue_port;
		uh->len = bpf_htons(pkt->l3_len + sizeof(*uh) + MAGLEV_GUE_HLEN + opt);
		uh->check = 0;
		gh->ver_c_hlen = 0;
		gh->proto = inner_proto;
		gh->flags = 0;
		if (opt) {
			struct maglev_gue_prev *gp = (void *)(gh + 1);

			if ((void *)(gp + 1) > data_end || !prev)
				return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
			/* Flags stay 0: private data (include/maglev_gue.h). */
			gh->ver_c_hlen = MAGLEV_GUE_PREV_WORDS;
			gp->type = MAGLEV_GUE_PREV_TYPE;
			gp->family = prev->family;
			gp->pad = 0;
			__builtin_memcpy(gp->addr, prev->addr, sizeof(gp->addr));
		}
	}
	return maglev_verdict(reason, XDP_TX);
}

#endif /* MAGLEV_XDP_ENCAP_H */
