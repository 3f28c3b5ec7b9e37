// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Health checks through the encapsulation: a TC (clsact egress) program on
 * the balancer's interfaces. maglevd's check sockets (TCP, or UDP for the
 * udp and dns checks) connect to the VIP and
 * carry the mark MAGLEV_HC_MARK_BASE | backend index; this program
 * encapsulates their packets toward that backend exactly as the XDP program
 * (bpf/xdp_encap.h) encapsulates a client's packet, so the backend's
 * decapsulation, VIP and service are checked the way clients use them:
 *
 *   - IPIP by backend family (v4-in-v4, v6-in-v6, v4-in-v6, v6-in-v4), or
 *     GUE (UDP to the VIP's GUE port, source 0x8000 | fold, checksum 0,
 *     4-byte GUE v0 header with proto 4 / 41);
 *   - outer IPv4: tos = inner DSCP/ECN, id 0, DF, ttl 64; outer IPv6: traffic
 *     class = inner DSCP/ECN, flow label = fold & 0xfffff, hop limit 64;
 *   - outer source from src4/src6 prefix with host bits from the same flow
 *     fold as XDP's (client address words ^ sport << 16 | dport);
 *   - Ethernet destination and source: the egress interface's pair
 *     (maglev_ifl2, looked up as XDP does: maglev_if_l2()), else
 *     nexthop_mac and src_mac (maglev_cfg).
 * The inner TTL is left alone: the balancer host originates these packets,
 * it does not forward them.
 *
 * Unmarked packets go on to the next filter (TC_ACT_UNSPEC). A marked packet
 * that has no target, or is not addressed to its target's VIP and port, is
 * dropped: sent as it is it would reach the VIP's route, i.e. come back to a
 * balancer and be balanced to any backend, and the check would lie.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "maglev_gue.h"
#include "maglev_hash.h"
#include "maglev_maps.h"
#include "maglev_hc.h"
#include "xdp_cfg_maps.h"

#define HC_OUTER_TTL 64
#define HC_IP_DF     0x4000

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* maglev_cfg and maglev_ifl2: the balancer's config and per-interface MACs;
 * maglevd reuses the XDP program's pinned maps, so both always use the same
 * values (one declaration: xdp_cfg_maps.h).
 */

/* Backend index (the mark's low 16 bits) -> where its checks go. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAGLEV_MAX_BACKENDS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct maglev_hc_target);
} maglev_hc_targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_HC_CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} maglev_hc_cnt SEC(".maps");

struct hc_gue {
	struct udphdr udp;
	struct maglev_gue_hdr gue;
};

static __always_inline int hc_count(__u32 what, int verdict)
{
	__u64 *c = bpf_map_lookup_elem(&maglev_hc_cnt, &what);

	if (c)
		*c += 1;
	return verdict;
}

static __always_inline __u16 hc_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("tc")
int maglev_hc(struct __sk_buff *skb)
{
	__u32 mark = skb->mark, idx, fold, src[4] = {}, dst[4] = {}, zero = 0, inner_len;
	__u8 tos, inner_proto, l4proto;
	const struct maglev_hc_target *t;
	const struct maglev_config *cfg;
	__u16 ports[2];
	__u64 flags;
	int inner6, outer6, gue, olen, l4off;

	if ((mark & MAGLEV_HC_MARK_MASK) != MAGLEV_HC_MARK_BASE)
		return TC_ACT_UNSPEC;
	idx = mark & MAGLEV_HC_MARK_IDX;
	t = bpf_map_lookup_elem(&maglev_hc_targets, &idx);
	cfg = bpf_map_lookup_elem(&maglev_cfg, &zero);
	if (!t || !cfg)
		return hc_count(MAGLEV_HC_NO_TARGET, TC_ACT_SHOT);

	/* The inner packet: the check's own, addressed to the VIP. */
	inner6 = skb->protocol == bpf_htons(ETH_P_IPV6);
	if (!inner6 && skb->protocol != bpf_htons(ETH_P_IP))
		return hc_count(MAGLEV_HC_NO_TARGET, TC_ACT_SHOT);
	if (inner6) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip6, sizeof(ip6)))
			return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);
		__builtin_memcpy(src, &ip6.saddr, 16);
		__builtin_memcpy(dst, &ip6.daddr, 16);
		tos = (ip6.priority << 4) | (ip6.flow_lbl[0] >> 4);
		l4proto = ip6.nexthdr;
		l4off = ETH_HLEN + sizeof(ip6);
		inner_len = sizeof(ip6) + bpf_ntohs(ip6.payload_len);
		inner_proto = IPPROTO_IPV6;
	} else {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip, sizeof(ip)))
			return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);
		src[0] = ip.saddr;
		dst[0] = ip.daddr;
		tos = ip.tos;
		l4proto = ip.protocol;
		l4off = ETH_HLEN + ip.ihl * 4;
		inner_len = bpf_ntohs(ip.tot_len);
		inner_proto = IPPROTO_IPIP;
	}
	/* The target's protocol only: a TCP check's port on the VIP may be
	 * another service's over UDP.
	 */
	if (l4proto != (t->proto ? t->proto : IPPROTO_TCP) ||
	    bpf_skb_load_bytes(skb, l4off, ports, sizeof(ports)))
		return hc_count(MAGLEV_HC_NO_TARGET, TC_ACT_SHOT);
	if (t->vip_family != (inner6 ? MAGLEV_AF_INET6 : MAGLEV_AF_INET) || dst[0] != t->vip[0] ||
	    dst[1] != t->vip[1] || dst[2] != t->vip[2] || dst[3] != t->vip[3] ||
	    ports[1] != t->port)
		return hc_count(MAGLEV_HC_NO_TARGET, TC_ACT_SHOT);
	if (inner_len > 0xffff - 64)
		return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);

	fold = maglev_outer_fold(src, ports[0], ports[1]);
	outer6 = t->backend_family == MAGLEV_AF_INET6;
	gue = t->encap == MAGLEV_ENCAP_GUE;
	olen = (outer6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
	       (gue ? sizeof(struct hc_gue) : 0);
	/* The ENCAP flags record the inner headers (checksum offload, GSO)
	 * and switch skb->protocol to the outer family.
	 */
	flags = BPF_F_ADJ_ROOM_FIXED_GSO |
		(outer6 ? BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 : BPF_F_ADJ_ROOM_ENCAP_L3_IPV4) |
		(gue ? BPF_F_ADJ_ROOM_ENCAP_L4_UDP : 0);
	if (bpf_skb_adjust_room(skb, olen, BPF_ADJ_ROOM_MAC, flags))
		return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);

	if (outer6) {
		struct ipv6hdr o = {};

		*(__be32 *)&o = bpf_htonl(0x60000000U | ((__u32)tos << 20) | (fold & 0xfffff));
		o.payload_len = bpf_htons(inner_len + olen - sizeof(o));
		o.nexthdr = gue ? IPPROTO_UDP : inner_proto;
		o.hop_limit = HC_OUTER_TTL;
		o.saddr.in6_u.u6_addr32[0] = cfg->src6_prefix[0];
		o.saddr.in6_u.u6_addr32[1] = cfg->src6_prefix[1];
		o.saddr.in6_u.u6_addr32[2] = cfg->src6_prefix[2];
		o.saddr.in6_u.u6_addr32[3] = maglev_outer_src_word(
			cfg->src6_prefix[3], bpf_htonl(fold),
			bpf_htonl(maglev_outer_host_mask(cfg->src6_plen, 96)));
		__builtin_memcpy(&o.daddr, t->backend, 16);
		if (bpf_skb_store_bytes(skb, ETH_HLEN, &o, sizeof(o), 0))
			return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);
	} else {
		struct iphdr o = {};
		__u32 sum = 0, i;
		__u16 *w = (__u16 *)&o;

		o.version = 4;
		o.ihl = 5;
		o.tos = tos;
		o.tot_len = bpf_htons(inner_len + olen);
		o.frag_off = bpf_htons(HC_IP_DF);
		o.ttl = HC_OUTER_TTL;
		o.protocol = gue ? IPPROTO_UDP : inner_proto;
		o.saddr =
			maglev_outer_src_word(cfg->src4_prefix, bpf_htonl(fold),
					      bpf_htonl(maglev_outer_host_mask(cfg->src4_plen, 0)));
		o.daddr = t->backend[0];
		for (i = 0; i < sizeof(o) / 2; i++)
			sum += w[i];
		o.check = hc_csum_fold(sum);
		if (bpf_skb_store_bytes(skb, ETH_HLEN, &o, sizeof(o), 0))
			return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);
	}
	if (gue) {
		struct hc_gue g = {};

		g.udp.source = bpf_htons(MAGLEV_GUE_SPORT(fold));
		g.udp.dest = t->gue_port ? t->gue_port : bpf_htons(MAGLEV_GUE_PORT_DEFAULT);
		g.udp.len = bpf_htons(inner_len + sizeof(g));
		g.gue.proto = inner_proto;
		if (bpf_skb_store_bytes(
			    skb,
			    ETH_HLEN + (outer6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)), &g,
			    sizeof(g), 0))
			return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);
	}
	{
		const struct maglev_if_l2 *l2 = maglev_if_l2(cfg, skb->ifindex);
		struct ethhdr eth;

		/* The MACs of the interface the check leaves by, as for XDP. */
		if (l2) {
			__builtin_memcpy(eth.h_dest, l2->nexthop_mac, ETH_ALEN);
			__builtin_memcpy(eth.h_source, l2->src_mac, ETH_ALEN);
		} else {
			__builtin_memcpy(eth.h_dest, cfg->nexthop_mac, ETH_ALEN);
			__builtin_memcpy(eth.h_source, cfg->src_mac, ETH_ALEN);
		}
		eth.h_proto = outer6 ? bpf_htons(ETH_P_IPV6) : bpf_htons(ETH_P_IP);
		if (bpf_skb_store_bytes(skb, 0, &eth, sizeof(eth), 0))
			return hc_count(MAGLEV_HC_ERROR, TC_ACT_SHOT);
	}
	return hc_count(MAGLEV_HC_ENCAP, TC_ACT_OK);
}
