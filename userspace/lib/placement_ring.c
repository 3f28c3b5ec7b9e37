// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Karger consistent-hash ring compiled into the M-slot table.
 *
 * Backend b (weight w) has vnodes * w points; point i sits at
 * SipHash-2-4(seed, "maglevrg" || canonical id || i as 8 bytes LE), a 64-bit
 * position on a circle of 2^64. Every field is fixed-width, so no two
 * (backend, i) pairs share a message (unlike h1 + i * h2, whose points of two
 * backends can fall into lockstep). Slot s sits at floor(s * 2^64 / m), the
 * start of its 1/m of the circle, and goes to the first point at or after it
 * (right-inclusive), wrapping to the first point. Points at the same position
 * go in canonical order, so the table never depends on the input order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maglev_table_plan.h"
#include "placement.h"

static int point_cmp(const void *a, const void *b)
{
	const struct maglev_ring_point *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

void maglev_ring_fill(const struct maglev_ring_point *pt, size_t np, uint32_t m, uint32_t *out)
{
	uint64_t q, r, at, rem;
	size_t k;
	uint32_t s;

	/* Slot positions floor(s * 2^64 / m) without a 128-bit division per
	 * slot: 2^64 = q * m + r, so each slot adds q and carries r / m.
	 */
	q = UINT64_MAX / m;
	r = UINT64_MAX % m + 1;
	if (r == m) {
		q++;
		r = 0;
	}
	for (s = 0, k = 0, at = 0, rem = 0; s < m; s++) {
		while (k < np && pt[k].h < at)
			k++;
		out[s] = pt[k < np ? k : 0].owner;
		at += q;
		rem += r;
		if (rem >= m) {
			rem -= m;
			at++;
		}
	}
}

int maglev_ring_fits(uint32_t vnodes, uint64_t total_weight, struct maglev_err *err)
{
	uint64_t total = vnodes * total_weight;

	if (total <= MAGLEV_RING_POINTS_MAX)
		return 0;
	if (err)
		snprintf(err->msg, sizeof(err->msg),
			 "a ring of %llu points (vnodes %u x total weight %llu) exceeds %u: "
			 "lower vnodes or the weights",
			 (unsigned long long)total, vnodes, (unsigned long long)total_weight,
			 MAGLEV_RING_POINTS_MAX);
	return -EINVAL;
}

int maglev_ring_build(const struct maglev_seed *seed, uint32_t vnodes,
		      const struct maglev_backend_spec *be, size_t n, uint32_t m, uint32_t *out,
		      struct maglev_err *err)
{
	uint64_t total = 0, k = 0;
	struct maglev_ring_point *pt;
	struct maglev_plan p;
	uint32_t j, s;
	int ret;

	if (vnodes < 1 || vnodes > MAGLEV_VNODES_MAX) {
		if (err)
			snprintf(err->msg, sizeof(err->msg), "vnodes %u is not in 1..%u", vnodes,
				 MAGLEV_VNODES_MAX);
		return -EINVAL;
	}
	ret = maglev_plan_make(&p, seed, be, n, m, out, err);
	if (ret)
		return ret;
	for (j = 0; j < p.n; j++)
		total += be[p.e[j].idx].weight;
	if (maglev_ring_fits(vnodes, total, err)) {
		maglev_plan_free(&p);
		return -EINVAL;
	}
	total *= vnodes;
	pt = malloc(sizeof(*pt) * total);
	if (!pt) {
		if (err)
			snprintf(err->msg, sizeof(err->msg), "out of memory for %llu ring points",
				 (unsigned long long)total);
		maglev_plan_free(&p);
		return -ENOMEM;
	}
	for (j = 0; j < p.n; j++) {
		const struct maglev_backend_spec *b = &be[p.e[j].idx];
		uint64_t i, np = (uint64_t)vnodes * b->weight;

		for (i = 0; i < np; i++) {
			pt[k].h = maglev_id_hash(seed, MAGLEV_HASH_TAG_RING, b, &i, 1);
			pt[k++].owner = j;
		}
	}
	qsort(pt, total, sizeof(*pt), point_cmp);
	maglev_ring_fill(pt, total, m, out);
	for (s = 0; s < m; s++)
		out[s] = p.e[out[s]].idx;
	free(pt);
	maglev_plan_free(&p);
	return 0;
}
