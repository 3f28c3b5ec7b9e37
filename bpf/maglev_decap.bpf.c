// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Backend-side decapsulation, so a backend needs neither the ipip nor the
 * fou module: strips IPIP (v4-in-v4, v6-in-v6, v4-in-v6, v6-in-v4) and GUE
 * (UDP to the configured port, GUE version 0) and passes the inner packet
 * up the stack, with the outer ECN mark folded into it as RFC 6040 asks
 * (a CE set on the way from the balancer is kept, as kernel tunnels keep
 * it). Everything else is passed untouched.
 *
 *   ip link set dev eth0 xdp obj maglev_decap.bpf.o sec xdp
 *
 * The GUE port is element 0 of maglev_decap_cfg (network order); 0 means
 * MAGLEV_GUE_PORT_DEFAULT. Its flags turn on strict mode (include/
 * maglev_decap.h): only outer sources in maglev_dcp_src and outer
 * destinations in maglev_dcp_dst are decapsulated, the rest dropped and
 * counted. Unconfigured the program is open (any sender); userspace/tools/
 * maglev_decap.c (maglev-decap(8)) attaches it and configures strict mode.
 *
 * Second chance (include/maglev_second.h): a GUE packet carrying a previous
 * owner whose TCP segment no local socket claims is sent on to that owner
 * instead (maglev_decap_second.h), if strict mode allows that address as a
 * source; open, nothing is sent on.
 */
#include "xdp_consts.h"
#include "xdp_parse.h"
#include "maglev_decap.h"
#include "maglev_second.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_decap_config);
} maglev_decap_cfg SEC(".maps");

/* Strict mode: the outer sources allowed, the outer destinations that are
 * this host's (include/maglev_decap.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAGLEV_DECAP_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct maglev_decap_prefix);
	__type(value, __u8);
} maglev_dcp_src SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAGLEV_DECAP_MAX_ADDRS);
	__type(key, struct maglev_decap_addr);
	__type(value, __u8);
} maglev_dcp_dst SEC(".maps");

/* Per CPU, indexed by enum maglev_decap_counter (include/maglev_second.h):
 * [0] packets decapsulated, [1] packets passed untouched, [2] packets
 * dropped for an outer CE on a not-ECN-capable inner packet (RFC 6040 4.2),
 * then the second-chance outcomes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAGLEV_DECAP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} maglev_decap_cnt SEC(".maps");

static __always_inline int maglev_decap_count(__u32 what)
{
	__u64 *c = bpf_map_lookup_elem(&maglev_decap_cnt, &what);

	if (c)
		*c += 1;
	return what == MAGLEV_DECAP_DROP_ECN || what == MAGLEV_DECAP_DROP_SRC ||
			       what == MAGLEV_DECAP_DROP_DST
		       ? XDP_DROP
		       : XDP_PASS;
}

/* Strict mode's verdict on the outer header at l3: 0 to decapsulate, else
 * the drop counter. Checked before second chance, so a spoofed packet is
 * never sent on either.
 */
static __always_inline __u32 maglev_decap_strict(const struct maglev_decap_config *cfg, void *l3,
						 void *data_end, int v4)
{
	struct maglev_decap_prefix src = {.prefixlen = 128};
	struct maglev_decap_addr dst;

	if (!cfg || !(cfg->flags & (MAGLEV_DECAP_F_STRICT_SRC | MAGLEV_DECAP_F_STRICT_DST)))
		return 0;
	if (v4) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > data_end)
			return MAGLEV_DECAP_DROP_SRC;
		maglev_decap_v4mapped(src.addr, iph->saddr);
		maglev_decap_v4mapped(dst.addr, iph->daddr);
	} else {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > data_end)
			return MAGLEV_DECAP_DROP_SRC;
		__builtin_memcpy(src.addr, &ip6->saddr, 16);
		__builtin_memcpy(dst.addr, &ip6->daddr, 16);
	}
	if ((cfg->flags & MAGLEV_DECAP_F_STRICT_SRC) && !bpf_map_lookup_elem(&maglev_dcp_src, &src))
		return MAGLEV_DECAP_DROP_SRC;
	if ((cfg->flags & MAGLEV_DECAP_F_STRICT_DST) && !bpf_map_lookup_elem(&maglev_dcp_dst, &dst))
		return MAGLEV_DECAP_DROP_DST;
	return 0;
}

#include "maglev_decap_second.h"

#define MAGLEV_ECN_NOT_ECT 0
#define MAGLEV_ECN_ECT1	   1
#define MAGLEV_ECN_ECT0	   2
#define MAGLEV_ECN_CE	   3

/* The ECN field of the IP header at p (IPv4 TOS or IPv6 traffic class). */
static __always_inline __u8 maglev_ecn_of(const __u8 *p, int v4)
{
	return v4 ? p[1] & 3 : (p[1] >> 4) & 3;
}

/* RFC 6040 decapsulation: outer CE marks the inner packet CE (or drops it
 * when the inner is not ECN-capable); outer ECT(1) turns an inner ECT(0)
 * into ECT(1); anything else leaves the inner field as it is. Returns -1
 * to drop. The inner IPv4 checksum is updated incrementally (RFC 1624).
 * The caller made sure 12 bytes of the inner header are there; the check
 * here is for the verifier.
 */
static __always_inline int maglev_ecn_decap(__u8 *in, void *data_end, int in4, __u8 outer)
{
	__u8 ecn, want;
	__u32 sum;

	if ((void *)(in + 12) > data_end)
		return -1;
	ecn = maglev_ecn_of(in, in4);
	want = ecn;
	if (outer == MAGLEV_ECN_CE)
		want = MAGLEV_ECN_CE;
	else if (outer == MAGLEV_ECN_ECT1 && ecn == MAGLEV_ECN_ECT0)
		want = MAGLEV_ECN_ECT1;
	if (want == ecn)
		return 0;
	if (ecn == MAGLEV_ECN_NOT_ECT)
		return -1;
	if (!in4) {
		in[1] = (in[1] & ~0x30) | (want << 4);
		return 0;
	}
	/* HC' = ~(~HC + ~m + m'), m the 16-bit word holding the TOS byte. */
	sum = (__u16)~bpf_ntohs(*(__be16 *)(in + 10));
	sum += (__u16) ~((__u32)in[0] << 8 | in[1]);
	in[1] = (in[1] & ~3) | want;
	sum += (__u32)in[0] << 8 | in[1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	*(__be16 *)(in + 10) = bpf_htons((__u16)~sum);
	return 0;
}

/* Bytes of outer headers before an inner packet of family inner (4 / 41)
 * that starts at p; 0 if p does not hold an IP header of that family.
 */
static __always_inline int maglev_inner_ok(void *p, void *data_end, __u8 inner)
{
	__u8 *v = p;

	if ((void *)(v + 1) > data_end)
		return 0;
	if (inner == IPPROTO_IPIP)
		return (*v >> 4) == 4;
	if (inner == IPPROTO_IPV6)
		return (*v >> 4) == 6;
	return 0;
}

/* GUE after a UDP header at l4: the bytes of UDP + GUE, 0 if not ours.
 * *gue is set to the GUE header.
 */
static __always_inline __u32 maglev_gue_len(void *l4, void *data_end, __u8 *inner,
					    struct maglev_gue_hdr **gue,
					    const struct maglev_decap_config *cfg)
{
	struct udphdr *uh = l4;
	struct maglev_gue_hdr *gh = l4 + sizeof(*uh);
	__be16 port = bpf_htons(MAGLEV_GUE_PORT_DEFAULT);
	__u32 hlen;

	if ((void *)(gh + 1) > data_end)
		return 0;
	if (cfg && cfg->gue_port)
		port = cfg->gue_port;
	if (uh->dest != port)
		return 0;
	/* Version 0 (top two bits), control bit clear. */
	if (gh->ver_c_hlen & 0xe0)
		return 0;
	hlen = (gh->ver_c_hlen & 0x1f) * 4;
	*inner = gh->proto;
	*gue = gh;
	return sizeof(*uh) + MAGLEV_GUE_HLEN + hlen;
}

SEC("xdp")
int maglev_decap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 l2buf[22], inner = 0, outer_ecn;
	struct maglev_gue_hdr *gue = NULL;
	struct maglev_decap_config *cfg;
	__u32 l2 = 0, strip = 0, vb, i, zero = 0;
	int r;
	__be16 proto = 0;
	void *l3;

	if (maglev_parse_l2(data, data_end, &l2, &proto) || l2 < 14 || l2 > 22)
		return maglev_decap_count(MAGLEV_DECAP_PASS);
	cfg = bpf_map_lookup_elem(&maglev_decap_cfg, &zero);
	vb = maglev_vlan_bytes(l2);
	l3 = data + ETH_HLEN + vb;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > data_end || iph->ihl != 5 ||
		    (iph->frag_off & bpf_htons(MAGLEV_IP_MF | MAGLEV_IP_OFFSET)))
			return maglev_decap_count(MAGLEV_DECAP_PASS);
		strip = sizeof(*iph);
		if (iph->protocol == IPPROTO_IPIP || iph->protocol == IPPROTO_IPV6)
			inner = iph->protocol;
		else if (iph->protocol == IPPROTO_UDP)
			strip += maglev_gue_len(iph + 1, data_end, &inner, &gue, cfg);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > data_end)
			return maglev_decap_count(MAGLEV_DECAP_PASS);
		strip = sizeof(*ip6);
		if (ip6->nexthdr == IPPROTO_IPIP || ip6->nexthdr == IPPROTO_IPV6)
			inner = ip6->nexthdr;
		else if (ip6->nexthdr == IPPROTO_UDP)
			strip += maglev_gue_len(ip6 + 1, data_end, &inner, &gue, cfg);
	}
	if (!inner || strip > 40 + 8 + 4 + 31 * 4 || !maglev_inner_ok(l3 + strip, data_end, inner))
		return maglev_decap_count(MAGLEV_DECAP_PASS);
	/* Not an IP header either way if shorter than 12 bytes. */
	if ((void *)((__u8 *)l3 + strip + 12) > data_end)
		return maglev_decap_count(MAGLEV_DECAP_PASS);
	r = maglev_decap_strict(cfg, l3, data_end, proto == bpf_htons(ETH_P_IP));
	if (r)
		return maglev_decap_count(r);
	/* Second chance's private data: hlen 5, flags 0 or the old encoding's
	 * (include/maglev_gue.h).
	 */
	if (gue && (!gue->flags || gue->flags == bpf_htons(MAGLEV_GUE_F_PREV_OLD)) &&
	    (gue->ver_c_hlen & 0x1f) == MAGLEV_GUE_PREV_WORDS) {
		r = maglev_second_chance(ctx, l3, ETH_HLEN + vb, strip, gue, inner,
					 proto == bpf_htons(ETH_P_IP), cfg);
		/* Delivered here otherwise (the lookups leave the packet as it is). */
		if (r >= 0)
			return r;
	}
	outer_ecn = maglev_ecn_of(l3, proto == bpf_htons(ETH_P_IP));
	if (maglev_ecn_decap(l3 + strip, data_end, inner == IPPROTO_IPIP, outer_ecn))
		return maglev_decap_count(MAGLEV_DECAP_DROP_ECN);

	/* Keep the MAC header and VLAN tags: copy them out, move the head
	 * past the outer headers, write them back in front of the inner packet.
	 */
	if (data + 22 > data_end)
		return maglev_decap_count(MAGLEV_DECAP_PASS);
	__builtin_memcpy(l2buf, data, 22);
	if (bpf_xdp_adjust_head(ctx, (int)strip))
		return maglev_decap_count(MAGLEV_DECAP_PASS);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + 22 > data_end)
		return XDP_DROP;
#pragma unroll
	for (i = 0; i < 20; i++)
		if (i < 12 + vb)
			((__u8 *)data)[i] = l2buf[i];
	*(__be16 *)(data + 12 + vb) =
		inner == IPPROTO_IPIP ? bpf_htons(ETH_P_IP) : bpf_htons(ETH_P_IPV6);
	return maglev_decap_count(MAGLEV_DECAP_DONE);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
