/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Health checks through the encapsulation: what bpf/maglev_hc.bpf.c (the TC
 * egress program) and userspace/lib/hc_encap.c (its loader, maglevd) share.
 * userspace/lib/hc_encap.h describes the mechanism.
 */
#ifndef MAGLEV_HC_H
#define MAGLEV_HC_H

#include <linux/types.h>

/* Socket mark of a check: the top 16 bits say "maglevd health check", the
 * low 16 bits hold the backend index (MAGLEV_MAX_BACKENDS is 65536).
 */
#define MAGLEV_HC_MARK_BASE 0x6d670000U
#define MAGLEV_HC_MARK_MASK 0xffff0000U
#define MAGLEV_HC_MARK_IDX  0x0000ffffU

/* Where a check of backend index idx goes; all addresses and ports in
 * network order, IPv4 addresses in word 0.
 */
struct maglev_hc_target {
	__u32 backend[4];
	__u32 vip[4];
	__u8 backend_family; /* MAGLEV_AF_INET / MAGLEV_AF_INET6: the outer family */
	__u8 vip_family;     /* the inner family, the check socket's */
	__u8 encap;	     /* enum maglev_encap */
	__u8 proto;	     /* the check's IPPROTO_TCP or IPPROTO_UDP (0: TCP) */
	__u16 gue_port;	     /* GUE destination port */
	__u16 port;	     /* the check's destination port on the VIP */
};

/* Per-CPU counters of the TC program, index = enum value. */
enum maglev_hc_counter {
	MAGLEV_HC_ENCAP,     /* encapsulated and sent */
	MAGLEV_HC_NO_TARGET, /* marked, but no target or not the target's VIP: dropped */
	MAGLEV_HC_ERROR,     /* malformed or the room could not be made: dropped */
	MAGLEV_HC_CTR_MAX
};

/* TC filter identity on clsact egress, so a restarted maglevd replaces its
 * own filter and `tc filter del dev IF egress pref 1 handle 0x6d67 bpf`
 * removes it by hand.
 */
#define MAGLEV_HC_TC_HANDLE   0x6d67
#define MAGLEV_HC_TC_PRIORITY 1

#endif /* MAGLEV_HC_H */
