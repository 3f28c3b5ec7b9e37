// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Maglev table builder benchmark: build time (median), speed against the
 * paper's plain pseudocode measured in the same run, disruption when one
 * backend leaves or joins, and balance; then every placement side by side
 * (placement_bench.c).
 *
 * Usage: table_bench OUT.json
 *        table_bench --demo     (one example table and each backend's share)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "maglev_table.h"
#include "maglev_table_naive.h"
#include "bench_clock.h"
#include "placement_bench.h"

#define M MAGLEV_M_DEFAULT

static const struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};

/* Backend i of a synthetic fleet: alternately IPv4 in 203.0.113.0/24 and
 * IPv6 in 2001:db8::/32, ports varied so thousands stay distinct.
 */
void bench_fleet(struct maglev_backend_spec *be, size_t n, size_t first)
{
	size_t i;

	memset(be, 0, sizeof(*be) * n);
	for (i = 0; i < n; i++) {
		size_t k = first + i, h = k / 2;

		be[i].weight = 1;
		if (k & 1) {
			be[i].family = AF_INET6;
			be[i].addr[0] = htonl(0x20010db8);
			be[i].addr[3] = htonl((uint32_t)h + 1);
			be[i].port = 443;
		} else {
			be[i].family = AF_INET;
			be[i].addr[0] = htonl(0xcb007100 | (uint32_t)(h % 254 + 1));
			be[i].port = 8000 + h / 254;
		}
	}
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef int (*build_fn)(const struct maglev_seed *, const struct maglev_backend_spec *, size_t,
			uint32_t, uint32_t *, struct maglev_err *);

static double timed(build_fn fn, const struct maglev_backend_spec *be, size_t n, uint32_t *out)
{
	struct maglev_err err;
	double t0 = now_ms();
	int ret = fn(&seed, be, n, M, out, &err);
	double t = now_ms() - t0;

	if (ret) {
		fprintf(stderr, "table_bench: build failed: %s\n", err.msg);
		exit(1);
	}
	return t;
}

/* Median build time of n backends; with naive set, the paper's pseudocode
 * runs interleaved with the fast builder so both see the same machine load.
 */
static double bench_build(size_t n, int rounds, int fast_per_round, double *naive_ms)
{
	struct maglev_backend_spec *be = malloc(sizeof(*be) * n);
	uint32_t *a = malloc(sizeof(*a) * M), *b = malloc(sizeof(*b) * M);
	double *tf = malloc(sizeof(*tf) * rounds * fast_per_round);
	double tn[16];
	int r, i, k = 0;
	double med;

	if (!be || !a || !b || !tf || rounds > 16) {
		fprintf(stderr, "table_bench: out of memory\n");
		exit(1);
	}
	bench_fleet(be, n, 0);
	for (r = 0; r < rounds; r++) {
		if (naive_ms)
			tn[r] = timed(maglev_table_build_naive, be, n, b);
		for (i = 0; i < fast_per_round; i++)
			tf[k++] = timed(maglev_table_build, be, n, a);
	}
	if (naive_ms) {
		if (memcmp(a, b, sizeof(*a) * M)) {
			fprintf(stderr, "table_bench: fast and naive tables differ\n");
			exit(1);
		}
		*naive_ms = median(tn, rounds);
	}
	med = median(tf, k);
	free(be);
	free(a);
	free(b);
	free(tf);
	return med;
}

static void build_or_die(const struct maglev_backend_spec *be, size_t n, uint32_t *out)
{
	timed(maglev_table_build, be, n, out);
}

/* Fraction of slots whose owner changed. Owners are compared by identity:
 * ida/idb map each table's backend indices to fleet numbers.
 */
static double changed(const uint32_t *a, const size_t *ida, const uint32_t *b, const size_t *idb)
{
	size_t j, c = 0;

	for (j = 0; j < M; j++)
		c += ida[a[j]] != idb[b[j]];
	return (double)c / M;
}

#define DN     100
#define DCASES 10

/* Average over DCASES choices of the backend removed or added. */
static void disruption(double *rm, double *add)
{
	struct maglev_backend_spec all[DN + DCASES], sub[DN + 1];
	size_t id_all[DN + DCASES], id_sub[DN + 1];
	uint32_t *base = malloc(sizeof(*base) * M), *t = malloc(sizeof(*t) * M);
	size_t i, c, k;

	if (!base || !t) {
		fprintf(stderr, "table_bench: out of memory\n");
		exit(1);
	}
	bench_fleet(all, DN + DCASES, 0);
	for (i = 0; i < DN + DCASES; i++)
		id_all[i] = i;
	build_or_die(all, DN, base);
	*rm = *add = 0;
	for (c = 0; c < DCASES; c++) {
		size_t gone = c * (DN / DCASES) + c;

		for (i = 0, k = 0; i < DN; i++) {
			if (i == gone)
				continue;
			sub[k] = all[i];
			id_sub[k++] = i;
		}
		build_or_die(sub, k, t);
		*rm += changed(base, id_all, t, id_sub) / DCASES;

		memcpy(sub, all, sizeof(*all) * DN);
		memcpy(id_sub, id_all, sizeof(*id_all) * DN);
		sub[DN] = all[DN + c];
		id_sub[DN] = DN + c;
		build_or_die(sub, DN + 1, t);
		*add += changed(base, id_all, t, id_sub) / DCASES;
	}
	free(base);
	free(t);
}

static double balance(void)
{
	struct maglev_backend_spec be[DN];
	uint32_t *t = malloc(sizeof(*t) * M);
	uint32_t cnt[DN] = {0}, mx = 0, mn = UINT32_MAX;
	size_t j;

	if (!t) {
		fprintf(stderr, "table_bench: out of memory\n");
		exit(1);
	}
	bench_fleet(be, DN, 0);
	build_or_die(be, DN, t);
	for (j = 0; j < M; j++)
		cnt[t[j]]++;
	for (j = 0; j < DN; j++) {
		mx = cnt[j] > mx ? cnt[j] : mx;
		mn = cnt[j] < mn ? cnt[j] : mn;
	}
	free(t);
	return (double)mx / mn;
}

/* An example table: five backends with weights, one draining (weight 0). */
static int demo(void)
{
	static const struct {
		const char *addr;
		uint16_t port;
		uint32_t weight;
	} ex[] = {
		{"198.51.100.10", 80, 100}, {"198.51.100.11", 80, 100}, {"198.51.100.12", 80, 200},
		{"2001:db8::10", 80, 50},   {"198.51.100.13", 80, 0},
	};
	struct maglev_backend_spec be[5];
	double lo = 1e9, hi = 0, t0, ms;
	uint32_t *t = malloc(sizeof(*t) * M), cnt[5] = {0}, total = 0;
	struct maglev_err err;
	size_t i;
	int ret;

	if (!t)
		return 1;
	memset(be, 0, sizeof(be));
	for (i = 0; i < 5; i++) {
		be[i].family = strchr(ex[i].addr, ':') ? AF_INET6 : AF_INET;
		inet_pton(be[i].family, ex[i].addr, be[i].addr);
		be[i].port = ex[i].port;
		be[i].weight = ex[i].weight;
		total += ex[i].weight;
	}
	t0 = now_ms();
	ret = maglev_table_build(&seed, be, 5, M, t, &err);
	ms = now_ms() - t0;
	if (ret) {
		fprintf(stderr, "table_bench: %s\n", err.msg);
		free(t);
		return 1;
	}
	for (i = 0; i < M; i++)
		cnt[t[i]]++;
	printf("Maglev table, M=%u slots, seed %016llx%016llx (default), built in %.3f ms\n\n", M,
	       (unsigned long long)seed.k0, (unsigned long long)seed.k1, ms);
	printf("%-22s %6s %7s %8s %12s\n", "backend", "weight", "slots", "share", "ideal M*w/W");
	for (i = 0; i < 5; i++) {
		double ideal = (double)M * ex[i].weight / total;
		char name[64];

		snprintf(name, sizeof(name), strchr(ex[i].addr, ':') ? "[%s]:%u" : "%s:%u",
			 ex[i].addr, ex[i].port);
		printf("%-22s %6u %7u %7.3f%% %12.2f\n", name, ex[i].weight, cnt[i],
		       100.0 * cnt[i] / M, ideal);
		if (ex[i].weight) {
			double per = cnt[i] / ideal;

			lo = per < lo ? per : lo;
			hi = per > hi ? per : hi;
		}
	}
	printf("\nbalance: max/min of slots per unit of weight = %.5f (1 is perfect)\n", hi / lo);
	printf("the weight-0 backend (draining) owns %u slots\n", cnt[4]);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	double n1k, n10k, naive, rm, add, bal;
	struct json_object *o;

	if (argc == 2 && !strcmp(argv[1], "--demo"))
		return demo();
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.json\n", argv[0]);
		return 2;
	}
	n1k = bench_build(1000, 5, 21, &naive);
	n10k = bench_build(10000, 1, 31, NULL);
	disruption(&rm, &add);
	bal = balance();

	printf("Maglev table build, M=%u, seed = documented default\n", M);
	printf("%-40s %12s  %s\n", "figure", "value", "note");
	printf("%-40s %12.3f  median of 105 builds, target <= 1.0\n", "table_build_ms_n1000", n1k);
	printf("%-40s %12.3f  median of 31 builds, target <= 10\n", "table_build_ms_n10000", n10k);
	printf("%-40s %12.3f  paper's pseudocode, median of 5\n", "naive_build_ms_n1000", naive);
	printf("%-40s %12.1f  same run, target >= 2\n", "table_build_speedup_vs_naive_n1000",
	       naive / n1k);
	printf("%-40s %12.4f  theoretical minimum 1/N = %.4f\n", "table_disruption_remove1_n100",
	       rm, 1.0 / DN);
	printf("%-40s %12.4f  theoretical minimum 1/(N+1) = %.4f\n", "table_disruption_add1_n100",
	       add, 1.0 / (DN + 1));
	printf("%-40s %12.4f  ideal ceil(M/N)/floor(M/N) = %.4f\n",
	       "table_balance_max_over_min_n100", bal, (double)(M / DN + 1) / (M / DN));

	o = json_object_new_object();
	json_object_object_add(o, "table_build_ms_n1000", json_object_new_double(n1k));
	json_object_object_add(o, "table_build_ms_n10000", json_object_new_double(n10k));
	json_object_object_add(o, "table_build_ms_naive_n1000", json_object_new_double(naive));
	json_object_object_add(o, "table_build_speedup_vs_naive_n1000",
			       json_object_new_double(naive / n1k));
	json_object_object_add(o, "table_disruption_remove1_n100", json_object_new_double(rm));
	json_object_object_add(o, "table_disruption_add1_n100", json_object_new_double(add));
	json_object_object_add(o, "table_balance_max_over_min_n100", json_object_new_double(bal));
	placement_bench(o);
	if (json_object_to_file_ext(argv[1], o, JSON_C_TO_STRING_PLAIN)) {
		fprintf(stderr, "table_bench: writing %s: %s\n", argv[1], strerror(errno));
		json_object_put(o);
		return 1;
	}
	json_object_put(o);
	return 0;
}
