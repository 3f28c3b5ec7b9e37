// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rendezvous (highest random weight) hashing compiled into the M-slot table.
 *
 * Slot s goes to the backend with the highest score w / -ln(u), u the keyed
 * hash of (s, b) in (0, 1): the weighted HRW of Schindelhauer and Schomaker,
 * exact for continuous weights. Removing a backend moves only its own slots:
 * every other backend's score is unchanged, so each slot keeps its winner
 * unless the winner left.
 *
 * Hashes. Each backend gets a key k_b = SipHash-2-4(seed, "maglevrz" ||
 * canonical id); u for slot s is splitmix64's finaliser of k_b + (s + 1) *
 * 0x9e3779b97f4a7c15, so a full build costs n SipHashes and m * n cheap
 * mixes instead of m * n SipHashes. x = (mix >> 10) | 1 is odd in [1, 2^54),
 * u = x / 2^54, never 0 or 1.
 *
 * Determinism. libm's log() differs between implementations in the last
 * bit, and a score comparison that flips on the last bit changes a slot. So
 * the score is never a float: L = -log2(u) is computed in integers
 * (maglev_neg_log2_q56), and w_a / L_a > w_b / L_b is decided as
 * L_b * w_a > L_a * w_b in exact 128-bit products. Equal products go to the
 * earlier canonical id. The base of the logarithm does not change the order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maglev_table_plan.h"
#include "placement.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define FRAC	  56
#define LOG2E_Q62 0x5c551d94ae0bf85eULL /* 1 / ln 2, rounded, 62 fraction bits */
#define GOLDEN	  0x9e3779b97f4a7c15ULL

/* lg[i] = log2(1 + i/256) and rc[i] = 256 / (256 + i), both computed here in
 * integers (bit-by-bit squaring, exact division), so no constant table can
 * disagree with another machine's.
 */
static uint64_t lg[257], rc[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void)
{
	unsigned i, bit;

	for (i = 0; i < 256; i++) {
		/* y = 1 + i/256 with 62 fraction bits; square it bit by bit:
		 * each squaring doubles log2(y), a carry past 2 is the next bit.
		 */
		uint64_t y = (uint64_t)(256 + i) << 54, v = 0;

		for (bit = 1; bit <= FRAC; bit++) {
			y = (uint64_t)(((u128)y * y) >> 62);
			if (y >= 2ULL << 62) {
				y >>= 1;
				v |= 1ULL << (FRAC - bit);
			}
		}
		lg[i] = v;
		rc[i] = (uint64_t)(((u128)1 << 71) / (256 + i)); /* 2^63 * 256 / (256+i) */
	}
	lg[256] = 1ULL << FRAC;
}

static inline uint64_t neg_log2(uint64_t x)
{
	int e = 63 - __builtin_clzll(x);
	uint64_t y = x << (63 - e), z, l;
	unsigned i = (y >> 55) & 0xff;
	int64_t t, t2, t3, t4, t5, ln, l2;

	/* y = 2^63 * c * (1 + r) with c = 1 + i/256 and 0 <= r < 1/256:
	 * log2(y / 2^63) = lg[i] + log2(1 + r), the latter by five terms of
	 * ln(1 + r) (error below r^6/6 < 2^-50) times 1/ln 2.
	 */
	z = (uint64_t)(((u128)y * rc[i]) >> 63);
	t = (int64_t)(z - (1ULL << 63)); /* r, 63 fraction bits; may be -tiny */
	t2 = (int64_t)(((s128)t * t) >> 63);
	t3 = (int64_t)(((s128)t2 * t) >> 63);
	t4 = (int64_t)(((s128)t3 * t) >> 63);
	t5 = (int64_t)(((s128)t4 * t) >> 63);
	ln = t - t2 / 2 + t3 / 3 - t4 / 4 + t5 / 5;
	l2 = (int64_t)(((s128)ln * (int64_t)LOG2E_Q62) >> (63 + 62 - FRAC));
	l = ((uint64_t)e << FRAC) + lg[i] + (uint64_t)l2;
	/* -log2(x / 2^54) = 54 - log2(x); kept positive where the
	 * approximation reaches 54 (x within 2^-40 of 2^54).
	 */
	return l < (54ULL << FRAC) ? (54ULL << FRAC) - l : 1;
}

uint64_t maglev_neg_log2_q56(uint64_t x)
{
	pthread_once(&tables_once, tables_init);
	return neg_log2(x);
}

static inline uint64_t slot_hash(uint64_t key, uint32_t s)
{
	uint64_t z = key + (uint64_t)(s + 1) * GOLDEN;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * A lower bound of neg_log2(x) from x's top 9 bits: the value at the top of
 * x's bucket, minus far more than the approximation's error (2^-50). A
 * candidate whose bound already loses cannot win, so most of the m * n
 * logarithms are never computed; the table is the same either way.
 */
#define BOUND_MARGIN (1ULL << 16) /* 2^-40 */
static inline uint64_t neg_log2_lower(uint64_t x)
{
	int e = 63 - __builtin_clzll(x);
	unsigned i = ((x << (63 - e)) >> 55) & 0xff;
	uint64_t top = ((uint64_t)e << FRAC) + lg[i + 1] + BOUND_MARGIN;

	return top < (54ULL << FRAC) ? (54ULL << FRAC) - top : 0;
}

struct cand {
	uint64_t key; /* k_b */
	uint32_t w;
};

struct best {
	uint64_t l;   /* -log2(u) of the winner so far */
	uint32_t w;   /* its weight */
	uint32_t pos; /* its canonical position */
};

/* Whether candidate (l, w) at canonical position pos beats b: a strictly
 * higher score, or an equal one from an earlier canonical id.
 */
static inline int beats(uint64_t l, uint32_t w, uint32_t pos, const struct best *b)
{
	u128 x = (u128)b->l * w, y = (u128)l * b->w;

	return x > y || (x == y && pos < b->pos);
}

static inline void score(const struct cand *c, uint32_t s, uint32_t pos, struct best *b)
{
	b->l = neg_log2((slot_hash(c->key, s) >> 10) | 1);
	b->w = c->w;
	b->pos = pos;
}

/* Slot s's winner among c[0..n-1] (canonical order), skipping the
 * logarithm of every candidate whose lower bound already loses.
 */
static uint32_t slot_winner(const struct cand *c, uint32_t n, uint32_t s)
{
	struct best b;
	uint32_t j;

	score(&c[0], s, 0, &b);
	for (j = 1; j < n; j++) {
		uint64_t x = (slot_hash(c[j].key, s) >> 10) | 1, l;

		if ((u128)b.l * c[j].w <= (u128)neg_log2_lower(x) * b.w)
			continue;
		l = neg_log2(x);
		if ((u128)b.l * c[j].w > (u128)l * b.w) {
			b.l = l;
			b.w = c[j].w;
			b.pos = j;
		}
	}
	return b.pos;
}

/* The candidates of plan p: keys and weights in canonical order. */
static struct cand *candidates(const struct maglev_seed *seed, const struct maglev_plan *p,
			       const struct maglev_backend_spec *be, struct maglev_err *err)
{
	struct cand *c = malloc(sizeof(*c) * p->n);
	uint32_t j;

	if (!c) {
		if (err)
			strcpy(err->msg, "out of memory for the rendezvous keys");
		return NULL;
	}
	for (j = 0; j < p->n; j++) {
		c[j].key = maglev_id_hash(seed, MAGLEV_HASH_TAG_RDV, &be[p->e[j].idx], NULL, 0);
		c[j].w = be[p->e[j].idx].weight;
	}
	return c;
}

int maglev_rendezvous_build(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
			    size_t n, uint32_t m, uint32_t *out, struct maglev_err *err)
{
	struct maglev_plan p;
	struct cand *c;
	uint32_t s;
	int ret;

	ret = maglev_plan_make(&p, seed, be, n, m, out, err);
	if (ret)
		return ret;
	pthread_once(&tables_once, tables_init);
	c = candidates(seed, &p, be, err);
	if (!c) {
		maglev_plan_free(&p);
		return -ENOMEM;
	}
	for (s = 0; s < m; s++)
		out[s] = p.e[slot_winner(c, p.n, s)].idx;
	free(c);
	maglev_plan_free(&p);
	return 0;
}

int maglev_rendezvous_update(const struct maglev_seed *seed,
			     const struct maglev_backend_spec *old_be, size_t old_n,
			     const uint32_t *old_out, const struct maglev_backend_spec *be,
			     size_t n, uint32_t m, uint32_t *out, struct maglev_err *err)
{
	uint32_t j, s, k, nch = 0, *pos_of_old = NULL, *ch = NULL;
	uint8_t *weaker = NULL;
	struct maglev_plan p;
	struct cand *c = NULL;
	size_t o;
	int ret;

	if (!old_be || !old_out || !old_n)
		return maglev_rendezvous_build(seed, be, n, m, out, err);
	ret = maglev_plan_make(&p, seed, be, n, m, out, err);
	if (ret)
		return ret;
	pthread_once(&tables_once, tables_init);
	c = candidates(seed, &p, be, err);
	pos_of_old = malloc(sizeof(*pos_of_old) * old_n);
	ch = malloc(sizeof(*ch) * p.n);
	weaker = calloc(p.n, 1);
	if (!c || !pos_of_old || !ch || !weaker) {
		if (err)
			strcpy(err->msg, "out of memory for the rendezvous update");
		ret = -ENOMEM;
		goto out;
	}
	/* Where each old backend stands now: its canonical position, or
	 * UINT32_MAX if it left (or had weight 0, so owned nothing).
	 */
	for (j = 0; j < p.n; j++)
		ch[j] = 1;
	for (o = 0; o < old_n; o++) {
		pos_of_old[o] =
			old_be[o].weight ? maglev_plan_find(&p, be, &old_be[o]) : UINT32_MAX;
		if (pos_of_old[o] == UINT32_MAX)
			continue;
		j = pos_of_old[o];
		ch[j] = c[j].w > old_be[o].weight; /* new backends stay challengers */
		weaker[j] = c[j].w < old_be[o].weight;
	}
	for (j = 0, k = 0; j < p.n; j++)
		if (ch[j])
			ch[k++] = j;
	nch = k;
	/*
	 * No other backend's score for a slot changes, so a slot keeps its
	 * owner unless the owner left or lost weight (then the slot is
	 * decided again among all), or a challenger (new, or heavier) beats
	 * it. With many challengers a full build is cheaper.
	 */
	if (nch * 2 > p.n) {
		for (s = 0; s < m; s++)
			out[s] = p.e[slot_winner(c, p.n, s)].idx;
		goto out;
	}
	for (s = 0; s < m; s++) {
		uint32_t own = old_out[s] < old_n ? pos_of_old[old_out[s]] : UINT32_MAX;
		struct best b, x;

		if (own == UINT32_MAX || weaker[own]) {
			out[s] = p.e[slot_winner(c, p.n, s)].idx;
			continue;
		}
		score(&c[own], s, own, &b);
		for (k = 0; k < nch; k++) {
			score(&c[ch[k]], s, ch[k], &x);
			if (beats(x.l, x.w, x.pos, &b))
				b = x;
		}
		out[s] = p.e[b.pos].idx;
	}
out:
	free(c);
	free(pos_of_old);
	free(ch);
	free(weaker);
	maglev_plan_free(&p);
	return ret;
}
