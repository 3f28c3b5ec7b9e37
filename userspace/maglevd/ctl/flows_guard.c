// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A change that takes backends out of a VIP that stays (backend del, a
 * batch or restore without them) is refused while one of them carries live
 * flows, unless forced: the next packet of each flow would be re-picked to
 * another backend, which resets it, and nothing said so. Deleting a whole
 * VIP ends its service on purpose and is not held. The counts are the
 * datapath's own: the latest census of the connection table (flow_count.c,
 * `backend list` FLOWS), which counts only the entries that still send to
 * the backend (a down backend's were re-picked already).
 */
#include <stdio.h>

#include "ctl/req.h"
#include "datapath/flow_count.h"

int req_guard_flows(struct daemon *d, const struct registry *next, struct req_err *e)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	uint64_t n, total = 0, first = 0, slots, entries, live;
	const struct vip *fv = NULL;
	const struct be *fb = NULL;
	uint32_t i, j, more = 0;
	double age = 0;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i], *nv;

		if (!v || !(nv = registry_find_vip(next, &v->key)))
			continue;
		for (j = 0; j < v->nbe; j++) {
			const struct be *b = &v->bes[j], *nb = vip_find_be(nv, &b->addr);

			/* Deleted and re-added in one request (a restore) it keeps
			 * its index and generation, so its flows stay with it.
			 */
			if (nb && nb->idx == b->idx && nb->gen == b->gen)
				continue;
			if (!flow_count_backend(b->idx, &n)) {
				ctl_format_addr(&b->addr, bname, sizeof(bname));
				return req_fail(e,
						"backend %s: its flows are not counted yet (the "
						"connection table is counted every 2 s): retry, or "
						"--force to delete whatever it carries",
						bname);
			}
			if (!n)
				continue;
			if (!fb) {
				fv = v;
				fb = b;
				first = n;
			} else {
				more++;
			}
			total += n;
		}
	}
	if (!fb)
		return 0;
	flow_count_table(&slots, &entries, &live, &age);
	ctl_format_vip(&fv->key, vname, sizeof(vname));
	ctl_format_addr(&fb->addr, bname, sizeof(bname));
	if (more)
		return req_fail(e,
				"backend %s of %s carries %llu live flows, and %u more backends "
				"%llu (counted %.1f s ago): deleting resets them. Drain first "
				"(backend set --drain), delete at FLOWS 0, or --force",
				bname, vname, (unsigned long long)first, more,
				(unsigned long long)(total - first), age);
	return req_fail(e,
			"backend %s of %s carries %llu live flows (counted %.1f s ago): deleting "
			"it resets them. Drain it first (backend set --drain) and delete it at "
			"FLOWS 0, or --force",
			bname, vname, (unsigned long long)first, age);
}
