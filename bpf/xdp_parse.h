/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing. Every read is preceded by an explicit bounds check against
 * data_end; functions return 0 or a reason (MAGLEV_REASON_*) + 1 so the
 * caller can count and act on it.
 */
#ifndef MAGLEV_XDP_PARSE_H
#define MAGLEV_XDP_PARSE_H

#include "xdp_consts.h"
#include "maglev_maps.h"

/* What the forwarding path needs to know about a VIP packet. */
struct maglev_pkt {
	struct maglev_flow_key key;
	__u32 l2_len;	 /* Ethernet + VLAN tags: 14, 18 or 22 */
	__u32 l3_len;	 /* IP packet length from its header */
	__u32 frame_len; /* bytes received */
	__u8 tos;	 /* DSCP + ECN (IPv6 traffic class) */
	__u8 ttl;
	__u8 tcp_flags;
	__u8 df; /* IPv4 don't-fragment */
};

#define MAGLEV_R(r) (MAGLEV_REASON_##r + 1)

/* Ethernet and up to two 802.1Q / 802.1ad tags. Returns 0 and sets
 * *l2_len / *proto, or MAGLEV_R(reason).
 */
static __always_inline int maglev_parse_l2(void *data, void *data_end, __u32 *l2_len, __be16 *proto)
{
	struct ethhdr *eth = data;
	struct maglev_vlan_hdr *vh;
	__be16 p;

	if ((void *)(eth + 1) > data_end)
		return MAGLEV_R(DROP_L2_TRUNC);
	p = eth->h_proto;
	*l2_len = sizeof(*eth);
	if (p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD)) {
		vh = (void *)(eth + 1);
		if ((void *)(vh + 1) > data_end)
			return MAGLEV_R(DROP_L2_TRUNC);
		p = vh->proto;
		*l2_len = sizeof(*eth) + sizeof(*vh);
		if (p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD)) {
			vh++;
			if ((void *)(vh + 1) > data_end)
				return MAGLEV_R(DROP_L2_TRUNC);
			p = vh->proto;
			*l2_len = sizeof(*eth) + 2 * sizeof(*vh);
			if (p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD))
				return MAGLEV_R(PASS_VLAN_DEPTH);
		}
	}
	*proto = p;
	return 0;
}

/* TCP or UDP header at l4, l4_len bytes of L4 according to the IP header. */
static __always_inline int maglev_parse_l4(struct maglev_pkt *pkt, void *l4, void *data_end,
					   __u32 l4_len)
{
	if (pkt->key.proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;
		__u32 doff;

		if ((void *)(th + 1) > data_end)
			return MAGLEV_R(DROP_L4_TRUNC);
		doff = th->doff;
		if (doff < 5 || doff * 4 > l4_len)
			return MAGLEV_R(DROP_L4_BAD);
		pkt->key.sport = th->source;
		pkt->key.dport = th->dest;
		pkt->tcp_flags = ((__u8 *)th)[13];
	} else {
		struct udphdr *uh = l4;
		__u32 ulen;

		if ((void *)(uh + 1) > data_end)
			return MAGLEV_R(DROP_L4_TRUNC);
		ulen = bpf_ntohs(uh->len);
		if (ulen < sizeof(*uh) || ulen > l4_len)
			return MAGLEV_R(DROP_L4_BAD);
		pkt->key.sport = uh->source;
		pkt->key.dport = uh->dest;
	}
	return 0;
}

#define MAGLEV_IPV6_EXT_MAX 4

static __always_inline int maglev_ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_FRAGMENT;
}

/*
 * The fast path handles IPv6 packets without extension headers. A packet to
 * a VIP that has some is walked (bounded) only to validate it and to tell a
 * fragment from other extension headers; both go to the kernel slow path.
 */
static __always_inline int maglev_ipv6_ext(void *ip6, void *data_end, __u8 nh, __u32 plen)
{
	void *p = ip6 + sizeof(struct ipv6hdr);
	__u32 off = 0;
	int frag = 0, i;

#pragma unroll
	for (i = 0; i < MAGLEV_IPV6_EXT_MAX; i++) {
		__u8 *h = p;
		__u32 len;

		if (!maglev_ipv6_is_ext(nh))
			break;
		if ((void *)(h + 8) > data_end)
			return MAGLEV_R(DROP_L3_TRUNC);
		if (nh == IPPROTO_FRAGMENT) {
			frag = 1;
			len = 8;
		} else {
			len = ((__u32)h[1] + 1) * 8;
		}
		off += len;
		if (off > plen)
			return MAGLEV_R(DROP_L3_BAD);
		nh = h[0];
		p += len;
	}
	return frag ? MAGLEV_R(PASS_IPV6_FRAG) : MAGLEV_R(PASS_IPV6_EXT);
}

#endif /* MAGLEV_XDP_PARSE_H */
