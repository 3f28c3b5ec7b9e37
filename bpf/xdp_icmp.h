/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ICMP the balancer originates or rewrites in place: echo replies for VIP
 * addresses and "fragmentation needed" / "packet too big" toward a client
 * whose packet would exceed the MTU once encapsulated. The reply keeps the
 * frame's VLAN tags and goes back out with XDP_TX.
 */
#ifndef MAGLEV_XDP_ICMP_H
#define MAGLEV_XDP_ICMP_H

#include "xdp_consts.h"
#include "xdp_counters.h"

static __always_inline void maglev_swap_mac(struct ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

/* RFC 1624 eqn. 3: replace one 16-bit word covered by a checksum. */
static __always_inline __u16 maglev_csum_replace(__u16 check, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~check + (__u16)~old + new;

	return maglev_csum_fold(sum);
}

/* Echo request to a VIP address: answer in place. */
static __always_inline int maglev_echo4(struct ethhdr *eth, struct iphdr *iph, struct icmphdr *ic)
{
	__u32 a = iph->saddr;
	__u16 old = *(__u16 *)ic;

	maglev_swap_mac(eth);
	iph->saddr = iph->daddr;
	iph->daddr = a;
	iph->ttl = MAGLEV_OUTER_TTL;
	iph->check = 0;
	iph->check = maglev_csum_fold(maglev_csum_iph(iph));
	ic->type = ICMP_ECHOREPLY;
	ic->checksum = maglev_csum_replace(ic->checksum, old, *(__u16 *)ic);
	return MAGLEV_TX(MAGLEV_REASON_TX_ECHO_REPLY);
}

static __always_inline int maglev_echo6(struct ethhdr *eth, struct ipv6hdr *ip6,
					struct icmp6hdr *ic)
{
	struct in6_addr a = ip6->saddr;
	__u16 old = *(__u16 *)ic;

	maglev_swap_mac(eth);
	ip6->saddr = ip6->daddr;
	ip6->daddr = a;
	ip6->hop_limit = MAGLEV_OUTER_TTL;
	/* Swapping the addresses leaves the pseudo-header sum unchanged. */
	ic->icmp6_type = ICMPV6_ECHO_REPLY;
	ic->icmp6_cksum = maglev_csum_replace(ic->icmp6_cksum, old, *(__u16 *)ic);
	return MAGLEV_TX(MAGLEV_REASON_TX_ECHO_REPLY);
}

/* Quoted bytes: the offending IP header plus 8 bytes (RFC 792 / the
 * minimum every stack needs to find the socket).
 */
#define MAGLEV_QUOTE4	 (sizeof(struct iphdr) + 8)
#define MAGLEV_QUOTE6	 (sizeof(struct ipv6hdr) + 8)
#define MAGLEV_ICMP_HLEN 8

/*
 * IPv4 "fragmentation needed" to the client, rewriting the packet in place:
 * [L2, MACs swapped][IPv4 VIP->client][ICMP 3/4, next-hop MTU][quote], then
 * the tail trimmed. The packet is larger than the MTU (>= 1280), so there
 * is room.
 */
static __always_inline int maglev_too_big4(struct xdp_md *ctx, __u32 l2, __u16 mtu)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 quote[MAGLEV_QUOTE4];
	struct iphdr *iph, *q = (void *)quote;
	struct icmphdr *ic;
	__u32 sum = 0;
	__u16 *w;
	int i;

	if (data + sizeof(struct ethhdr) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	iph = data + ETH_HLEN + maglev_vlan_bytes(l2);
	ic = (void *)(iph + 1);
	if ((void *)(ic + 1) + MAGLEV_QUOTE4 > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	__builtin_memcpy(quote, iph, MAGLEV_QUOTE4);
	maglev_swap_mac(data);
	*(__u8 *)iph = 0x45;
	iph->tos = 0;
	iph->tot_len = bpf_htons(sizeof(*iph) + MAGLEV_ICMP_HLEN + MAGLEV_QUOTE4);
	iph->id = 0;
	iph->frag_off = 0;
	iph->ttl = MAGLEV_OUTER_TTL;
	iph->protocol = IPPROTO_ICMP;
	iph->check = 0;
	iph->saddr = q->daddr;
	iph->daddr = q->saddr;
	iph->check = maglev_csum_fold(maglev_csum_iph(iph));
	ic->type = ICMP_DEST_UNREACH;
	ic->code = ICMP_FRAG_NEEDED;
	ic->checksum = 0;
	ic->un.frag.__unused = 0;
	ic->un.frag.mtu = bpf_htons(mtu);
	__builtin_memcpy((void *)(ic + 1), quote, MAGLEV_QUOTE4);
	w = (__u16 *)ic;
#pragma unroll
	for (i = 0; i < (MAGLEV_ICMP_HLEN + MAGLEV_QUOTE4) / 2; i++)
		sum += w[i];
	ic->checksum = maglev_csum_fold(sum);
	if (bpf_xdp_adjust_tail(ctx, (int)(l2 + sizeof(*iph) + MAGLEV_ICMP_HLEN + MAGLEV_QUOTE4) -
					     (int)(data_end - data)))
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	return MAGLEV_TX(MAGLEV_REASON_TX_TOO_BIG);
}

/* IPv6 "packet too big", same shape; the checksum covers the pseudo header. */
static __always_inline int maglev_too_big6(struct xdp_md *ctx, __u32 l2, __u32 mtu)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 quote[MAGLEV_QUOTE6];
	struct ipv6hdr *ip6, *q = (void *)quote;
	struct icmp6hdr *ic;
	__u32 sum, plen = MAGLEV_ICMP_HLEN + MAGLEV_QUOTE6;
	__u16 *w;
	int i;

	if (data + sizeof(struct ethhdr) > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	ip6 = data + ETH_HLEN + maglev_vlan_bytes(l2);
	ic = (void *)(ip6 + 1);
	if ((void *)(ic + 1) + MAGLEV_QUOTE6 > data_end)
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	__builtin_memcpy(quote, ip6, MAGLEV_QUOTE6);
	maglev_swap_mac(data);
	*(__be32 *)ip6 = bpf_htonl(0x60000000U);
	ip6->payload_len = bpf_htons(plen);
	ip6->nexthdr = IPPROTO_ICMPV6;
	ip6->hop_limit = MAGLEV_OUTER_TTL;
	ip6->saddr = q->daddr;
	ip6->daddr = q->saddr;
	ic->icmp6_type = ICMPV6_PKT_TOOBIG;
	ic->icmp6_code = 0;
	ic->icmp6_cksum = 0;
	ic->icmp6_mtu = bpf_htonl(mtu);
	__builtin_memcpy((void *)(ic + 1), quote, MAGLEV_QUOTE6);
	sum = bpf_htons(plen) + bpf_htons(IPPROTO_ICMPV6);
	w = (__u16 *)&ip6->saddr;
#pragma unroll
	for (i = 0; i < 16; i++)
		sum += w[i];
	w = (__u16 *)ic;
#pragma unroll
	for (i = 0; i < (int)plen / 2; i++)
		sum += w[i];
	ic->icmp6_cksum = maglev_csum_fold(sum);
	if (bpf_xdp_adjust_tail(ctx, (int)(l2 + sizeof(*ip6) + plen) - (int)(data_end - data)))
		return MAGLEV_DROP(MAGLEV_REASON_DROP_ADJUST);
	return MAGLEV_TX(MAGLEV_REASON_TX_TOO_BIG);
}

#endif /* MAGLEV_XDP_ICMP_H */
