// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Tests of the ring and rendezvous placements (userspace/lib/placement_*.c),
 * against transcriptions of docs/maglev-table.md kept in this file (the ring
 * from the byte-level SipHash of table_ref.h; rendezvous without the
 * library's bound that skips most logarithms), plus pinned digests that
 * selftests/table/maglev_ref.py reproduces from the document alone.
 */
#include <errno.h>
#include <math.h>
#include "placement.h"
#include "table_ref.h"
#include "kselftest_harness.h"

static uint32_t *build(const struct maglev_seed *seed, enum maglev_placement kind, uint32_t vnodes,
		       const struct maglev_backend_spec *be, size_t n, uint32_t m)
{
	struct maglev_placement_cfg cfg = {.kind = kind, .vnodes = vnodes};
	uint32_t *t = malloc(sizeof(*t) * m);
	struct maglev_err err;

	if (!t || maglev_placement_build(seed, &cfg, be, n, m, t, &err)) {
		free(t);
		return NULL;
	}
	return t;
}

/* Positive-weight backends of be in canonical order. */
static size_t canon_order(const struct maglev_backend_spec *be, size_t n, size_t *ord)
{
	size_t i, j, np = 0;
	uint8_t a[24], b[24];

	for (i = 0; i < n; i++) {
		if (!be[i].weight)
			continue;
		canon_id(&be[i], a);
		for (j = np; j > 0; j--) {
			canon_id(&be[ord[j - 1]], b);
			if (memcmp(b, a, 24) < 0)
				break;
			ord[j] = ord[j - 1];
		}
		ord[j] = i;
		np++;
	}
	return np;
}

static uint64_t ref_id_hash(const struct maglev_seed *seed, const char tag[8],
			    const struct maglev_backend_spec *b, const uint64_t *extra, int nextra)
{
	uint8_t key[16], msg[48];
	int i, k;

	seed_key(seed, key);
	memcpy(msg, tag, 8);
	canon_id(b, msg + 8);
	for (i = 0; i < nextra; i++)
		for (k = 0; k < 8; k++)
			msg[32 + 8 * i + k] = extra[i] >> (8 * k);
	return ref_siphash24(key, msg, 32 + 8 * nextra);
}

/* ---- the ring, as documented: points by SipHash of (id, i), slot s at
 * floor(s * 2^64 / m), the first point at or after it, else the first point
 */
struct rpt {
	uint64_t h;
	size_t pos;
};

static int rpt_cmp(const void *a, const void *b)
{
	const struct rpt *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void ref_ring(const struct maglev_seed *seed, uint32_t vnodes,
		     const struct maglev_backend_spec *be, size_t n, uint32_t m, uint32_t *out)
{
	size_t *ord = calloc(n, sizeof(*ord)), np = canon_order(be, n, ord), total = 0, k, j;
	struct rpt *pt;
	uint32_t s;

	for (j = 0; j < np; j++)
		total += (size_t)vnodes * be[ord[j]].weight;
	pt = calloc(total, sizeof(*pt));
	for (j = 0, k = 0; j < np; j++) {
		uint64_t i;

		for (i = 0; i < (uint64_t)vnodes * be[ord[j]].weight; i++) {
			pt[k].h = ref_id_hash(seed, "maglevrg", &be[ord[j]], &i, 1);
			pt[k++].pos = j;
		}
	}
	qsort(pt, total, sizeof(*pt), rpt_cmp);
	for (s = 0; s < m; s++) {
		uint64_t at = (uint64_t)(((unsigned __int128)s << 64) / m);

		size_t lo = 0, hi = total; /* first point with h >= at */

		while (lo < hi) {
			k = lo + (hi - lo) / 2;
			if (pt[k].h < at)
				lo = k + 1;
			else
				hi = k;
		}
		out[s] = ord[pt[lo < total ? lo : 0].pos];
	}
	free(pt);
	free(ord);
}

/* ---- rendezvous: every (slot, backend) score computed, no shortcut ---- */
static void ref_rendezvous(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
			   size_t n, uint32_t m, uint32_t *out)
{
	size_t *ord = calloc(n, sizeof(*ord)), np = canon_order(be, n, ord), j;
	uint64_t *key = calloc(np, sizeof(*key));
	uint32_t s;

	for (j = 0; j < np; j++)
		key[j] = ref_id_hash(seed, "maglevrz", &be[ord[j]], NULL, 0);
	for (s = 0; s < m; s++) {
		uint64_t bl = 0;
		uint32_t bw = 0;
		size_t bj = 0;

		for (j = 0; j < np; j++) {
			uint64_t z = key[j] + (uint64_t)(s + 1) * 0x9e3779b97f4a7c15ULL, l;

			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
			l = maglev_neg_log2_q56((z >> 10) | 1);
			/* w / l > bw / bl, exactly */
			if (!j ||
			    (unsigned __int128)bl * be[ord[j]].weight > (unsigned __int128)l * bw) {
				bl = l;
				bw = be[ord[j]].weight;
				bj = j;
			}
		}
		out[s] = ord[bj];
	}
	free(key);
	free(ord);
}

static const enum maglev_placement kinds[] = {MAGLEV_PLACEMENT_RING, MAGLEV_PLACEMENT_RENDEZVOUS};

TEST(neg_log2_is_accurate)
{
	uint64_t x, r = 0x243f6a8885a308d3ULL;
	int i;

	/* exact where log2 is an integer; never 0 (the clamp near u = 1) */
	ASSERT_EQ(54ULL << 56, maglev_neg_log2_q56(1));
	for (i = 1; i < 54; i++) {
		double want = 54 - i - log2(1 + 1.0 / ((double)(1ULL << i)));

		x = (1ULL << i) + 1;
		ASSERT_GT(1e-13, fabs(maglev_neg_log2_q56(x) / 72057594037927936.0 - want))
		TH_LOG("x = 2^%d + 1", i);
	}
	ASSERT_LE(1, maglev_neg_log2_q56((1ULL << 54) - 1));
	for (i = 0; i < 200000; i++) {
		double want, got;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		x = ((r >> 10) | 1) >> (i % 40);
		x |= 1;
		want = -log2((double)x / 18014398509481984.0);
		got = maglev_neg_log2_q56(x) / 72057594037927936.0;
		/* 2^-45: orders of magnitude below any effect on a table */
		ASSERT_GT(2.9e-14 * (want > 1 ? want : 1), fabs(got - want))
		TH_LOG("x = 0x%llx", (unsigned long long)x);
	}
}

TEST(match_reference_transcriptions)
{
	static const uint32_t sizes[] = {251, 4093, 65537};
	static const size_t ns[] = {1, 3, 10, 41};
	static const uint32_t vn[] = {1, 16, 100};
	size_t s, z, k, mix, v;

	for (s = 0; s < 4; s++)
		for (z = 0; z < 3; z++)
			for (k = 0; k < 4; k++)
				for (mix = EQUAL; mix <= WITH_ZEROS; mix++) {
					uint32_t m = sizes[z], *t, *ref;
					struct maglev_backend_spec *be;

					if (m == 65537 && (s > 1 || ns[k] > 10))
						continue; /* keep the run short */
					be = fleet(ns[k], mix, s + k);
					ref = malloc(4 * m);
					if (mix == RANDOM) /* ring points grow with weights */
						for (v = 0; v < ns[k]; v++)
							be[v].weight = be[v].weight % 5 + 1;
					if (mix == WITH_ZEROS)
						for (v = 0; v < ns[k]; v++)
							be[v].weight %= 4;
					if (mix == WITH_ZEROS && !be[0].weight)
						be[0].weight = 1;
					t = build(&seeds[s], MAGLEV_PLACEMENT_RENDEZVOUS, 0, be,
						  ns[k], m);
					ASSERT_NE(NULL, t);
					ref_rendezvous(&seeds[s], be, ns[k], m, ref);
					ASSERT_EQ(0, memcmp(ref, t, 4 * m))
					TH_LOG("rendezvous seed %zu m %u n %zu mix %zu", s, m,
					       ns[k], mix);
					free(t);
					for (v = 0; v < 3; v++) {
						t = build(&seeds[s], MAGLEV_PLACEMENT_RING, vn[v],
							  be, ns[k], m);
						ASSERT_NE(NULL, t);
						ref_ring(&seeds[s], vn[v], be, ns[k], m, ref);
						ASSERT_EQ(0, memcmp(ref, t, 4 * m))
						TH_LOG("ring seed %zu m %u n %zu mix %zu V %u", s,
						       m, ns[k], mix, vn[v]);
						free(t);
					}
					free(ref);
					free(be);
				}
}

/*
 * Pinned digests (FNV-1a of the table, as in table_test.c) for the same five
 * backends as table_known_answer. Balancers of different versions must
 * agree on these bytes; selftests/table/maglev_ref.py reproduces them.
 */
TEST(known_answers)
{
	struct maglev_backend_spec be[5] = {
		v4(0xc0000201, 80, 1),	 v4(0xc0000202, 80, 2), v6(1, 80, 3),
		v4(0xc0000203, 8080, 1), v6(2, 0, 0),
	};
	uint32_t *t;

	t = build(&default_seed, MAGLEV_PLACEMENT_RING, 4, be, 5, 251);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0xe792f9fb7eb13dc4ULL, digest(t, 251)); /* counts 55, 84, 89, 23, 0 */
	free(t);
	t = build(&default_seed, MAGLEV_PLACEMENT_RENDEZVOUS, 0, be, 5, 251);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0xf035fcbf6b7ced97ULL, digest(t, 251)); /* counts 26, 74, 117, 34, 0 */
	free(t);
}

/* Input order is irrelevant (owners by identity), the same input gives the
 * same bytes, and one bit of the seed gives an unrelated table.
 */
TEST(deterministic)
{
	size_t k, i, n = 200;

	for (k = 0; k < 2; k++) {
		struct maglev_backend_spec *be = fleet(n, WITH_ZEROS, 3),
					   *sh = malloc(sizeof(*sh) * n);
		struct maglev_seed other = default_seed;
		uint32_t *a, *b, *c;

		for (i = 0; i < n; i++)
			be[i].weight %= 3;
		be[1].weight = 2;
		a = build(&default_seed, kinds[k], 16, be, n, 65537);
		b = build(&default_seed, kinds[k], 16, be, n, 65537);
		ASSERT_NE(NULL, a);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(0, memcmp(a, b, 4 * 65537));
		free(b);
		for (i = 0; i < n; i++) {
			sh[i] = be[n - 1 - i];
			if (sh[i].family == AF_INET) /* padding is not identity */
				sh[i].addr[2] = 0xdeadbeef;
		}
		b = build(&default_seed, kinds[k], 16, sh, n, 65537);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(0, changed(a, be, b, sh, 65537));
		other.k0 ^= 1ULL << 40;
		c = build(&other, kinds[k], 16, be, n, 65537);
		ASSERT_NE(NULL, c);
		ASSERT_LT(65537 * 9 / 10, changed(a, be, c, be, 65537));
		free(a);
		free(b);
		free(c);
		free(be);
		free(sh);
	}
}

/* Rendezvous shares follow the weights exactly in expectation: each count
 * within 5 standard deviations of m * w / W; weight 0 owns nothing.
 */
TEST(rendezvous_weights)
{
	struct maglev_backend_spec be[12];
	uint32_t cnt[12] = {0}, *t, i, total = 0;

	for (i = 0; i < 12; i++) {
		be[i] = i % 2 ? v6(i, 0, 0) : v4(0xc6336401 + i, 0, 0);
		be[i].weight = i < 11 ? (i + 1) * (i + 1) * 10 : 0; /* 10 .. 1210, and 0 */
		total += be[i].weight;
	}
	be[0].weight = MAGLEV_WEIGHT_MAX; /* extremes side by side */
	total += MAGLEV_WEIGHT_MAX - 10;
	t = build(&default_seed, MAGLEV_PLACEMENT_RENDEZVOUS, 0, be, 12, 1048573);
	ASSERT_NE(NULL, t);
	for (i = 0; i < 1048573; i++)
		cnt[t[i]]++;
	for (i = 0; i < 12; i++) {
		double p = (double)be[i].weight / total, want = 1048573 * p;

		ASSERT_GT(5 * sqrt(want * (1 - p)) + 1, fabs(cnt[i] - want))
		TH_LOG("backend %u weight %u: %u slots, expected %.0f", i, be[i].weight, cnt[i],
		       want);
	}
	ASSERT_EQ(0, cnt[11]);
	free(t);
}

/* Ring: weight scales the point count, so shares follow weights within
 * the ring's own imbalance; weight 0 has no point.
 */
TEST(ring_weights)
{
	struct maglev_backend_spec be[4] = {v4(0xc6336401, 0, 1), v4(0xc6336402, 0, 3), v6(3, 0, 4),
					    v6(4, 0, 0)};
	uint32_t cnt[4] = {0}, *t, i;

	t = build(&default_seed, MAGLEV_PLACEMENT_RING, 1000, be, 4, 65537);
	ASSERT_NE(NULL, t);
	for (i = 0; i < 65537; i++)
		cnt[t[i]]++;
	for (i = 0; i < 3; i++)
		ASSERT_GT(0.1 * 65537 * be[i].weight / 8, fabs(cnt[i] - 65537.0 * be[i].weight / 8))
	TH_LOG("backend %u: %u slots", i, cnt[i]);
	ASSERT_EQ(0, cnt[3]);
	free(t);
}

/* Removing a backend moves exactly its slots; adding one moves only slots
 * to it; raising one backend's weight moves slots only to it. For both
 * placements (no other backend's points or scores change).
 */
TEST(minimal_disruption)
{
	size_t k, gone, i, n = 100;

	for (k = 0; k < 2; k++) {
		struct maglev_backend_spec *be = fleet(n + 1, EQUAL, 17), sub[100];
		uint32_t *t = build(&default_seed, kinds[k], 16, be, n, 65537), *u;
		size_t mine, moved;

		ASSERT_NE(NULL, t);
		for (gone = 0; gone < n; gone += 7) {
			size_t j = 0;

			for (i = 0; i < n; i++)
				if (i != gone)
					sub[j++] = be[i];
			u = build(&default_seed, kinds[k], 16, sub, n - 1, 65537);
			ASSERT_NE(NULL, u);
			for (i = 0, mine = 0, moved = 0; i < 65537; i++) {
				mine += t[i] == gone;
				moved += !same_backend(&be[t[i]], &sub[u[i]]);
			}
			ASSERT_LT(0, mine);
			ASSERT_EQ(mine, moved)
			TH_LOG("placement %d, removing %zu", kinds[k], gone);
			for (i = 0; i < 65537; i++)
				if (t[i] != gone)
					ASSERT_TRUE(same_backend(&be[t[i]], &sub[u[i]]));
			free(u);
		}
		/* add backend n */
		u = build(&default_seed, kinds[k], 16, be, n + 1, 65537);
		ASSERT_NE(NULL, u);
		for (i = 0, moved = 0; i < 65537; i++) {
			if (t[i] != u[i])
				ASSERT_EQ(n, u[i]);
			moved += t[i] != u[i];
		}
		ASSERT_LT(65537 / (n + 1) / 2, moved);
		free(u);
		/* raise backend 5 from 7 to 14: slots only move to it */
		be[5].weight = 14;
		u = build(&default_seed, kinds[k], 16, be, n, 65537);
		ASSERT_NE(NULL, u);
		for (i = 0, moved = 0; i < 65537; i++) {
			if (t[i] != u[i])
				ASSERT_EQ(5, u[i]);
			moved += t[i] != u[i];
		}
		ASSERT_LT(65537 / n / 2, moved);
		free(u);
		free(t);
		free(be);
	}
}

/* The incremental rendezvous update gives the full build's bytes: for
 * removals, additions, weight changes (up, down, to 0), a shuffled input,
 * many changes at once (its full-build path), and a chain of 30 changes each
 * applied to the previous update's output.
 */
static void expect_update(struct __test_metadata *_metadata, const struct maglev_backend_spec *ob,
			  size_t on, const uint32_t *ot, const struct maglev_backend_spec *nb,
			  size_t nn, uint32_t *got)
{
	uint32_t *want = build(&default_seed, MAGLEV_PLACEMENT_RENDEZVOUS, 0, nb, nn, 65537);
	struct maglev_err err;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, maglev_rendezvous_update(&default_seed, ob, on, ot, nb, nn, 65537, got, &err))
	TH_LOG("%s", err.msg);
	ASSERT_EQ(0, memcmp(want, got, 4 * 65537));
	free(want);
}

TEST(rendezvous_update_matches_full_build)
{
	size_t n = 60, i, round;
	struct maglev_backend_spec *be = fleet(n + 20, RANDOM, 5),
				   *nb = calloc(n + 20, sizeof(*nb));
	uint32_t *t, *u = malloc(4 * 65537), *prev = malloc(4 * 65537);
	struct maglev_backend_spec cur[80], next[80];
	size_t ncur, nnext;

	for (i = 0; i < n + 20; i++)
		be[i].weight = be[i].weight % 9 + 1;
	t = build(&default_seed, MAGLEV_PLACEMENT_RENDEZVOUS, 0, be, n, 65537);
	ASSERT_NE(NULL, t);
	/* remove one (the first, a middle one), remove three */
	expect_update(_metadata, be, n, t, be + 1, n - 1, u);
	memcpy(nb, be, sizeof(*nb) * n);
	nb[30] = nb[n - 1];
	expect_update(_metadata, be, n, t, nb, n - 1, u);
	memcpy(nb, be + 3, sizeof(*nb) * (n - 3));
	expect_update(_metadata, be, n, t, nb, n - 3, u);
	/* add one, add two */
	expect_update(_metadata, be, n, t, be, n + 1, u);
	expect_update(_metadata, be, n, t, be, n + 2, u);
	/* weight up, down, to 0 */
	memcpy(nb, be, sizeof(*nb) * n);
	nb[7].weight += 5;
	expect_update(_metadata, be, n, t, nb, n, u);
	nb[7].weight = 1;
	nb[8].weight = be[8].weight + 1;
	expect_update(_metadata, be, n, t, nb, n, u);
	nb[9].weight = 0;
	expect_update(_metadata, be, n, t, nb, n, u);
	/* the same set reversed: nothing changes, indices follow the input */
	for (i = 0; i < n; i++)
		nb[i] = be[n - 1 - i];
	expect_update(_metadata, be, n, t, nb, n, u);
	/* most backends replaced: the full-build path */
	expect_update(_metadata, be, n, t, be + 40, 40, u);
	/* no old table: a full build */
	expect_update(_metadata, NULL, 0, NULL, be, n, u);
	/* a chain: each step one change to the previous step's output */
	memcpy(cur, be, sizeof(*cur) * n);
	ncur = n;
	memcpy(prev, t, 4 * 65537);
	rng_state = 99;
	for (round = 0; round < 30; round++) {
		size_t r = rnd() % 3, k = rnd() % ncur;

		memcpy(next, cur, sizeof(*cur) * ncur);
		nnext = ncur;
		if (r == 0 && ncur > 2)
			next[k] = next[--nnext];
		else if (r == 1 && ncur < 80)
			next[nnext++] = be[60 + round % 20]; /* may already be there: skip */
		else
			next[k].weight = 1 + rnd() % 20;
		for (i = 0; r == 1 && i + 1 < nnext; i++)
			if (same_backend(&next[i], &next[nnext - 1]))
				nnext--;
		expect_update(_metadata, cur, ncur, prev, next, nnext, u);
		memcpy(prev, u, 4 * 65537);
		memcpy(cur, next, sizeof(*cur) * nnext);
		ncur = nnext;
	}
	free(t);
	free(u);
	free(prev);
	free(nb);
	free(be);
}

/* The ring's sweep: right-inclusive successor, and the wrap past the last
 * point to the first.
 */
TEST(ring_boundaries_and_wrap)
{
	const uint32_t m = 251;
	uint64_t at5 = (uint64_t)(((unsigned __int128)5 << 64) / m);
	uint64_t at9 = (uint64_t)(((unsigned __int128)9 << 64) / m);
	uint64_t at250 = (uint64_t)(((unsigned __int128)250 << 64) / m);
	struct maglev_ring_point pt[4] = {
		{at5, 1},      /* exactly at slot 5: slots 0..5 (right-inclusive) */
		{at9 - 1, 2},  /* just before slot 9: slots 6..8 */
		{at9, 3},      /* exactly at slot 9: slot 9 only */
		{at250 - 1, 4} /* just before slot 250: 10..249; 250 wraps to the first */
	};
	uint32_t out[251], s;

	maglev_ring_fill(pt, 4, m, out);
	for (s = 0; s <= 5; s++)
		ASSERT_EQ(1, out[s]);
	for (s = 6; s <= 8; s++)
		ASSERT_EQ(2, out[s]);
	ASSERT_EQ(3, out[9]);
	for (s = 10; s < 250; s++)
		ASSERT_EQ(4, out[s]);
	ASSERT_EQ(1, out[250]); /* wrap */
	/* one point: everything, wherever it is */
	pt[0].h = UINT64_MAX;
	maglev_ring_fill(pt, 1, m, out);
	for (s = 0; s < m; s++)
		ASSERT_EQ(1, out[s]);
	pt[0].h = 0;
	maglev_ring_fill(pt, 1, m, out);
	for (s = 0; s < m; s++)
		ASSERT_EQ(1, out[s]);
}

static void expect_error(struct __test_metadata *_metadata, enum maglev_placement kind,
			 uint32_t vnodes, const struct maglev_backend_spec *be, size_t n,
			 uint32_t m, int want, const char *word)
{
	struct maglev_placement_cfg cfg = {.kind = kind, .vnodes = vnodes};
	struct maglev_err err = {.msg = ""};
	uint32_t *out = malloc(4 * 1048573), i;

	memset(out, 0xa5, 4 * 1048573);
	ASSERT_EQ(want, maglev_placement_build(&default_seed, &cfg, be, n, m, out, &err));
	ASSERT_NE(NULL, strstr(err.msg, word))
	TH_LOG("message: %s", err.msg);
	for (i = 0; i < 1048573; i++)
		ASSERT_EQ(0xa5a5a5a5u, out[i]);
	free(out);
}

TEST(errors)
{
	struct maglev_backend_spec be[3] = {v4(0xc0000201, 80, 1), v6(1, 80, 1),
					    v4(0xc0000201, 80, 5)};
	size_t k;

	expect_error(_metadata, MAGLEV_PLACEMENT_RING, 0, be, 2, 251, -EINVAL, "vnodes 0");
	expect_error(_metadata, MAGLEV_PLACEMENT_RING, MAGLEV_VNODES_MAX + 1, be, 2, 251, -EINVAL,
		     "vnodes 10001");
	be[1].weight = MAGLEV_WEIGHT_MAX;
	expect_error(_metadata, MAGLEV_PLACEMENT_RING, 100, be, 2, 251, -EINVAL, "6553600 points");
	be[1].weight = 1;
	expect_error(_metadata, (enum maglev_placement)7, 1, be, 2, 251, -EINVAL,
		     "unknown placement 7");
	for (k = 0; k < 2; k++) {
		expect_error(_metadata, kinds[k], 1, be, 3, 251, -EEXIST, "192.0.2.1:80");
		expect_error(_metadata, kinds[k], 1, be, 2, 65536, -EINVAL, "not a prime");
		expect_error(_metadata, kinds[k], 1, be, 0, 251, -EINVAL, "positive weight");
	}
}

TEST(names)
{
	enum maglev_placement k;

	ASSERT_EQ(0, maglev_placement_parse("ring", &k));
	ASSERT_EQ(MAGLEV_PLACEMENT_RING, k);
	ASSERT_EQ(0, maglev_placement_parse("rendezvous", &k));
	ASSERT_EQ(MAGLEV_PLACEMENT_RENDEZVOUS, k);
	ASSERT_EQ(0, maglev_placement_parse("maglev", &k));
	ASSERT_EQ(MAGLEV_PLACEMENT_MAGLEV, k);
	ASSERT_EQ(-EINVAL, maglev_placement_parse("jump", &k));
	ASSERT_EQ(-EINVAL, maglev_placement_parse("Ring", &k));
	ASSERT_STREQ("rendezvous", maglev_placement_name(MAGLEV_PLACEMENT_RENDEZVOUS));
	ASSERT_EQ(NULL, maglev_placement_name((enum maglev_placement)3));
}

TEST_HARNESS_MAIN
