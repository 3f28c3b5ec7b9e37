// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The connection-table census (userspace/lib/conn_census.c, what bounded
 * loads and the FLOWS column count from) by table size: 4,096, 65,536,
 * 262,144 and 1,048,576 entries (the default), every way filled with a live
 * UDP entry (a long-running balancer's table is full: entries are
 * replaced, not removed), 10 backends. Reported, medians of ROUNDS: the
 * census mapping the table each time (maglev_conn_census, what maglevd did
 * before issue 19) and through a mapping kept open
 * (maglev_conn_census_mapped, what it does now), wall and CPU ms; what
 * maglevd's census interval then is (20x the census's CPU time, at least
 * 100 ms: flow_count.c keeps it under 5% of a CPU); and the look between
 * censuses (maglev_conn_recheck) over a full watch list (262,144 entries,
 * maglevd's), none due and all due. The table is written through its mmap,
 * as the datapath would have; nothing is sent.
 *
 * Usage: census_bench OUT.json
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "bench_clock.h"
#include "conn_census.h"
#include "datapath.h"
#include "maglev_conn.h"

#define NBE	10
#define ROUNDS	9
#define WATCH	262144
#define IDLE_NS (60 * 1000000000ULL)

static const uint32_t sizes[] = {4096, 65536, 262144, 1048576};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static double median_ms(uint64_t *t)
{
	qsort(t, ROUNDS, sizeof(t[0]), cmp_u64);
	return t[ROUNDS / 2] / 1e6;
}

/* Every way of every bucket: a live UDP entry of a distinct flow, seen now. */
static int fill(struct maglev_dp *dp, uint32_t entries)
{
	int cfd = maglev_dp_map_fd(dp, "maglev_conns"),
	    kfd = maglev_dp_map_fd(dp, "maglev_connkey");
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	uint32_t nb = entries / MAGLEV_CONN_WAYS, i, zero = 0;
	struct maglev_conn_params p;
	struct maglev_conn_bucket *m;
	int w;

	if (cfd < 0 || kfd < 0 || bpf_map_lookup_elem(kfd, &zero, &p))
		return -ENOENT;
	len = ((size_t)nb * sizeof(*m) + page - 1) / page * page;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
	if (m == MAP_FAILED)
		return -errno;
	for (i = 0; i < nb; i++) {
		for (w = 0; w < MAGLEV_CONN_WAYS; w++) {
			struct maglev_conn_slot *s = &m[i].slot[w];
			uint64_t h;

			memset(s, 0, sizeof(*s));
			s->key.family = MAGLEV_AF_INET;
			s->key.proto = IPPROTO_UDP;
			s->key.src[0] = htonl(0xc6336400 | (i & 0xff)); /* 198.51.100.x */
			s->key.src[1] = i;
			s->key.dst[0] = htonl(0xcb00710a); /* 203.0.113.10 */
			s->key.sport = (uint16_t)(10000 + w);
			s->key.dport = htons(80);
			s->conn.backend_idx = 1 + (i * MAGLEV_CONN_WAYS + (uint32_t)w) % NBE;
			s->conn.backend_gen = 0;
			s->conn.last_seen_ns = now_ns();
			s->vip_id = 1;
			h = maglev_conn_hash(&s->key, p.seed);
			s->check = maglev_conn_check(h, s);
			m[i].tag[w] = maglev_conn_tag(h);
		}
	}
	munmap(m, len);
	return 0;
}

/* Census ROUNDS times, mapping each time or not; medians into *wall, *cpu. */
static int census_runs(struct maglev_dp *dp, const struct conn_map *cm, struct conn_census *c,
		       uint32_t want, double *wall, double *cpu)
{
	uint64_t t[ROUNDS], u[ROUNDS];
	int i, r;

	for (i = 0; i < ROUNDS; i++) {
		uint64_t t0 = now_ns(), u0 = cpu_ns();

		c->watch_until = now_ns() + 2 * IDLE_NS;
		r = cm ? maglev_conn_census_mapped(dp, cm, c) : maglev_conn_census(dp, c);
		u[i] = cpu_ns() - u0;
		t[i] = now_ns() - t0;
		if (r || c->live != want) {
			fprintf(stderr, "census_bench: census of %u: %s, %llu live\n", want,
				strerror(-r), (unsigned long long)c->live);
			return -1;
		}
	}
	*wall = median_ms(t);
	*cpu = median_ms(u);
	return 0;
}

static void put(struct json_object *js, const char *what, uint32_t size, double v)
{
	char name[64];

	snprintf(name, sizeof(name), "census_%s_%u", what, size);
	json_object_object_add(js, name, json_object_new_double(v));
}

int main(int argc, char **argv)
{
	struct json_object *js = json_object_new_object();
	struct conn_census *c = calloc(1, sizeof(*c));
	uint32_t *gone;
	char err[256];
	size_t k;

	if (argc != 2 || !c) {
		fprintf(stderr, "usage: census_bench OUT.json\n");
		return 2;
	}
	c->watch = calloc(WATCH, sizeof(*c->watch));
	gone = calloc(WATCH, sizeof(*gone));
	if (!c->watch || !gone)
		return 1;
	c->watch_cap = WATCH;
	printf("medians of %d, ms; census: wall / CPU\n", ROUNDS);
	printf("%-9s %17s %17s %9s %12s %12s\n", "entries", "mapping each time", "mapping kept",
	       "interval", "look, none", "look, all");
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = sizes[k]};
		double w0, c0, w1, c1, none, all;
		struct maglev_config cfg;
		struct maglev_dp *dp;
		struct conn_map cm;
		uint64_t t[ROUNDS];
		int i, r;

		r = maglev_dp_open(&dp, &o, err, sizeof(err));
		if (r) {
			fprintf(stderr, "census_bench: open: %s\n", err);
			return 1;
		}
		r = maglev_dp_get_config(dp, &cfg);
		cfg.udp_idle_ns = IDLE_NS;
		if (!r)
			r = maglev_dp_set_config(dp, &cfg);
		for (i = 1; i <= NBE && !r; i++) {
			struct maglev_backend b = {.family = MAGLEV_AF_INET,
						   .flags = MAGLEV_BACKEND_F_UP};

			r = maglev_dp_backend_set(dp, (uint32_t)i, &b);
		}
		if (r || (r = fill(dp, sizes[k])) || (r = maglev_conn_map_open(dp, &cm))) {
			fprintf(stderr, "census_bench: setup: %s\n", strerror(-r));
			return 1;
		}
		if (census_runs(dp, NULL, c, sizes[k], &w0, &c0) ||
		    census_runs(dp, &cm, c, sizes[k], &w1, &c1))
			return 1;
		/* The look between censuses: nothing due (every tick's cost), then all. */
		for (i = 0; i < ROUNDS; i++) {
			uint64_t t0 = now_ns();

			r = (int)maglev_conn_recheck(dp, &cm, c, now_ns(), gone, WATCH);
			t[i] = now_ns() - t0;
			if (r) {
				fprintf(stderr, "census_bench: look: %d gone\n", r);
				return 1;
			}
		}
		none = median_ms(t);
		for (i = 0; i < ROUNDS; i++) {
			uint32_t n = c->nwatch;
			uint64_t t0;

			c->watch_until = now_ns() + 2 * IDLE_NS;
			if (maglev_conn_census_mapped(dp, &cm, c))
				return 1;
			n = c->nwatch;
			t0 = now_ns();
			r = (int)maglev_conn_recheck(dp, &cm, c, now_ns() + 2 * IDLE_NS, gone,
						     WATCH);
			t[i] = now_ns() - t0;
			if (r != (int)n || c->nwatch) {
				fprintf(stderr, "census_bench: look: %d of %u gone\n", r, n);
				return 1;
			}
		}
		all = median_ms(t);
		printf("%-9u %8.2f / %6.2f %8.2f / %6.2f %9.0f %12.2f %12.2f\n", sizes[k], w0, c0,
		       w1, c1, c1 * 20 > 100 ? c1 * 20 : 100, none, all);
		put(js, "ms_remap", sizes[k], w0);
		put(js, "ms", sizes[k], w1);
		put(js, "cpu_ms", sizes[k], c1);
		put(js, "look_none_ms", sizes[k], none);
		put(js, "look_all_ms", sizes[k], all);
		maglev_conn_map_close(&cm);
		maglev_dp_close(dp);
	}
	if (json_object_to_file_ext(argv[1], js, JSON_C_TO_STRING_PLAIN)) {
		fprintf(stderr, "census_bench: write %s\n", argv[1]);
		return 1;
	}
	json_object_put(js);
	free(gone);
	free(c->watch);
	free(c);
	return 0;
}
