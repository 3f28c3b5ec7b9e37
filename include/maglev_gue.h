/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The GUE encapsulation every sender and receiver of this project shares:
 * the XDP balancer (bpf/xdp_encap.h), the health-check encapsulation
 * (bpf/maglev_hc.bpf.c), the slow-path module (kernel/maglev_encap.c) and
 * the backend's decap program (bpf/maglev_decap.bpf.c).
 *
 * Outer IP, UDP (source 0x8000 | 15 bits of the flow fold, destination the
 * VIP's GUE port), the 4-byte GUE version 0 header (draft-ietf-intarea-gue)
 * naming the inner protocol, hlen words of optional fields, the inner IP
 * packet.
 *
 * Second chance (include/maglev_second.h) carries the slot's previous owner
 * in the optional fields (hlen = MAGLEV_GUE_PREV_WORDS), as GUE private
 * data: GUE flags 0, then 20 bytes:
 *
 *     0  u8  type    MAGLEV_GUE_PREV_TYPE
 *     1  u8  family  MAGLEV_AF_INET / MAGLEV_AF_INET6 of addr; 0: cleared
 *                    (this packet was sent on once already: deliver it)
 *     2  u16 pad     0
 *     4  u32 addr[4] previous owner, network order (IPv4 in addr[0])
 *
 * Flags 0, because Linux's GUE receiver (fou, `ip fou add port P gue`)
 * drops a packet with any standard flag but P (0x0001), and with P set
 * reads the first optional word as private flags and drops any bit but
 * REMCSUM (validate_gue_flags, include/net/gue.h); optional words no flag
 * claims it skips (issue 31 item 4; the first encoding set 0x0001 and fou
 * dropped every carried packet). Both fou and the project's decap program
 * take these packets; fou delivers every one locally, as without second
 * chance; only the decap program sends one on (bpf/maglev_decap_second.h).
 */
#ifndef MAGLEV_GUE_H
#define MAGLEV_GUE_H

#include <linux/types.h>

/* GUE version 0 header without optional fields. */
struct maglev_gue_hdr {
	__u8 ver_c_hlen; /* version (2 bits) 0, C 0, hlen: 32-bit words of options */
	__u8 proto;	 /* IPPROTO_IPIP or IPPROTO_IPV6 */
	__be16 flags;
};

#define MAGLEV_GUE_HLEN 4

/* UDP source port of a flow: 0x8000 | 15 bits of the flow fold (host order). */
#define MAGLEV_GUE_SPORT(fold) (0x8000 | ((fold)&0x7fff))

/* First byte of the private data: a struct maglev_gue_prev follows. */
#define MAGLEV_GUE_PREV_TYPE 0x53 /* 'S' */

/* The flags of the first encoding (the same fields after GUE flags 0x0001),
 * which balancers before issue 31 item 4 send: the decap program still
 * reads it, so backends can be upgraded before balancers.
 */
#define MAGLEV_GUE_F_PREV_OLD 0x0001

struct maglev_gue_prev {
	__u8 type;
	__u8 family;
	__u16 pad;
	__u32 addr[4];
};

/* GUE hlen (32-bit words of optional fields) of a packet carrying one. */
#define MAGLEV_GUE_PREV_WORDS (sizeof(struct maglev_gue_prev) / 4)

#endif /* MAGLEV_GUE_H */
