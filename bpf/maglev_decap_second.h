/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Second chance on the backend (include/maglev_second.h has the wire
 * format): a TCP segment that arrived carrying its slot's previous owner is
 * delivered here when this host has a socket for it (established, request
 * or time-wait, bpf_skc_lookup_tcp), when it is a SYN, or when it is an ACK
 * that a listener's syncookie validates. Otherwise this host's stack would
 * answer it with a reset, so it goes to the previous owner instead: outer
 * destination the carried address, outer source this host's own (the old
 * destination), the carried field cleared so it can never move twice, MACs
 * swapped so it leaves toward the hop it came from, XDP_TX. Only to an
 * address strict mode allows (maglev_sc_target_allowed): never in open mode.
 */
#ifndef MAGLEV_DECAP_SECOND_H
#define MAGLEV_DECAP_SECOND_H

#include "maglev_second.h"

#define MAGLEV_TCP_LISTEN 10 /* include/net/tcp_states.h */

/* IPv4 header checksum of the 20 bytes at p (options never get here). */
static __always_inline __u16 maglev_ip4_csum(const __u16 *p)
{
	__u32 sum = 0, i;

#pragma unroll
	for (i = 0; i < 10; i++)
		if (i != 5)
			sum += p[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/*
 * The outer UDP checksum once the packet is sent on (RFC 1624): the pseudo
 * header lost the old source (gone: words 32-bit words) and gained the new
 * destination (added; the old destination only became the source), and the
 * option's first 16 bits went from old16 to new16. A zero checksum (the XDP
 * balancer's, RFC 6935) stays zero; the slow-path module fills it in, and
 * a stale one makes the next backend's UDP stack (fou) drop the packet.
 */
static __always_inline void maglev_sc_udp_csum(struct udphdr *uh, const __u32 *gone,
					       const __u32 *added, int words, __u16 old16,
					       __u16 new16)
{
	__u32 sum;
	int i;

	if (!uh->check)
		return;
	sum = (__u16)~uh->check + (__u16)~old16 + new16;
#pragma unroll
	for (i = 0; i < 4; i++)
		if (i < words)
			sum += (__u16)~gone[i] + (__u16) ~(gone[i] >> 16) + (added[i] & 0xffff) +
			       (added[i] >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	uh->check = (__u16)~sum ? (__u16)~sum : 0xffff;
}

/* maglev_sc_claimed's answers besides 0 (not claimed: send it on). */
#define MAGLEV_SC_CLAIMED  1
#define MAGLEV_SC_NO_PORTS 2

/*
 * Does a local socket (or the SYN / syncookie rules) claim the inner TCP
 * segment at in (inoff bytes into the frame)? MAGLEV_SC_CLAIMED: deliver
 * here (counted); MAGLEV_SC_NO_PORTS: no TCP ports to look up (a fragment,
 * not TCP, a header chain the walk does not finish): deliver here too, as
 * only a segment nothing claims may move, and a fragment must join the
 * others of its datagram in this host's reassembly; 0: not claimed. IPv4
 * options are skipped by IHL, IPv6 extension headers walked by the
 * balancer's own bounded walk (xdp_parse.h), so a segment with options is
 * looked up like any other.
 */
static __always_inline int maglev_sc_claimed(struct xdp_md *ctx, void *in, __u32 inoff,
					     void *data_end, int in4)
{
	struct bpf_sock_tuple tup = {};
	struct bpf_sock *sk;
	struct tcphdr *th;
	__u32 tlen, ilen;
	int cookie = -1;

	if (in4) {
		struct iphdr *ip = in;

		if ((void *)(ip + 1) > data_end || ip->ihl < 5 || ip->protocol != IPPROTO_TCP ||
		    (ip->frag_off & bpf_htons(MAGLEV_IP_MF | MAGLEV_IP_OFFSET)))
			return MAGLEV_SC_NO_PORTS;
		th = (void *)ip + ip->ihl * 4;
		if ((void *)(th + 1) > data_end)
			return MAGLEV_SC_NO_PORTS;
		tup.ipv4.saddr = ip->saddr;
		tup.ipv4.daddr = ip->daddr;
		tup.ipv4.sport = th->source;
		tup.ipv4.dport = th->dest;
		tlen = sizeof(tup.ipv4);
		ilen = sizeof(*ip);
	} else {
		struct ipv6hdr *ip6 = in;
		__u32 off = 0;
		__u8 nh;

		if ((void *)(ip6 + 1) > data_end)
			return MAGLEV_SC_NO_PORTS;
		nh = ip6->nexthdr;
		if (maglev_ipv6_is_ext(nh) &&
		    maglev_ipv6_ext(ctx, inoff, &nh, bpf_ntohs(ip6->payload_len), &off))
			return MAGLEV_SC_NO_PORTS;
		if (nh != IPPROTO_TCP)
			return MAGLEV_SC_NO_PORTS;
		th = (void *)(ip6 + 1) + off;
		if ((void *)(th + 1) > data_end)
			return MAGLEV_SC_NO_PORTS;
		__builtin_memcpy(tup.ipv6.saddr, &ip6->saddr, 16);
		__builtin_memcpy(tup.ipv6.daddr, &ip6->daddr, 16);
		tup.ipv6.sport = th->source;
		tup.ipv6.dport = th->dest;
		tlen = sizeof(tup.ipv6);
		ilen = sizeof(*ip6);
	}
	/* A new connection is always this host's: never redirected. */
	if (th->syn && !th->ack) {
		maglev_decap_count(MAGLEV_DECAP_SC_SYN);
		return MAGLEV_SC_CLAIMED;
	}
	sk = bpf_skc_lookup_tcp(ctx, &tup, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	if (sk->state != MAGLEV_TCP_LISTEN) {
		bpf_sk_release(sk);
		maglev_decap_count(MAGLEV_DECAP_SC_LOCAL);
		return MAGLEV_SC_CLAIMED;
	}
	/* Only the listener: an ACK may still be the end of a handshake that
	 * a syncookie stands for.
	 */
	if (th->ack && !th->syn && !th->rst)
		cookie = bpf_tcp_check_syncookie(sk, in, ilen, th, sizeof(*th));
	bpf_sk_release(sk);
	if (cookie == 0) {
		maglev_decap_count(MAGLEV_DECAP_SC_COOKIE);
		return MAGLEV_SC_CLAIMED;
	}
	return 0;
}

/*
 * May a packet be sent on to the previous owner gp names (issue 31 item 7)?
 * Only to an address in strict mode's allowed-source prefixes: the fleet's
 * backends must be there anyway for second chance to work, since the next
 * backend takes a packet sent on only from one of them. Open (or strict on
 * destinations alone) the program knows no fleet, and the address is
 * whatever any sender wrote: it is never relayed to.
 */
static __always_inline int maglev_sc_target_allowed(const struct maglev_decap_config *cfg,
						    const struct maglev_gue_prev *gp)
{
	struct maglev_decap_prefix k = {.prefixlen = 128};

	if (!cfg || !(cfg->flags & MAGLEV_DECAP_F_STRICT_SRC))
		return 0;
	if (gp->family == MAGLEV_AF_INET)
		maglev_decap_v4mapped(k.addr, gp->addr[0]);
	else
		__builtin_memcpy(k.addr, gp->addr, 16);
	return bpf_map_lookup_elem(&maglev_dcp_src, &k) != NULL;
}

/*
 * l3: the outer IP header, l3off its offset in the frame, strip: the outer
 * bytes before the inner packet, gh: the GUE header (flags 0, hlen
 * MAGLEV_GUE_PREV_WORDS), cfg: the program's configuration. Returns the
 * XDP action of a packet sent on (counted), or -1: deliver it here as any
 * other.
 */
static __always_inline int maglev_second_chance(struct xdp_md *ctx, void *l3, __u32 l3off,
						__u32 strip, struct maglev_gue_hdr *gh, __u8 inner,
						int outer4, const struct maglev_decap_config *cfg)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct maglev_gue_prev *gp = (void *)(gh + 1);
	struct udphdr *uh = (void *)gh - sizeof(*uh);
	__u32 gone[4];
	__u16 old16;
	__u8 mac[6];
	int r;

	if ((void *)(gp + 1) > data_end || (gh->ver_c_hlen & 0x1f) != MAGLEV_GUE_PREV_WORDS ||
	    gp->type != MAGLEV_GUE_PREV_TYPE)
		return -1;
	if (!gp->family) {
		maglev_decap_count(MAGLEV_DECAP_SC_ONCE);
		return -1;
	}
	if (strip > 40 + 8 + 4 + 31 * 4)
		return -1;
	r = maglev_sc_claimed(ctx, (__u8 *)l3 + strip, l3off + strip, data_end,
			      inner == IPPROTO_IPIP);
	if (r == MAGLEV_SC_NO_PORTS)
		maglev_decap_count(MAGLEV_DECAP_SC_NO_PORTS);
	if (r)
		return -1;
	/* The balancer carries only an owner of the current one's family. */
	if (gp->family != (outer4 ? MAGLEV_AF_INET : MAGLEV_AF_INET6)) {
		maglev_decap_count(MAGLEV_DECAP_SC_NO_REDIRECT);
		return -1;
	}
	if (!maglev_sc_target_allowed(cfg, gp)) {
		maglev_decap_count(MAGLEV_DECAP_SC_NOT_ALLOWED);
		return -1;
	}
	if (data + ETH_HLEN > data_end) {
		maglev_decap_count(MAGLEV_DECAP_SC_NO_REDIRECT);
		return -1;
	}
	if (outer4) {
		struct iphdr *o = l3;

		if ((void *)(o + 1) > data_end) {
			maglev_decap_count(MAGLEV_DECAP_SC_NO_REDIRECT);
			return -1;
		}
		if (o->ttl <= 1) {
			maglev_decap_count(MAGLEV_DECAP_SC_NO_REDIRECT);
			return -1;
		}
		gone[0] = o->saddr;
		o->saddr = o->daddr;
		o->daddr = gp->addr[0];
		o->ttl--;
		o->check = maglev_ip4_csum((const __u16 *)o);
	} else {
		struct ipv6hdr *o = l3;

		if ((void *)(o + 1) > data_end || o->hop_limit <= 1) {
			maglev_decap_count(MAGLEV_DECAP_SC_NO_REDIRECT);
			return -1;
		}
		__builtin_memcpy(gone, &o->saddr, 16);
		__builtin_memcpy(&o->saddr, &o->daddr, 16);
		__builtin_memcpy(&o->daddr, gp->addr, 16);
		o->hop_limit--;
	}
	/* Cleared: the next backend delivers it whatever it finds. */
	old16 = *(__u16 *)gp;
	gp->family = 0;
	if ((void *)(uh + 1) <= data_end)
		maglev_sc_udp_csum(uh, gone, gp->addr, outer4 ? 1 : 4, old16, *(__u16 *)gp);
	__builtin_memcpy(mac, data, 6);
	__builtin_memcpy(data, data + 6, 6);
	__builtin_memcpy(data + 6, mac, 6);
	maglev_decap_count(MAGLEV_DECAP_SC_REDIRECT);
	return XDP_TX;
}

#endif /* MAGLEV_DECAP_SECOND_H */
