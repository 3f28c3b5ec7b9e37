/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The backend-side decap program (bpf/maglev_decap.bpf.c) and what
 * configures it (userspace/tools/maglev_decap.c, selftests): its config
 * element, its strict-mode maps and its counters.
 *
 * Strict mode (issue 14 item 9): without it the program decapsulates IPIP
 * and GUE from anyone, so any host that can reach a backend can deliver
 * packets with a spoofed inner source past the rp_filter the backends relax.
 * With MAGLEV_DECAP_F_STRICT_SRC an encapsulated packet is decapsulated only
 * if its outer source falls in a prefix of maglev_dcp_src (the balancers'
 * outer source prefixes and, with second chance, the backends that send
 * packets on); with MAGLEV_DECAP_F_STRICT_DST only if its outer destination
 * is in maglev_dcp_dst (this backend's own addresses, Katran's
 * DECAP_STRICT_DESTINATION). Anything else encapsulated is dropped and
 * counted (MAGLEV_DECAP_DROP_SRC / MAGLEV_DECAP_DROP_DST); packets that are
 * not encapsulated for us pass as before. Both maps hold IPv4 addresses as
 * IPv4-mapped IPv6 (::ffff:a.b.c.d), so one map serves both families.
 *
 * Second chance sends a packet on only to a previous owner inside a prefix
 * of maglev_dcp_src with MAGLEV_DECAP_F_STRICT_SRC set (issue 31 item 7):
 * an open program relays nothing (MAGLEV_DECAP_SC_NOT_ALLOWED).
 */
#ifndef MAGLEV_DECAP_H
#define MAGLEV_DECAP_H

#include <linux/types.h>

/* maglev_decap_config.flags */
#define MAGLEV_DECAP_F_STRICT_SRC (1 << 0)
#define MAGLEV_DECAP_F_STRICT_DST (1 << 1)

/* Element 0 of maglev_decap_cfg. */
struct maglev_decap_config {
	__be16 gue_port; /* network order; 0: MAGLEV_GUE_PORT_DEFAULT */
	__u8 flags;	 /* MAGLEV_DECAP_F_* ; 0: accept from anyone (open) */
	__u8 pad;
};

/* Key of maglev_dcp_src (LPM trie): prefixlen over the 128-bit address. */
struct maglev_decap_prefix {
	__u32 prefixlen;
	__u32 addr[4]; /* network order; IPv4: ::ffff:a.b.c.d, prefixlen 96 + plen */
};

/* Key of maglev_dcp_dst (hash): one of this backend's own addresses. */
struct maglev_decap_addr {
	__u32 addr[4]; /* network order; IPv4: ::ffff:a.b.c.d */
};

#define MAGLEV_DECAP_MAX_PREFIXES 256
#define MAGLEV_DECAP_MAX_ADDRS	  256

/* ::ffff:v4 into a[4] (v4 in network order). */
static inline void maglev_decap_v4mapped(__u32 a[4], __u32 v4)
{
	a[0] = 0;
	a[1] = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	a[2] = 0xffff0000;
#else
	a[2] = 0x0000ffff;
#endif
	a[3] = v4;
}

/* Per-CPU counters of the decap program (maglev_decap_cnt index). */
enum maglev_decap_counter {
	MAGLEV_DECAP_DONE,	     /* decapsulated, delivered */
	MAGLEV_DECAP_PASS,	     /* not ours: passed untouched */
	MAGLEV_DECAP_DROP_ECN,	     /* outer CE on a not-ECN-capable inner packet */
	MAGLEV_DECAP_SC_LOCAL,	     /* carried a previous owner, a local socket claims it */
	MAGLEV_DECAP_SC_SYN,	     /* carried a previous owner, a SYN: always local */
	MAGLEV_DECAP_SC_COOKIE,	     /* carried a previous owner, a valid syncookie ACK */
	MAGLEV_DECAP_SC_REDIRECT,    /* no local socket: sent on to the previous owner */
	MAGLEV_DECAP_SC_ONCE,	     /* previous owner field cleared (sent on already): local */
	MAGLEV_DECAP_SC_NO_REDIRECT, /* would be sent on but cannot (family, adjust): local */
	MAGLEV_DECAP_DROP_SRC,	     /* strict: outer source in no allowed prefix */
	MAGLEV_DECAP_DROP_DST,	     /* strict: outer destination not this host's */
	MAGLEV_DECAP_SC_NO_PORTS,    /* carried a previous owner, no TCP ports (fragment): local */
	MAGLEV_DECAP_SC_NOT_ALLOWED, /* would be sent on, owner in no allowed prefix (open): local
				      */
	MAGLEV_DECAP_MAX
};

#endif /* MAGLEV_DECAP_H */
