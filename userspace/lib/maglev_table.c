// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Maglev table population (Eisenbud et al., NSDI 2016, section 3.4), fast.
 *
 * Same result as the paper's pseudocode (maglev_table_naive.c), byte for
 * byte, but no permutation array: each backend keeps only its next
 * permutation entry, advanced by next += skip with a conditional subtract
 * instead of a modulo. Occupancy is a bitmap (8 KB for m = 65537, fits L1).
 * State is O(m + n).
 *
 * Where the time goes: a turn walks the backend's permutation to its first
 * empty slot, about m/F probes when F slots are free, so the last few hundred
 * turns would cost more than all the others together. Once few slots are
 * free, a turn instead looks at every free slot f and computes how many steps
 * ahead of the backend's position it lies, (f - next) * skip^-1 mod m, and
 * takes the nearest: the same slot the walk would reach, in F work. Before
 * that, the walks are arranged to avoid mispredicted branches and chains of
 * dependent additions (walk(), walk4()). See docs/maglev-table.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "maglev_table_plan.h"

/* Free slots left when turns switch from walking to scanning: about where
 * a scan of F slots costs what a walk of m/F probes does.
 */
#define SCAN_FREE 192

static inline uint32_t taken(const uint32_t *bits, uint32_t c)
{
	return (bits[c >> 5] >> (c & 31)) & 1;
}

/* a + b mod m for a, b < m: a compare and subtract, no division. */
static inline uint32_t add_mod(uint32_t a, uint32_t b, uint32_t m)
{
	a += b;
	return a >= m ? a - m : a;
}

/* The first empty slot of the permutation from c on. The first two entries
 * are tested without a branch between them: while the table is less than
 * about half full that avoids most mispredicted loop exits.
 */
static inline uint32_t walk(const uint32_t *bits, uint32_t c, uint32_t skip, uint32_t m)
{
	uint32_t c1 = add_mod(c, skip, m), t0 = taken(bits, c), t1 = taken(bits, c1);

	if (!(t0 & t1))
		return c ^ ((c ^ c1) & -t0);
	c = add_mod(c1, skip, m);
	while (taken(bits, c))
		c = add_mod(c, skip, m);
	return c;
}

/* The walk once the table is half full: four interleaved strides of
 * 4 * skip cover entries c, c + skip, c + 2 skip, c + 3 skip, ... so the four
 * additions and loads of a step are independent and one branch serves four
 * entries. The first empty one of the four, in permutation order, is picked
 * without a branch.
 */
static uint32_t walk4(const uint32_t *bits, uint32_t c, uint32_t skip, uint32_t m)
{
	uint32_t s2 = add_mod(skip, skip, m), s4 = add_mod(s2, s2, m);
	uint32_t a = c, b = add_mod(c, skip, m), d = add_mod(c, s2, m), f = add_mod(b, s2, m);
	uint32_t ta, tb, td, tf, x;

	for (;;) {
		ta = taken(bits, a);
		tb = taken(bits, b);
		td = taken(bits, d);
		tf = taken(bits, f);
		if (!(ta & tb & td & tf))
			break;
		a = add_mod(a, s4, m);
		b = add_mod(b, s4, m);
		d = add_mod(d, s4, m);
		f = add_mod(f, s4, m);
	}
	x = d ^ ((d ^ f) & -td);
	x = b ^ ((b ^ x) & -tb);
	return a ^ ((a ^ x) & -ta);
}

/* skip^-1 mod m (m prime, 0 < skip < m), extended Euclid. */
static uint32_t inv_mod(uint32_t skip, uint32_t m)
{
	int64_t t = 0, nt = 1, tmp;
	uint32_t r = m, nr = skip, q, rr;

	while (nr) {
		q = r / nr;
		rr = r - q * nr;
		r = nr;
		nr = rr;
		tmp = t - (int64_t)q * nt;
		t = nt;
		nt = tmp;
	}
	return t < 0 ? (uint32_t)(t + m) : (uint32_t)t;
}

/*
 * Index k of the free slot fd[k] nearest ahead of c along a permutation
 * with step skip: the one minimising (fd[k] - c) * inv mod m. Doubles hold
 * every value exactly (products < 2^40); q = round(p / m) is exact because
 * p / m is never within 2^-21 of a half, far above the rounding error, so
 * p - q*m is the residue in [-m/2, m/2]. Keys d * 4096 + k (< 2^32, exact)
 * make the minimum carry its index; SCAN_FREE must stay <= 4096.
 */
static uint32_t nearest_free(const double *fd, uint32_t nfree, uint32_t c, uint32_t inv, uint32_t m)
{
	const double magic = 6755399441055744.0; /* 1.5 * 2^52: add, subtract = round */
	const double md = m, rm = 1.0 / m, cd = c, invd = inv;
	double best = 1e300;
	uint32_t k = 0;

#ifdef __SSE2__
	{
		const __m128d vc = _mm_set1_pd(cd), vinv = _mm_set1_pd(invd), vm = _mm_set1_pd(md);
		const __m128d vrm = _mm_set1_pd(rm), vmagic = _mm_set1_pd(magic);
		const __m128d zero = _mm_setzero_pd(), scale = _mm_set1_pd(4096.0);
		const __m128d two = _mm_set1_pd(2.0);
		__m128d idx = _mm_set_pd(1.0, 0.0), vbest = _mm_set1_pd(best);

		for (; k + 2 <= nfree; k += 2) {
			__m128d p = _mm_mul_pd(_mm_sub_pd(_mm_loadu_pd(fd + k), vc), vinv);
			__m128d q = _mm_sub_pd(_mm_add_pd(_mm_mul_pd(p, vrm), vmagic), vmagic);
			__m128d r = _mm_sub_pd(p, _mm_mul_pd(q, vm));

			r = _mm_add_pd(r, _mm_and_pd(_mm_cmplt_pd(r, zero), vm));
			vbest = _mm_min_pd(vbest, _mm_add_pd(_mm_mul_pd(r, scale), idx));
			idx = _mm_add_pd(idx, two);
		}
		vbest = _mm_min_pd(vbest, _mm_unpackhi_pd(vbest, vbest));
		best = _mm_cvtsd_f64(vbest);
	}
#endif
	for (; k < nfree; k++) {
		double p = (fd[k] - cd) * invd;
		double q = (p * rm + magic) - magic;
		double r = p - q * md;

		r = r < 0 ? r + md : r;
		r = r * 4096.0 + k;
		best = r < best ? r : best;
	}
	return (uint32_t)((uint64_t)best & 4095);
}

struct scratch {
	uint32_t *bits; /* occupancy, m bits */
	uint32_t *fl;	/* free slots once at most SCAN_FREE are left */
	double *fd;	/* the same as doubles for nearest_free() */
};

/* Collect the free slots (zero bits below m) for the scan phase. */
static void list_free(const uint32_t *bits, uint32_t m, uint32_t *fl, double *fd)
{
	uint32_t w, k = 0;

	for (w = 0; w < (m + 31) / 32; w++) {
		uint32_t z = ~bits[w];

		while (z) {
			uint32_t c = w * 32 + __builtin_ctz(z);

			z &= z - 1;
			if (c >= m)
				break;
			fl[k] = c;
			fd[k++] = c;
		}
	}
}

/* Backends take turns in canonical order; one that has its quota stops
 * taking turns. The quotas sum to m, so the table is full when the last
 * backend leaves. Turns go through three phases as the table fills: the
 * walk with the head test while at least half the slots are free, then the
 * four-stride walk, then the scan of the free slots.
 */
static void populate(struct maglev_plan *p, const struct scratch *sc, uint32_t *out)
{
	struct maglev_plan_entry *e = p->e;
	const uint32_t m = p->m, half = m / 2;
	uint32_t *bits = sc->bits, *fl = sc->fl, i, nact = 0, nfree = m;
	double *fd = sc->fd;
	int scanning = 0;

	/* Entries become per-backend turn state: offset is the next
	 * permutation entry, quota the slots still to claim.
	 */
	for (i = 0; i < p->n; i++)
		if (e[i].quota)
			e[nact++] = e[i];
	while (nact) {
		uint32_t keep = 0;

		for (i = 0; i < nact; i++) {
			struct maglev_plan_entry s = e[i];
			uint32_t c, k;

			if (nfree > SCAN_FREE) {
				if (nfree > half)
					c = walk(bits, s.offset, s.skip, m);
				else
					c = walk4(bits, s.offset, s.skip, m);
				bits[c >> 5] |= 1U << (c & 31);
				nfree--;
			} else {
				if (!scanning) {
					scanning = 1;
					list_free(bits, m, fl, fd);
				}
				k = nearest_free(fd, nfree, s.offset, inv_mod(s.skip, m), m);
				c = fl[k];
				nfree--;
				fl[k] = fl[nfree];
				fd[k] = fd[nfree];
			}
			out[c] = s.idx;
			s.offset = add_mod(c, s.skip, m);
			if (--s.quota)
				e[keep++] = s;
		}
		nact = keep;
	}
}

int maglev_table_build(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
		       size_t n, uint32_t m, uint32_t *out, struct maglev_err *err)
{
	struct maglev_plan p;
	struct scratch sc;
	int ret;

	ret = maglev_plan_make(&p, seed, be, n, m, out, err);
	if (ret)
		return ret;
	/* Everything is allocated before out is written: no partial table. */
	sc.bits = calloc((m + 31) / 32, sizeof(*sc.bits));
	sc.fl = malloc(sizeof(*sc.fl) * SCAN_FREE);
	sc.fd = malloc(sizeof(*sc.fd) * SCAN_FREE);
	if (sc.bits && sc.fl && sc.fd) {
		populate(&p, &sc, out);
	} else {
		if (err)
			strcpy(err->msg, "out of memory for the occupancy bitmap");
		ret = -ENOMEM;
	}
	free(sc.bits);
	free(sc.fl);
	free(sc.fd);
	maglev_plan_free(&p);
	return ret;
}
