/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bounded loads' probe (include/maglev_maps.h, "Bounded loads"): the one
 * definition of the seeded probe sequence, compiled into the XDP program
 * (bpf/xdp_lookup.h), the slow-path module (kernel/maglev_state.c) and the
 * tests, so a new flow whose pick is over cap spills to the same backend
 * whichever data plane sees it.
 */
#ifndef MAGLEV_BOUNDED_H
#define MAGLEV_BOUNDED_H

#include <linux/types.h>

#include "maglev_hash.h"
#include "maglev_maps.h"

/* Non-zero: backend idx is marked over its VIP's cap (ctx: the caller's marks). */
typedef int (*maglev_marked_fn)(const void *ctx, __u32 idx);

/*
 * For a new flow of flow hash h whose pick in table owner (m slots) is
 * marked: probe slots maglev_probe_hash(seed, h, i) % m for i = 1 ..
 * MAGLEV_BOUNDED_PROBES and return the first backend there that is not
 * marked; 0: none (keep the pick). The caller checks the pick's own mark
 * first (the common, unmarked case costs one lookup). marked is inlined
 * where the function is: the BPF program can make no indirect call.
 */
static __always_inline __u32 maglev_bounded_probe(const struct maglev_seed *seed, __u64 h,
						  const __u32 *owner, __u32 m,
						  maglev_marked_fn marked, const void *ctx)
{
	__u32 i, j, slot;

	for (i = 1; i <= MAGLEV_BOUNDED_PROBES; i++) {
		slot = maglev_slot(maglev_probe_hash(seed, h, i), m);
		/* Always below m, but the BPF verifier does not track the
		 * range of a modulo: hide the value so the check stays.
		 */
		asm volatile("" : "+r"(slot));
		if (slot >= m)
			break;
		j = owner[slot];
		if (j && !marked(ctx, j))
			return j;
	}
	return 0;
}

#endif /* MAGLEV_BOUNDED_H */
