/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Second chance: what the balancer and the backend's decap program share.
 *
 * A VIP with MAGLEV_VIP_F_SECOND_CHANCE keeps, beside each slot's owner, the
 * slot's previous owner while the slot changed recently (struct
 * maglev_table: both arrays in the one inner-map value, swapped together).
 * A TCP packet the balancer has no connection entry for, that is not a SYN,
 * whose slot has a previous owner, goes to the current owner with the
 * previous owner's address in a GUE private field. The backend's decap
 * program delivers it when a local socket (established, request, time-wait)
 * or a valid syncookie ACK claims it; otherwise it sends it on, once, to the
 * address carried, with the field cleared so it never moves again.
 *
 * Wire format (after the 4-byte GUE v0 header, hlen = 5):
 *
 *   GUE flags (16 bits, network order) has MAGLEV_GUE_F_PREV set;
 *   then 20 bytes of optional fields:
 *     0  u8  type    MAGLEV_GUE_PREV_TYPE
 *     1  u8  family  MAGLEV_AF_INET / MAGLEV_AF_INET6 of addr; 0: cleared
 *                    (this packet was sent on once already: deliver it)
 *     2  u16 pad     0
 *     4  u32 addr[4] previous owner, network order (IPv4 in addr[0])
 *
 * A decap program that knows nothing of it skips the hlen words and
 * delivers the packet, which is what happened before second chance.
 */
#ifndef MAGLEV_SECOND_H
#define MAGLEV_SECOND_H

#include <linux/types.h>
#include "maglev_maps.h"
#include "maglev_decap.h"

/* struct maglev_vip_info.flags */
#define MAGLEV_VIP_F_SECOND_CHANCE (1 << 0)

/* GUE flags bit (host order of the 16-bit field) saying the optional
 * fields hold a struct maglev_gue_prev.
 */
#define MAGLEV_GUE_F_PREV    0x0001
#define MAGLEV_GUE_PREV_TYPE 0x53 /* 'S' */

struct maglev_gue_prev {
	__u8 type;
	__u8 family;
	__u16 pad;
	__u32 addr[4];
};

/* GUE hlen (32-bit words of optional fields) of a packet carrying one. */
#define MAGLEV_GUE_PREV_WORDS (sizeof(struct maglev_gue_prev) / 4)

/*
 * The value of a VIP's one-element table map: the slot owners and, for
 * slots that changed recently on a second-chance VIP, their previous owner
 * (0: none). One value, so one swap replaces both.
 */
struct maglev_table {
	__u32 owner[MAGLEV_TABLE_SIZE];
	__u32 prev[MAGLEV_TABLE_SIZE];
};

/* How long maglevd keeps previous owners after a table change, unless the
 * config says otherwise (second_chance_ms).
 */
#define MAGLEV_SECOND_CHANCE_MS_DEFAULT 60000

#endif /* MAGLEV_SECOND_H */
