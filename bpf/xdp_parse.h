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
	__u8 df;       /* IPv4 don't-fragment */
	__u8 tcp_data; /* a TCP segment with payload */
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
		pkt->tcp_data = doff * 4 < l4_len;
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
/* Extension header bytes forwarded in XDP (a mask: multiples of 8 up to
 * 2040); a longer chain takes the slow path.
 */
#define MAGLEV_IPV6_EXT_BYTES 0x7f8

static __always_inline int maglev_ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_FRAGMENT;
}

/*
 * A VIP packet with IPv6 extension headers, walked (bounded): 0 with *nhp
 * and *offp set to the upper-layer protocol and its offset after the fixed
 * header (l3: where that header starts), so an established flow keeps its
 * backend whatever options its packets carry. Left to the kernel slow path:
 * a fragment (PASS_IPV6_FRAG), a routing header with segments left (the VIP
 * is not the packet's final destination yet), a chain longer than the walk
 * or than MAGLEV_IPV6_EXT_BYTES (PASS_IPV6_EXT).
 *
 * The headers are read with bpf_xdp_load_bytes, not through packet
 * pointers: the verifier's packet range then stays the one the fixed header
 * gave, and the forwarding path after this walk is verified once for all
 * chains instead of once per chain length.
 */
static __always_inline int maglev_ipv6_ext(struct xdp_md *ctx, __u32 l3, __u8 *nhp, __u32 plen,
					   __u32 *offp)
{
	__u8 nh = *nhp, h[8];
	__u32 off = 0;
	int frag = 0, i;

#pragma unroll
	for (i = 0; i < MAGLEV_IPV6_EXT_MAX; i++) {
		__u32 len;

		if (!maglev_ipv6_is_ext(nh))
			break;
		if (bpf_xdp_load_bytes(ctx, l3 + sizeof(struct ipv6hdr) + off, h, sizeof(h)))
			return MAGLEV_R(DROP_L3_TRUNC);
		if (nh == IPPROTO_FRAGMENT) {
			frag = 1;
			len = 8;
		} else {
			if (nh == IPPROTO_ROUTING && h[3])
				frag = 2;
			len = ((__u32)h[1] + 1) * 8;
		}
		off += len;
		if (off > plen)
			return MAGLEV_R(DROP_L3_BAD);
		nh = h[0];
	}
	if (frag == 1)
		return MAGLEV_R(PASS_IPV6_FRAG);
	if (frag || maglev_ipv6_is_ext(nh) || off > MAGLEV_IPV6_EXT_BYTES)
		return MAGLEV_R(PASS_IPV6_EXT);
	*nhp = nh;
	/* The same bounds whatever the number of headers (off is a multiple
	 * of 8): one verifier state for every chain.
	 */
	*offp = off & MAGLEV_IPV6_EXT_BYTES;
	return 0;
}

#endif /* MAGLEV_XDP_PARSE_H */
