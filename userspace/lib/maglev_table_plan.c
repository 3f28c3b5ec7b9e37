// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Validation, canonical order, permutation hashes and quotas of a Maglev
 * table build. See docs/maglev-table.md for the byte layout hashed here: it
 * is part of the contract between balancers, so changing it changes every
 * table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "maglev_table_plan.h"

/* Canonical id of a backend: bytes 8..31 of the hash message read as three
 * big-endian words, so comparing the words compares the bytes.
 */
struct canon {
	uint64_t k[3];
	uint32_t idx;
};

static void set_err(struct maglev_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct maglev_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

int maglev_m_valid(uint32_t m)
{
	uint32_t d;

	if (m < MAGLEV_M_MIN || m > MAGLEV_M_MAX || !(m & 1))
		return 0;
	for (d = 3; d * d <= m; d += 2)
		if (m % d == 0)
			return 0;
	return 1;
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Fill the canonical id; -EINVAL for an unknown family. Only the bytes the
 * family uses are read, so garbage in addr[1..3] of an IPv4 backend cannot
 * change its identity.
 */
static int canon_of(const struct maglev_backend_spec *b, struct canon *c)
{
	uint8_t id[24] = {0};

	if (b->family == AF_INET) {
		id[0] = 4;
		memcpy(&id[8], b->addr, 4);
	} else if (b->family == AF_INET6) {
		id[0] = 6;
		memcpy(&id[8], b->addr, 16);
	} else {
		return -EINVAL;
	}
	id[2] = b->port >> 8;
	id[3] = b->port & 0xff;
	c->k[0] = be64(&id[0]);
	c->k[1] = be64(&id[8]);
	c->k[2] = be64(&id[16]);
	return 0;
}

/* SipHash-2-4 over the 32-byte messages tag1 || id and tag2 || id.
 * maglev_sip_word() takes each 8-byte group as a little-endian word, as
 * SipHash reads its input. The two hashes are computed side by side so the
 * CPU overlaps their rounds.
 */
static void canon_hash2(const struct maglev_seed *seed, const struct canon *c, uint64_t *h1,
			uint64_t *h2)
{
	struct maglev_sip a, b;
	int i;

	maglev_sip_init(&a, seed);
	maglev_sip_init(&b, seed);
	maglev_sip_word(&a, MAGLEV_HASH_TAG_H1, 2);
	maglev_sip_word(&b, MAGLEV_HASH_TAG_H2, 2);
	for (i = 0; i < 3; i++) {
		maglev_sip_word(&a, __builtin_bswap64(c->k[i]), 2);
		maglev_sip_word(&b, __builtin_bswap64(c->k[i]), 2);
	}
	*h1 = maglev_sip_final(&a, 32, 2, 4);
	*h2 = maglev_sip_final(&b, 32, 2, 4);
}

uint64_t maglev_id_hash(const struct maglev_seed *seed, uint64_t tag,
			const struct maglev_backend_spec *b, const uint64_t *extra, int nextra)
{
	struct maglev_sip s;
	struct canon c;
	int i;

	canon_of(b, &c);
	maglev_sip_init(&s, seed);
	maglev_sip_word(&s, tag, 2);
	for (i = 0; i < 3; i++)
		maglev_sip_word(&s, __builtin_bswap64(c.k[i]), 2);
	for (i = 0; i < nextra; i++)
		maglev_sip_word(&s, extra[i], 2);
	return maglev_sip_final(&s, 32 + 8 * (uint64_t)nextra, 2, 4);
}

int maglev_backend_hash(const struct maglev_seed *seed, const struct maglev_backend_spec *b,
			uint64_t *h1, uint64_t *h2)
{
	struct canon c;

	if (canon_of(b, &c))
		return -EINVAL;
	canon_hash2(seed, &c, h1, h2);
	return 0;
}

static inline int canon_cmp(const struct canon *x, const struct canon *y)
{
	int i;

	for (i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	return 0;
}

/* Merge sort of canonical ids (no function pointer per comparison, unlike
 * qsort: the sort is a visible part of a table build). tmp holds n entries.
 */
static void canon_sort(struct canon *a, struct canon *tmp, size_t n)
{
	size_t i, j, k, mid;

	if (n <= 16) {
		for (i = 1; i < n; i++) {
			struct canon x = a[i];

			for (j = i; j > 0 && canon_cmp(&a[j - 1], &x) > 0; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	mid = n / 2;
	canon_sort(a, tmp, mid);
	canon_sort(a + mid, tmp, n - mid);
	if (canon_cmp(&a[mid - 1], &a[mid]) <= 0)
		return;
	memcpy(tmp, a, sizeof(*a) * mid);
	for (i = 0, j = mid, k = 0; i < mid && j < n;)
		a[k++] = canon_cmp(&a[j], &tmp[i]) < 0 ? a[j++] : tmp[i++];
	while (i < mid)
		a[k++] = tmp[i++];
}

static const char *fmt_backend(const struct maglev_backend_spec *b, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(b->family, b->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (!b->port)
		snprintf(buf, len, "%s", a);
	else if (b->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, b->port);
	else
		snprintf(buf, len, "%s:%u", a, b->port);
	return buf;
}

struct rem {
	uint64_t rem;
	uint32_t pos;
};

/* Largest remainder first; equal remainders in canonical order. */
static int rem_cmp(const void *a, const void *b)
{
	const struct rem *x = a, *y = b;

	if (x->rem != y->rem)
		return x->rem > y->rem ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Quotas by the largest-remainder method: floor(m*w/W) each, and the slots
 * left over (fewer than the number of backends) one each to the largest
 * remainders. Every backend ends within one slot of m*w/W.
 */
static int set_quotas(struct maglev_plan *p, const struct maglev_backend_spec *be)
{
	uint64_t total = 0, given = 0;
	struct rem *r;
	uint32_t i, left, same;

	for (i = 0; i < p->n; i++)
		total += be[p->e[i].idx].weight;
	for (i = 0; i < p->n; i++) {
		p->e[i].quota = (uint64_t)p->m * be[p->e[i].idx].weight / total;
		given += p->e[i].quota;
	}
	left = p->m - given;
	if (!left)
		return 0;
	r = malloc(sizeof(*r) * p->n);
	if (!r)
		return -ENOMEM;
	for (i = 0, same = 1; i < p->n; i++) {
		r[i].rem = (uint64_t)p->m * be[p->e[i].idx].weight % total;
		r[i].pos = i;
		same &= r[i].rem == r[0].rem;
	}
	/* All remainders equal (equal weights): already in canonical order. */
	if (!same)
		qsort(r, p->n, sizeof(*r), rem_cmp);
	for (i = 0; i < left; i++)
		p->e[r[i].pos].quota++;
	free(r);
	return 0;
}

int maglev_plan_make(struct maglev_plan *p, const struct maglev_seed *seed,
		     const struct maglev_backend_spec *be, size_t n, uint32_t m,
		     const uint32_t *out, struct maglev_err *err)
{
	char b1[64], b2[64];
	uint64_t h1, h2;
	struct canon *c;
	uint32_t npos = 0;
	size_t i;
	int ret;

	memset(p, 0, sizeof(*p));
	if (!out) {
		set_err(err, "output table must not be NULL");
		return -EINVAL;
	}
	if (!seed || (!be && n)) {
		set_err(err, "seed and backend array must not be NULL");
		return -EINVAL;
	}
	if (!maglev_m_valid(m)) {
		set_err(err, "table size %u is not a prime in [%u, %u]", m, MAGLEV_M_MIN,
			MAGLEV_M_MAX);
		return -EINVAL;
	}
	if (n > m) {
		set_err(err, "%zu backends do not fit in a table of %u slots", n, m);
		return -E2BIG;
	}
	for (i = 0; i < n; i++) {
		if (be[i].family != AF_INET && be[i].family != AF_INET6) {
			set_err(err,
				"backend %zu: address family %u is neither AF_INET nor AF_INET6", i,
				be[i].family);
			return -EINVAL;
		}
		if (be[i].weight > MAGLEV_WEIGHT_MAX) {
			set_err(err, "backend %zu (%s): weight %u exceeds %u", i,
				fmt_backend(&be[i], b1, sizeof(b1)), be[i].weight,
				MAGLEV_WEIGHT_MAX);
			return -EINVAL;
		}
		npos += be[i].weight > 0;
	}
	c = malloc(sizeof(*c) * (n ? 2 * n : 1));
	if (!c) {
		set_err(err, "out of memory for %zu backends", n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		canon_of(&be[i], &c[i]);
		c[i].idx = i;
	}
	canon_sort(c, c + n, n);
	for (i = 1; i < n; i++) {
		if (!canon_cmp(&c[i - 1], &c[i])) {
			uint32_t a = c[i - 1].idx < c[i].idx ? c[i - 1].idx : c[i].idx;
			uint32_t b = c[i - 1].idx < c[i].idx ? c[i].idx : c[i - 1].idx;

			set_err(err, "backends %u and %u are the same backend %s", a, b,
				fmt_backend(&be[a], b2, sizeof(b2)));
			free(c);
			return -EEXIST;
		}
	}
	if (!npos) {
		set_err(err, "no backend has a positive weight (%zu backends given)", n);
		free(c);
		return -EINVAL;
	}
	p->e = malloc(sizeof(*p->e) * npos);
	if (!p->e) {
		set_err(err, "out of memory for %u backends", npos);
		free(c);
		return -ENOMEM;
	}
	p->m = m;
	for (i = 0; i < n; i++) {
		struct maglev_plan_entry *e;

		if (!be[c[i].idx].weight)
			continue;
		e = &p->e[p->n++];
		canon_hash2(seed, &c[i], &h1, &h2);
		e->idx = c[i].idx;
		e->offset = h1 % m;
		e->skip = h2 % (m - 1) + 1;
	}
	free(c);
	ret = set_quotas(p, be);
	if (ret) {
		set_err(err, "out of memory for %u backends", npos);
		maglev_plan_free(p);
	}
	return ret;
}

uint32_t maglev_plan_find(const struct maglev_plan *p, const struct maglev_backend_spec *be,
			  const struct maglev_backend_spec *b)
{
	uint32_t lo = 0, hi = p->n, mid;
	struct canon want, c;
	int d;

	if (canon_of(b, &want))
		return UINT32_MAX;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		canon_of(&be[p->e[mid].idx], &c);
		d = canon_cmp(&c, &want);
		if (!d)
			return mid;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

void maglev_plan_free(struct maglev_plan *p)
{
	free(p->e);
	p->e = NULL;
	p->n = 0;
}
