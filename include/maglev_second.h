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
 * address carried if its strict mode allows that address (never when open:
 * include/maglev_decap.h), with the field cleared so it never moves again.
 *
 * Wire format: include/maglev_gue.h.
 */
#ifndef MAGLEV_SECOND_H
#define MAGLEV_SECOND_H

#include <linux/types.h>
#include "maglev_gue.h"
#include "maglev_maps.h"
#include "maglev_decap.h"

/* struct maglev_vip_info.flags */
#define MAGLEV_VIP_F_SECOND_CHANCE (1 << 0)

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
