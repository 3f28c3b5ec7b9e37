/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Protocol constants and small helpers shared by the BPF programs. */
#ifndef MAGLEV_XDP_CONSTS_H
#define MAGLEV_XDP_CONSTS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/icmpv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "maglev_gue.h"

#ifndef ETH_P_8021Q
#define ETH_P_8021Q 0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif

/* TTL / hop limit of headers we originate (outer headers, ICMP replies). */
#define MAGLEV_OUTER_TTL 64

#define MAGLEV_IP_DF	 0x4000
#define MAGLEV_IP_MF	 0x2000
#define MAGLEV_IP_OFFSET 0x1fff

/* TCP header flags (byte 13). */
#define MAGLEV_TCP_FIN 0x01
#define MAGLEV_TCP_SYN 0x02
#define MAGLEV_TCP_RST 0x04
#define MAGLEV_TCP_ACK 0x10

/* IPv6 minimum link MTU: never advertise less in packet-too-big. */
#define MAGLEV_IPV6_MIN_MTU 1280

/* linux/icmp.h drags in libc headers; the few ICMP bits we need. */
#define ICMP_ECHOREPLY	   0
#define ICMP_DEST_UNREACH  3
#define ICMP_FRAG_NEEDED   4
#define ICMP_ECHO	   8
#define ICMP_TIME_EXCEEDED 11

struct icmphdr {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	union {
		struct {
			__be16 id;
			__be16 sequence;
		} echo;
		__be32 gateway;
		struct {
			__be16 __unused;
			__be16 mtu;
		} frag;
	} un;
};

struct maglev_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* The 6.1 verifier does not track the range of a byte swap; a length used
 * in packet pointer arithmetic gets an AND it can see (the compiler would
 * drop a plain one as redundant).
 */
static __always_inline __u32 maglev_bound16(__u32 v)
{
	__u64 x = v;

	asm volatile("%0 &= 0xffff" : "+r"(x));
	return (__u32)x;
}

/* Bytes of VLAN tags (0, 4 or 8) for an L2 header of l2 bytes, bounded by
 * an AND the verifier sees before any pointer arithmetic: 6.1 loses the
 * range of a length that the compiler checked on one copy and spilled.
 */
static __always_inline __u32 maglev_vlan_bytes(__u32 l2)
{
	__u64 x = l2 - 14;

	asm volatile("%0 &= 0xc" : "+r"(x));
	return (__u32)x;
}

/* Fold a 32-bit one's-complement sum to the 16-bit checksum field. */
static __always_inline __u16 maglev_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Sum of the 16-bit words of a 20-byte IPv4 header (check field included). */
static __always_inline __u32 maglev_csum_iph(const void *iph)
{
	const __u16 *w = iph;
	__u32 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < 10; i++)
		sum += w[i];
	return sum;
}

#endif /* MAGLEV_XDP_CONSTS_H */
