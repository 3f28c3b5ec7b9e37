/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Placements: three ways to fill the same M-slot lookup table. The datapath
 * only ever indexes the table, so the choice costs nothing per packet; it
 * decides how evenly slots are shared and how many move when backends
 * change. See docs/maglev-table.md.
 *
 *   maglev      Eisenbud et al. permutations (maglev_table.h), the default.
 *   ring        Karger consistent-hash ring, V points per unit of weight;
 *               slot s goes to the first point at or after its position.
 *   rendezvous  highest random weight: slot s goes to the backend with the
 *               highest -w / ln(u(s, b)).
 *
 * Every placement depends only on the seed, M, the set of (backend, weight)
 * pairs and its own parameter, never on the order of the input array, and
 * validates its input exactly like maglev_table_build().
 */
#ifndef MAGLEV_PLACEMENT_H
#define MAGLEV_PLACEMENT_H

#include "maglev_table.h"

enum maglev_placement {
	MAGLEV_PLACEMENT_MAGLEV = 0,
	MAGLEV_PLACEMENT_RING = 1,
	MAGLEV_PLACEMENT_RENDEZVOUS = 2,
};

#define MAGLEV_VNODES_DEFAULT 256
#define MAGLEV_VNODES_MAX     10000
/* A ring holds vnodes * (sum of weights) points, 16 bytes each while it is
 * built: 64 MB at this limit.
 */
#define MAGLEV_RING_POINTS_MAX (1u << 22)

/* Domain tags of the ring points and rendezvous keys ("maglevrg", "maglevrz"
 * as little-endian words), next to h1/h2's in maglev_table.h.
 */
#define MAGLEV_HASH_TAG_RING 0x677276656c67616dULL
#define MAGLEV_HASH_TAG_RDV  0x7a7276656c67616dULL

struct maglev_placement_cfg {
	enum maglev_placement kind;
	uint32_t vnodes; /* ring only: points per unit of weight, 1..MAGLEV_VNODES_MAX */
};

/*
 * Fill out[0..m-1] with indices into be[0..n-1] by the chosen placement.
 * Errors as maglev_table_build(), plus -EINVAL for an unknown placement, a
 * vnodes outside 1..MAGLEV_VNODES_MAX, or a ring of more than
 * MAGLEV_RING_POINTS_MAX points; out is untouched on error.
 */
int maglev_placement_build(const struct maglev_seed *seed, const struct maglev_placement_cfg *cfg,
			   const struct maglev_backend_spec *be, size_t n, uint32_t m,
			   uint32_t *out, struct maglev_err *err);

int maglev_ring_build(const struct maglev_seed *seed, uint32_t vnodes,
		      const struct maglev_backend_spec *be, size_t n, uint32_t m, uint32_t *out,
		      struct maglev_err *err);
/*
 * The rendezvous table of (be, n) from old_out, the rendezvous table of
 * (old_be, old_n) under the same seed and m, in O(m) for a few changes: a
 * slot keeps its owner unless the owner left or lost weight (then it is
 * decided again among all backends) or a new or heavier backend beats it.
 * The same bytes as maglev_rendezvous_build(be, n); errors likewise. If
 * old_out is not what it must be, the result is still a valid table, but
 * not the rendezvous one. old_be NULL or old_n 0: a full build.
 */
int maglev_rendezvous_update(const struct maglev_seed *seed,
			     const struct maglev_backend_spec *old_be, size_t old_n,
			     const uint32_t *old_out, const struct maglev_backend_spec *be,
			     size_t n, uint32_t m, uint32_t *out, struct maglev_err *err);

/* 0 if a ring of vnodes points per unit of weight over total_weight fits
 * MAGLEV_RING_POINTS_MAX, else -EINVAL with err->msg saying so.
 */
int maglev_ring_fits(uint32_t vnodes, uint64_t total_weight, struct maglev_err *err);
int maglev_rendezvous_build(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
			    size_t n, uint32_t m, uint32_t *out, struct maglev_err *err);

/*
 * The ring's last step, for tests: pt[0..np-1] sorted by h (np >= 1); slot s
 * gets the owner of the first point with h >= floor(s * 2^64 / m), or of
 * pt[0] when there is none (the wrap).
 */
struct maglev_ring_point {
	uint64_t h;	/* position on the circle */
	uint32_t owner; /* canonical position of the backend */
};
void maglev_ring_fill(const struct maglev_ring_point *pt, size_t np, uint32_t m, uint32_t *out);

/* "maglev", "ring", "rendezvous"; NULL for an unknown value. */
const char *maglev_placement_name(enum maglev_placement kind);
/* 0 and *kind set, or -EINVAL for an unknown name. */
int maglev_placement_parse(const char *name, enum maglev_placement *kind);

/*
 * -log2(x / 2^54) in fixed point with 56 fraction bits, for odd x in
 * [1, 2^54), computed with integer arithmetic only (no libm), so every
 * machine gets the same bits. The rendezvous score; exported for the tests.
 */
uint64_t maglev_neg_log2_q56(uint64_t x);

#endif /* MAGLEV_PLACEMENT_H */
