/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The part of a Maglev table build that does not depend on how the table is
 * populated: input validation, the canonical backend order, the permutation
 * parameters (offset, skip) and each backend's slot quota. Shared by the fast
 * builder (maglev_table.c) and the paper's plain pseudocode
 * (maglev_table_naive.c) so both populate from the same plan.
 */
#ifndef MAGLEV_TABLE_PLAN_H
#define MAGLEV_TABLE_PLAN_H

#include <stdint.h>
#include "maglev_table.h"

struct maglev_plan_entry {
	uint32_t idx;	 /* index into the caller's backend array */
	uint32_t offset; /* h1 mod m: first preferred slot */
	uint32_t skip;	 /* h2 mod (m - 1) + 1: step through the permutation */
	uint32_t quota;	 /* slots this backend owns in the finished table */
};

struct maglev_plan {
	uint32_t m;
	uint32_t n; /* positive-weight backends, in canonical order */
	struct maglev_plan_entry *e;
};

/* Validate the input (out, the caller's table, only for NULL) and compute
 * the plan. Every builder starts here, so all answer bad input alike.
 * Returns 0 or a negative errno with err->msg set (err may be NULL); on
 * error nothing is allocated.
 */
int maglev_plan_make(struct maglev_plan *p, const struct maglev_seed *seed,
		     const struct maglev_backend_spec *be, size_t n, uint32_t m,
		     const uint32_t *out, struct maglev_err *err);
void maglev_plan_free(struct maglev_plan *p);

/* The canonical position in p (made from be) of the backend with b's
 * identity (family, address, port), or UINT32_MAX if p has none.
 */
uint32_t maglev_plan_find(const struct maglev_plan *p, const struct maglev_backend_spec *be,
			  const struct maglev_backend_spec *b);

/*
 * SipHash-2-4 keyed with the seed over tag || canonical id || extra[0..nextra-1]
 * (each extra word 8 bytes, little-endian): 32 + 8 * nextra bytes, every field
 * fixed-width. The tag separates the uses (h1, h2, ring points, rendezvous
 * keys), so no two of them share a message. b must have a valid family.
 */
uint64_t maglev_id_hash(const struct maglev_seed *seed, uint64_t tag,
			const struct maglev_backend_spec *b, const uint64_t *extra, int nextra);

#endif /* MAGLEV_TABLE_PLAN_H */
