// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Placements side by side in one run, M = 65537: build time, balance (the
 * busiest backend's slots over its fair share, the NSDI'16 paper's
 * over-provisioning), and disruption when k of N backends leave (the
 * fraction of the survivors' slots that change owner, and all slots moved
 * against the minimum, the removed backends' own slots). Jump hash and plain
 * modulo are references only: neither can remove an arbitrary backend, so
 * they lose the last k (jump's best case) and renumber (modulo).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_clock.h"
#include "placement.h"
#include "placement_bench.h"

#define M MAGLEV_M_DEFAULT

static const struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};

enum kind { MAGLEV, RING, RDV, JUMP, MODULO, NKINDS };
static const char *const kname[] = {"maglev", "ring", "rendezvous", "jump", "modulo"};

/* Lamping and Veach's jump consistent hash. */
static uint32_t jump(uint64_t key, uint32_t n)
{
	int64_t b = -1, j = 0;

	while (j < n) {
		b = j;
		key = key * 2862933555777941757ULL + 1;
		j = (int64_t)((b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
	}
	return (uint32_t)b;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Build by kind; the references ignore weights and identities: slot s goes
 * to input position jump(hash(s), n) or s mod n.
 */
static void build(enum kind k, uint32_t vnodes, const struct maglev_backend_spec *be, size_t n,
		  uint32_t *out)
{
	struct maglev_placement_cfg cfg = {.kind = MAGLEV_PLACEMENT_MAGLEV, .vnodes = vnodes};
	struct maglev_err err;
	uint32_t s;

	if (k == JUMP || k == MODULO) {
		for (s = 0; s < M; s++)
			out[s] = k == JUMP ? jump(mix(s + 1), n) : s % n;
		return;
	}
	cfg.kind = k == RING  ? MAGLEV_PLACEMENT_RING
		   : k == RDV ? MAGLEV_PLACEMENT_RENDEZVOUS
			      : MAGLEV_PLACEMENT_MAGLEV;
	if (maglev_placement_build(&seed, &cfg, be, n, M, out, &err)) {
		fprintf(stderr, "table_bench: %s build failed: %s\n", kname[k], err.msg);
		exit(1);
	}
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double build_ms(enum kind k, uint32_t vnodes, const struct maglev_backend_spec *be, size_t n,
		       uint32_t *out, int rounds)
{
	double t[9];
	int r;

	for (r = 0; r < rounds; r++) {
		double t0 = now_ms();

		build(k, vnodes, be, n, out);
		t[r] = now_ms() - t0;
	}
	qsort(t, rounds, sizeof(*t), dbl_cmp);
	return t[rounds / 2];
}

/* Busiest backend's slots over its share M * w / W. */
static double balance(const uint32_t *t, const struct maglev_backend_spec *be, size_t n, int equal)
{
	uint32_t *cnt = calloc(n, sizeof(*cnt)), s;
	double total = 0, worst = 0;
	size_t i;

	for (i = 0; i < n; i++)
		total += equal ? 1 : be[i].weight;
	for (s = 0; s < M; s++)
		cnt[t[s]]++;
	for (i = 0; i < n; i++) {
		double r = cnt[i] / (M * (equal ? 1 : be[i].weight) / total);

		worst = r > worst ? r : worst;
	}
	free(cnt);
	return worst;
}

struct disrupt {
	double survivors; /* fraction of the survivors' slots that changed */
	double moved;	  /* all slots that changed, over M */
	double minimum;	  /* the removed backends' slots, over M */
};

/* Remove k of n: every (n/k)-th for the placements (any backend may go),
 * the last k for the references (jump can only lose its last buckets;
 * modulo renumbers either way).
 */
static struct disrupt disruption(enum kind kd, const struct maglev_backend_spec *be, size_t n,
				 size_t k, const uint32_t *base)
{
	struct maglev_backend_spec *sub = malloc(sizeof(*sub) * n);
	size_t *id = malloc(sizeof(*id) * n), *gone = calloc(n, sizeof(*gone)), i, j = 0;
	uint32_t *t = malloc(sizeof(*t) * M), s;
	size_t own = 0, surv = 0, chs = 0, ch = 0;
	struct disrupt d;

	for (i = 0; i < k; i++)
		gone[kd == JUMP || kd == MODULO ? n - 1 - i : i * (n / k)] = 1;
	for (i = 0; i < n; i++) {
		if (gone[i])
			continue;
		sub[j] = be[i];
		id[j++] = i;
	}
	build(kd, MAGLEV_VNODES_DEFAULT, sub, j, t);
	for (s = 0; s < M; s++) {
		int c = id[t[s]] != base[s];

		ch += c;
		if (gone[base[s]]) {
			own++;
		} else {
			surv++;
			chs += c;
		}
	}
	d.survivors = (double)chs / surv;
	d.moved = (double)ch / M;
	d.minimum = (double)own / M;
	free(sub);
	free(id);
	free(gone);
	free(t);
	return d;
}

static void put(struct json_object *o, const char *name, double v)
{
	json_object_object_add(o, name, json_object_new_double(v));
}

/* Build, balance and disruption of every kind at n backends. */
static void by_size(struct json_object *o, size_t n, int equal)
{
	struct maglev_backend_spec *be = malloc(sizeof(*be) * n);
	uint32_t *t = malloc(sizeof(*t) * M);
	const size_t ks[3] = {1, n / 100 ? n / 100 : 1, n * 3 / 100 ? n * 3 / 100 : 1};
	static const char *const kn[3] = {"k1", "k1pct", "k3pct"};
	char name[96];
	size_t i, c;
	int kd;

	bench_fleet(be, n, 0);
	if (!equal)
		for (i = 0; i < n; i++)
			be[i].weight = 1 + i % 4;
	for (kd = 0; kd < NKINDS; kd++) {
		const char *w = equal ? "equal" : "mixed";
		double ms, bal;

		if (!equal && (kd == JUMP || kd == MODULO))
			continue; /* no weights */
		ms = build_ms(kd, MAGLEV_VNODES_DEFAULT, be, n, t, kd == RDV && n >= 1000 ? 3 : 5);
		bal = balance(t, be, n, equal);
		printf("%-10s n=%-5zu %-5s build %9.3f ms  balance %.4f ", kname[kd], n, w, ms,
		       bal);
		snprintf(name, sizeof(name), "placement_%s_n%zu_%s_build_ms", kname[kd], n, w);
		put(o, name, ms);
		snprintf(name, sizeof(name), "placement_%s_n%zu_%s_balance", kname[kd], n, w);
		put(o, name, bal);
		for (c = 0; c < 3; c++) {
			struct disrupt d = disruption(kd, be, n, ks[c], t);

			printf(" | k=%zu surv %.4f moved %.4f min %.4f", ks[c], d.survivors,
			       d.moved, d.minimum);
			snprintf(name, sizeof(name),
				 "placement_%s_n%zu_%s_remove_%s_survivors_changed", kname[kd], n,
				 w, kn[c]);
			put(o, name, d.survivors);
			snprintf(name, sizeof(name), "placement_%s_n%zu_%s_remove_%s_moved",
				 kname[kd], n, w, kn[c]);
			put(o, name, d.moved);
			snprintf(name, sizeof(name), "placement_%s_n%zu_%s_remove_%s_minimum",
				 kname[kd], n, w, kn[c]);
			put(o, name, d.minimum);
		}
		printf("\n");
	}
	free(be);
	free(t);
}

#define RING_SEEDS 101

/* A plain ring's busiest backend at n = 10 over RING_SEEDS seeds (the
 * paper's median over placements), and at n = 1000 with build time.
 */
static void ring_vnodes(struct json_object *o)
{
	static const uint32_t vs[] = {1, 16, 100, 256, 1000};
	struct maglev_backend_spec be[1000];
	uint32_t *t = malloc(sizeof(*t) * M);
	double bal[RING_SEEDS], ms, b1k;
	struct maglev_placement_cfg cfg = {.kind = MAGLEV_PLACEMENT_RING};
	struct maglev_err err;
	char name[64];
	size_t v, r;

	bench_fleet(be, 1000, 0);
	for (v = 0; v < sizeof(vs) / sizeof(vs[0]); v++) {
		cfg.vnodes = vs[v];
		for (r = 0; r < RING_SEEDS; r++) {
			struct maglev_seed sd = {mix(r + 1), mix(r + 1000)};

			if (maglev_placement_build(&sd, &cfg, be, 10, M, t, &err)) {
				fprintf(stderr, "table_bench: %s\n", err.msg);
				exit(1);
			}
			bal[r] = balance(t, be, 10, 1);
		}
		qsort(bal, RING_SEEDS, sizeof(*bal), dbl_cmp);
		ms = build_ms(RING, vs[v], be, 1000, t, 3);
		b1k = balance(t, be, 1000, 1);
		printf("ring V=%-4u n=10 busiest/mean median %.3f (min %.3f, max %.3f)  n=1000 "
		       "balance %.4f build %.1f ms\n",
		       vs[v], bal[RING_SEEDS / 2], bal[0], bal[RING_SEEDS - 1], b1k, ms);
		snprintf(name, sizeof(name), "placement_ring_v%u_n10_balance_median", vs[v]);
		put(o, name, bal[RING_SEEDS / 2]);
		snprintf(name, sizeof(name), "placement_ring_v%u_n1000_balance", vs[v]);
		put(o, name, b1k);
		snprintf(name, sizeof(name), "placement_ring_v%u_n1000_build_ms", vs[v]);
		put(o, name, ms);
	}
	free(t);
}

/* Rendezvous at N = 1000: one backend removed, as a full build and as an
 * update of the previous table (the same bytes, checked).
 */
static void rendezvous_update(struct json_object *o)
{
	struct maglev_backend_spec *be = malloc(sizeof(*be) * 1000);
	uint32_t *t = malloc(sizeof(*t) * M), *a = malloc(sizeof(*a) * M),
		 *b = malloc(sizeof(*b) * M);
	struct maglev_err err;
	double tu[5], full;
	int r;

	bench_fleet(be, 1000, 0);
	build(RDV, 0, be, 1000, t);
	full = build_ms(RDV, 0, be + 1, 999, a, 3);
	for (r = 0; r < 5; r++) {
		double t0 = now_ms();

		if (maglev_rendezvous_update(&seed, be, 1000, t, be + 1, 999, M, b, &err)) {
			fprintf(stderr, "table_bench: rendezvous update: %s\n", err.msg);
			exit(1);
		}
		tu[r] = now_ms() - t0;
	}
	if (memcmp(a, b, sizeof(*a) * M)) {
		fprintf(stderr, "table_bench: rendezvous update and full build differ\n");
		exit(1);
	}
	qsort(tu, 5, sizeof(*tu), dbl_cmp);
	printf("rendezvous n=1000, one removed: full build %.1f ms, update %.2f ms (same table)\n",
	       full, tu[2]);
	put(o, "placement_rendezvous_n1000_remove1_full_build_ms", full);
	put(o, "placement_rendezvous_n1000_remove1_update_ms", tu[2]);
	free(be);
	free(t);
	free(a);
	free(b);
}

void placement_bench(struct json_object *o)
{
	static const size_t ns[] = {10, 100, 1000};
	size_t i;

	printf("\nPlacements, M=%u, default seed; ring with V=%u unless given; balance = "
	       "busiest / fair share;\nremoving k: surv = survivors' slots that changed, moved = "
	       "all slots changed, min = removed backends' slots\n",
	       M, MAGLEV_VNODES_DEFAULT);
	for (i = 0; i < 3; i++) {
		by_size(o, ns[i], 1);
		by_size(o, ns[i], 0);
	}
	ring_vnodes(o);
	rendezvous_update(o);
}
