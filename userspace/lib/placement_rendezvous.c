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

struct best {
	uint64_t l;   /* -log2(u) of the winner so far */
	uint32_t w;   /* its weight */
	uint32_t pos; /* its canonical position */
};

int maglev_rendezvous_build(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
			    size_t n, uint32_t m, uint32_t *out, struct maglev_err *err)
{
	struct maglev_plan p;
	struct best *b;
	uint32_t j, s;
	int ret;

	ret = maglev_plan_make(&p, seed, be, n, m, out, err);
	if (ret)
		return ret;
	pthread_once(&tables_once, tables_init);
	b = malloc(sizeof(*b) * m);
	if (!b) {
		if (err)
			strcpy(err->msg, "out of memory for the slot scores");
		maglev_plan_free(&p);
		return -ENOMEM;
	}
	/* Backends in canonical order, each against every slot's best so far;
	 * only a strictly higher score takes a slot, so ties stay with the
	 * earlier canonical id.
	 */
	for (j = 0; j < p.n; j++) {
		const struct maglev_backend_spec *bs = &be[p.e[j].idx];
		uint64_t key = maglev_id_hash(seed, MAGLEV_HASH_TAG_RDV, bs, NULL, 0);
		uint32_t w = bs->weight;

		for (s = 0; s < m; s++) {
			uint64_t x = (slot_hash(key, s) >> 10) | 1, l;

			if (j && (u128)b[s].l * w <= (u128)neg_log2_lower(x) * b[s].w)
				continue;
			l = neg_log2(x);
			if (!j || (u128)b[s].l * w > (u128)l * b[s].w) {
				b[s].l = l;
				b[s].w = w;
				b[s].pos = j;
			}
		}
	}
	for (s = 0; s < m; s++)
		out[s] = p.e[b[s].pos].idx;
	free(b);
	maglev_plan_free(&p);
	return 0;
}
