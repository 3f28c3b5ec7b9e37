// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * XDP balancer benchmark: ns per packet from BPF_PROG_TEST_RUN with repeat.
 *
 * The kernel reruns the program on the same buffer without restoring it, so
 * each iteration goes through the maglev_bench wrapper (bpf/maglev_bench.bpf.c):
 * it moves the head back (one bpf_xdp_adjust_head every iteration, also when
 * nothing moved), rewrites the 80 header bytes, optionally gives the client a
 * new address, and tail-calls the balancer. The wrapper alone (tail call into
 * a program that returns XDP_TX) is measured in the same run and reported as
 * the baseline; "net" figures subtract it. Counter deltas prove that every
 * iteration took the intended path. docs/datapath.md says what each case
 * measures.
 *
 * Usage: xdp_bench OUT.json
 * XDP_BENCH_ONLY=substring runs only the cases whose key contains it (and
 * the baseline), e.g. for perf record.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <json-c/json.h>
#include <sys/mman.h>
#include "bench_clock.h"
#include "datapath.h"
#include "maglev_conn.h"
#include "maglev_hash.h"
#include "maglev_table.h"
#include "maglev_second.h"
#include "maglev_bench.h"
#include "maglev_bench.skel.h"
#include "pkt.h"

#define REPEAT 1000000
#define ROUNDS 7
/* New-flow rounds: this many distinct flows, inserted into an emptied
 * table. Far below one CPU's share of the per-CPU LRU (1M entries / CPUs),
 * so no insert evicts; checked after every round.
 */
#define REPEAT_NEW_MAX 200000

/* XDP_BENCH_CONN_SIZE=N: connection-table size (default 1M), to see the
 * effect of the table's memory footprint.
 */
static uint32_t conn_size = MAGLEV_CONN_TABLE_SIZE;
static uint32_t repeat_new = REPEAT_NEW_MAX;
#define NBACKENDS 100
#define FRAME	  128

struct ctx {
	struct maglev_dp *dp;
	struct maglev_bench *wrap;
	int lb_fd, noop_fd;
	uint64_t evicted; /* new-flow rounds: inserts whose entry was evicted */
	uint8_t frame[FRAME];
};

/* What a case must show in the counters for every iteration. */
struct expect {
	int reason; /* MAGLEV_REASON_*, -1: none (baseline) */
	int ctr;    /* MAGLEV_CTR_*, -1: none */
	int ctr2;
	int either; /* ctr and ctr2 together moved once per iteration */
};

#include "decap_bench.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int set_target(struct ctx *c, int prog_fd)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(bpf_map__fd(c->wrap->maps.maglev_bench_next), &zero, &prog_fd,
				   0);
}

static int set_packet_n(struct ctx *c, const uint8_t *frame, uint32_t vary_off, uint32_t vary_n)
{
	struct maglev_bench_pkt p = {.len = FRAME, .vary_off = vary_off, .vary_n = vary_n};
	uint32_t zero = 0;

	memcpy(p.data, frame, sizeof(p.data));
	memcpy(c->frame, frame, FRAME);
	return bpf_map_update_elem(bpf_map__fd(c->wrap->maps.maglev_bench_pkt), &zero, &p, 0);
}

static int set_packet(struct ctx *c, const uint8_t *frame, uint32_t vary_off)
{
	return set_packet_n(c, frame, vary_off, 0);
}

/* Empty the connection table; returns the number of entries it held. */
static long conn_flush(struct ctx *c)
{
	return maglev_dp_conn_flush(c->dp);
}

/* Median ns/packet over ROUNDS runs of repeat iterations through prog_fd;
 * -1 if any iteration did not take the expected path. fresh: empty the
 * connection table before each round and check after it that it holds one
 * entry per iteration (every insert a new flow), but for the few evicted by
 * a full bucket (counted in c->evicted).
 */
static double measure(struct ctx *c, int prog_fd, uint32_t want_action, const struct expect *e,
		      uint64_t *insert_skips, uint32_t repeat, int fresh)
{
	uint64_t r0[MAGLEV_REASON_MAX], r1[MAGLEV_REASON_MAX], k0[MAGLEV_CTR_MAX],
		k1[MAGLEV_CTR_MAX], ns[ROUNDS], total = (uint64_t)repeat * ROUNDS;
	uint8_t out[FRAME + 64];
	long held;
	int i;

	maglev_dp_reason_stats(c->dp, r0);
	maglev_dp_counter_stats(c->dp, k0);
	for (i = 0; i < ROUNDS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->frame, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = repeat);

		if (fresh && conn_flush(c) < 0) {
			fprintf(stderr, "flush connection table: %s\n", strerror(errno));
			return -1;
		}
		if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval != want_action) {
			fprintf(stderr, "test run failed: %s, action %u\n", strerror(errno),
				o.retval);
			return -1;
		}
		ns[i] = o.duration;
		if (fresh) {
			held = conn_flush(c);
			/* A set-associative table evicts when a bucket
			 * overflows, long before it is full: allow 0.1 %.
			 */
			if (held > (long)repeat || held < (long)(repeat - repeat / 1000)) {
				fprintf(stderr,
					"path check: table holds %ld entries after %u new flows\n",
					held, repeat);
				return -1;
			}
			c->evicted += repeat - held;
		}
	}
	maglev_dp_reason_stats(c->dp, r1);
	maglev_dp_counter_stats(c->dp, k1);
	if (e->reason >= 0 && r1[e->reason] - r0[e->reason] != total) {
		fprintf(stderr, "path check: %s moved by %llu, want %llu\n",
			maglev_dp_reason_name(e->reason),
			(unsigned long long)(r1[e->reason] - r0[e->reason]),
			(unsigned long long)total);
		return -1;
	}
	if (e->either) {
		uint64_t d = k1[e->ctr] - k0[e->ctr] + k1[e->ctr2] - k0[e->ctr2];

		if (d != total) {
			fprintf(stderr, "path check: %s + %s moved by %llu, want %llu\n",
				maglev_dp_counter_name(e->ctr), maglev_dp_counter_name(e->ctr2),
				(unsigned long long)d, (unsigned long long)total);
			return -1;
		}
	} else if (e->ctr >= 0 && k1[e->ctr] - k0[e->ctr] != total) {
		fprintf(stderr, "path check: %s moved by %llu, want %llu\n",
			maglev_dp_counter_name(e->ctr),
			(unsigned long long)(k1[e->ctr] - k0[e->ctr]), (unsigned long long)total);
		return -1;
	}
	if (!e->either && e->ctr2 >= 0 && k1[e->ctr2] - k0[e->ctr2] != total) {
		fprintf(stderr, "path check: %s moved by %llu, want %llu\n",
			maglev_dp_counter_name(e->ctr2),
			(unsigned long long)(k1[e->ctr2] - k0[e->ctr2]), (unsigned long long)total);
		return -1;
	}
	if (insert_skips)
		*insert_skips = k1[MAGLEV_CTR_CONN_INSERT_SKIP] - k0[MAGLEV_CTR_CONN_INSERT_SKIP];
	qsort(ns, ROUNDS, sizeof(ns[0]), cmp_u64);
	return (double)ns[ROUNDS / 2];
}

static void client_flow(struct flow *f, int family)
{
	memset(f, 0, sizeof(*f));
	f->family = family;
	f->proto = IPPROTO_TCP;
	f->sport = 40000;
	f->dport = 80;
	if (family == P_AF4) {
		f->src[0] = 198, f->src[1] = 51, f->src[2] = 100, f->src[3] = 7;
		f->dst[0] = 203, f->dst[1] = 0, f->dst[2] = 113, f->dst[3] = 10;
	} else {
		uint8_t s[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0c, [15] = 7};
		uint8_t d[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0f, [15] = 10};

		memcpy(f->src, s, 16);
		memcpy(f->dst, d, 16);
	}
}

static void frame_for(uint8_t *b, const struct flow *f, uint8_t flags)
{
	size_t hdr = 14 + (f->family == P_AF4 ? 20 : 40) + 20;
	struct client_opts co = {.tcp_flags = flags, .payload = FRAME - hdr};

	build_client(b, f, &co);
}

/* Every slot of the floor program's flow table holds the v4 client flow,
 * so it matches wherever the program's hash lands.
 */
static int floor_flows(struct ctx *c)
{
	struct maglev_bench_flow bf = {.backend = htonl(0xc6336401)}; /* 198.51.100.1 */
	int fd = bpf_map__fd(c->wrap->maps.maglev_bench_flows);
	struct flow f;
	uint32_t i;

	client_flow(&f, P_AF4);
	memcpy(&bf.saddr, f.src, 4);
	memcpy(&bf.daddr, f.dst, 4);
	bf.ports = htons(f.sport) | (uint32_t)htons(f.dport) << 16;
	for (i = 0; i < MAGLEV_BENCH_FLOWS; i++)
		if (bpf_map_update_elem(fd, &i, &bf, BPF_ANY))
			return -errno;
	return 0;
}

/* Hot flows: samples taken for VIP vip_id, all CPUs. */
static uint64_t hot_samples(struct ctx *c, uint32_t vip_id)
{
	int n = maglev_dp_ncpus(c->dp), i;
	struct maglev_hot_vip *v = calloc((size_t)n, sizeof(*v));
	uint64_t s = 0;

	if (v && !maglev_dp_hot_read(c->dp, vip_id, v))
		for (i = 0; i < n; i++)
			s += v[i].samples;
	free(v);
	return s;
}

static int setup(struct ctx *c, char *err, size_t errlen)
{
	/* XDP_BENCH_NO_HOT: hot flows off at load, as maglevd runs by
	 * default (established_vs_ref.sh); the hot cases are then skipped.
	 */
	struct maglev_dp_opts o = {.pin_dir = "",
				   .conn_table_size = conn_size,
				   .hot_flows = !getenv("XDP_BENCH_NO_HOT")};
	struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};
	static uint32_t table[MAGLEV_TABLE_SIZE], prev[MAGLEV_TABLE_SIZE];
	struct maglev_backend_spec spec[NBACKENDS];
	struct maglev_config cfg;
	struct maglev_err merr;
	struct flow f;
	int i, ret, fam;

	ret = maglev_dp_open(&c->dp, &o, err, errlen);
	if (ret)
		return ret;
	memset(&cfg, 0, sizeof(cfg));
	cfg.seed_k0 = seed.k0;
	cfg.seed_k1 = seed.k1;
	memcpy(cfg.nexthop_mac, MAC_NEXTHOP, 6);
	memcpy(cfg.src_mac, MAC_LB, 6);
	cfg.src4_prefix = htonl(0xc6336480); /* 198.51.100.128/25 */
	cfg.src4_plen = 25;
	cfg.src6_prefix[0] = htonl(0x20010db8);
	cfg.src6_prefix[1] = htonl(0x00050000);
	cfg.src6_plen = 64;
	cfg.mtu = 1500;
	cfg.udp_idle_ns = 30ULL * 1000000000ULL;
	ret = maglev_dp_set_config(c->dp, &cfg);
	if (ret)
		return ret;
	memset(spec, 0, sizeof(spec));
	for (i = 0; i < NBACKENDS; i++) {
		struct maglev_backend b = {.flags = MAGLEV_BACKEND_F_UP};

		/* Half IPv4 (192.0.2.x), half IPv6 (2001:db8:b::x) backends. */
		spec[i].weight = 1;
		spec[i].family = i % 2 ? P_AF6 : P_AF4;
		if (i % 2) {
			spec[i].addr[0] = htonl(0x20010db8);
			spec[i].addr[1] = htonl(0x000b0000);
			spec[i].addr[3] = htonl((uint32_t)i + 1);
		} else {
			spec[i].addr[0] = htonl(0xc0000200 | (uint32_t)(i + 1));
		}
		b.family = spec[i].family;
		memcpy(b.addr, spec[i].addr, 16);
		ret = maglev_dp_backend_set(c->dp, (uint32_t)i + 1, &b);
		if (ret)
			return ret;
	}
	ret = maglev_table_build(&seed, spec, NBACKENDS, MAGLEV_TABLE_SIZE, table, &merr);
	if (ret) {
		snprintf(err, errlen, "table build: %s", merr.msg);
		return ret;
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		table[i]++;
	for (fam = 0; fam < 2; fam++) {
		struct maglev_vip_info info = {.vip_id = (uint32_t)fam, .encap = MAGLEV_ENCAP_IPIP};
		struct maglev_vip_key k = {.port = htons(80), .proto = IPPROTO_TCP};

		client_flow(&f, fam ? P_AF6 : P_AF4);
		k.family = (uint8_t)f.family;
		memcpy(k.addr, f.dst, fam ? 16 : 4);
		ret = maglev_dp_vip_set(c->dp, &k, &info);
		if (!ret)
			ret = maglev_dp_table_swap(c->dp, info.vip_id, table);
		if (ret)
			return ret;
	}
	/* Second chance: VIP id 2, the v4 address port 81, GUE, every slot with
	 * a previous owner (the next backend of the owner's family).
	 */
	{
		struct maglev_vip_info info = {.vip_id = 2,
					       .encap = MAGLEV_ENCAP_GUE,
					       .flags = MAGLEV_VIP_F_SECOND_CHANCE,
					       .gue_port = htons(MAGLEV_GUE_PORT_DEFAULT)};
		struct maglev_vip_key k = {.port = htons(81), .proto = IPPROTO_TCP};

		client_flow(&f, P_AF4);
		k.family = (uint8_t)f.family;
		memcpy(k.addr, f.dst, 4);
		for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
			prev[i] = table[i] % NBACKENDS + 2 > NBACKENDS
					  ? table[i] % NBACKENDS + 2 - NBACKENDS
					  : table[i] % NBACKENDS + 2;
		ret = maglev_dp_vip_set(c->dp, &k, &info);
		if (!ret)
			ret = maglev_dp_table_swap_prev(c->dp, info.vip_id, table, prev);
		if (ret)
			return ret;
	}
	c->lb_fd = maglev_dp_prog_fd(c->dp);
	c->wrap = maglev_bench__open_and_load();
	if (!c->wrap) {
		snprintf(err, errlen, "load bench wrapper: %s", strerror(errno));
		return -errno;
	}
	c->noop_fd = bpf_program__fd(c->wrap->progs.maglev_bench_noop);
	return floor_flows(c);
}

/* Bytes of the connection table the benchmark creates. */
static size_t conn_table_bytes(void)
{
	return (size_t)(conn_size / MAGLEV_CONN_WAYS) * sizeof(struct maglev_conn_bucket);
}

/*
 * Reference for the new-flow cases: ns per dependent load at random cache
 * lines of a buffer as large as the connection table, mapped with 4 KiB
 * pages like the kernel's vmalloc'ed map (a cache and TLB miss per load once
 * the buffer outgrows them). One such miss is the least a new flow into a
 * large table pays: its bucket must be read. 0 if the buffer cannot be had.
 * huge: 2 MB pages where the kernel grants them (the cache miss with fewer
 * TLB misses, for scale).
 */
static double mem_dependent_load_ns(int huge)
{
	size_t lines = conn_table_bytes() / 64, i, j, p = 0, loads = 4000000;
	uint64_t x = 0x9e3779b97f4a7c15ULL, t0;
	uint64_t *buf;

	buf = mmap(NULL, lines * 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 0;
	madvise(buf, lines * 64, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	/* Sattolo's shuffle: one cycle through every line. */
	for (i = 0; i < lines; i++)
		buf[i * 8] = i;
	for (i = lines - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % i;
		p = buf[i * 8], buf[i * 8] = buf[j * 8], buf[j * 8] = p;
	}
	p = 0;
	t0 = now_ns();
	for (i = 0; i < loads; i++)
		p = buf[p * 8];
	t0 = now_ns() - t0;
	munmap(buf, lines * 64);
	return p < lines ? (double)t0 / loads : 0;
}

/*
 * Loads at random lines of the same buffer that depend on nothing before
 * them (the line from a hash of the loop counter, summed): the CPU keeps
 * many misses in flight, as it may for successive packets, whose buckets do
 * not depend on each other. The other bound: what a miss costs when nothing
 * waits for it. 0 if the buffer cannot be had.
 */
static double mem_independent_load_ns(void)
{
	size_t lines = conn_table_bytes() / 64, i, loads = 4000000;
	uint64_t sum = 0, t0;
	uint64_t *buf;

	buf = mmap(NULL, lines * 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 0;
	madvise(buf, lines * 64, MADV_NOHUGEPAGE);
	for (i = 0; i < lines; i++)
		buf[i * 8] = i;
	t0 = now_ns();
	for (i = 0; i < loads; i++)
		sum += buf[(i * 0x9e3779b97f4a7c15ULL >> 20) % lines * 8];
	t0 = now_ns() - t0;
	munmap(buf, lines * 64);
	return sum ? (double)t0 / loads : 0;
}

/*
 * The same chain through a buffer laid out like the table's buckets: each
 * step reads a bucket's tag word, which says where the last word of one of
 * its slots is (a random way), and that word names the next bucket. Two
 * dependent loads per bucket, on the lines a connection-table hit reads (the
 * tags, then the end of the way's slot, 0 to 4 lines further on): what the
 * bucket's further lines add to its first miss. 0 if no buffer.
 */
static double mem_bucket_load_ns(void)
{
	size_t nb = conn_table_bytes() / sizeof(struct maglev_conn_bucket), i, j, loads = 2000000;
	size_t bsz = sizeof(struct maglev_conn_bucket), p = 0;
	uint64_t x = 0x9e3779b97f4a7c15ULL, t0;
	uint8_t *buf;
	uint32_t *next;

	buf = mmap(NULL, nb * bsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	next = calloc(nb, sizeof(*next));
	if (buf == MAP_FAILED || !next) {
		if (buf != MAP_FAILED)
			munmap(buf, nb * bsz);
		free(next);
		return 0;
	}
	madvise(buf, nb * bsz, MADV_NOHUGEPAGE);
	for (i = 0; i < nb; i++)
		next[i] = (uint32_t)i;
	for (i = nb - 1; i > 0; i--) { /* Sattolo: one cycle */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % i;
		p = next[i], next[i] = next[j], next[j] = (uint32_t)p;
	}
	for (i = 0; i < nb; i++) {
		uint32_t w, end;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		w = (uint32_t)(x % MAGLEV_CONN_WAYS);
		end = (uint32_t)(offsetof(struct maglev_conn_bucket, slot) +
				 (w + 1) * sizeof(struct maglev_conn_slot) - 4);
		memcpy(buf + i * bsz, &end, 4);
		memcpy(buf + i * bsz + end, &next[i], 4);
	}
	free(next);
	p = 0;
	t0 = now_ns();
	for (i = 0; i < loads; i++) {
		const uint8_t *b = buf + p * bsz;

		p = *(const uint32_t *)(b + *(const uint32_t *)b);
	}
	t0 = now_ns() - t0;
	munmap(buf, nb * bsz);
	return p < nb ? (double)t0 / loads : 0;
}

static uint32_t verified_insns(int fd)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.verified_insns;
}

static int set_limit(struct ctx *c, uint32_t limit)
{
	struct maglev_config cfg;
	int ret = maglev_dp_get_config(c->dp, &cfg);

	if (ret)
		return ret;
	cfg.new_flow_limit = limit;
	return maglev_dp_set_config(c->dp, &cfg);
}

/*
 * The large established cases: a cycle of nflows flows, each with a way of
 * its own. Candidate client addresses (the word at vary_off of f's frame
 * xored with 1, 2, ...) are hashed with the table's own seed and kept while
 * their bucket has a free way, until every way is taken (or the cycle is
 * full): the table then holds every flow of the cycle, no insert evicts, and
 * each packet of the cycle is a different flow at a random bucket. Returns
 * the number of flows, or -1.
 */
static long cycle_flows(struct ctx *c, const struct flow *f)
{
	int kfd = maglev_dp_map_fd(c->dp, "maglev_connkey");
	int vfd = bpf_map__fd(c->wrap->maps.maglev_bench_vary);
	uint32_t zero = 0, nb, want, n = 0, i, *vals;
	struct maglev_conn_params cp;
	struct maglev_flow_key k;
	uint8_t *fill;
	/* The word vary_off names, as an index into the key's src. */
	int w = f->family == P_AF4 ? 0 : 3;

	if (kfd < 0 || bpf_map_lookup_elem(kfd, &zero, &cp))
		return -1;
	nb = cp.mask + 1;
	want = nb * MAGLEV_CONN_WAYS < MAGLEV_BENCH_VARY_MAX ? nb * MAGLEV_CONN_WAYS
							     : MAGLEV_BENCH_VARY_MAX;
	fill = calloc(nb, 1);
	vals = calloc(want, sizeof(*vals));
	if (!fill || !vals) {
		free(fill);
		free(vals);
		return -1;
	}
	memset(&k, 0, sizeof(k));
	k.family = f->family == P_AF4 ? MAGLEV_AF_INET : MAGLEV_AF_INET6;
	k.proto = IPPROTO_TCP;
	memcpy(k.src, f->src, f->family == P_AF4 ? 4 : 16);
	memcpy(k.dst, f->dst, f->family == P_AF4 ? 4 : 16);
	k.sport = htons(f->sport);
	k.dport = htons(f->dport);
	/* Coupon collector: about 20 candidates a bucket fill the last way. */
	for (i = 1; n < want && i < want * 64; i++) {
		struct maglev_flow_key t = k;
		uint32_t b;

		t.src[w] ^= htonl(i);
		b = (uint32_t)maglev_conn_hash(&t, cp.seed) & cp.mask;
		if (fill[b] >= MAGLEV_CONN_WAYS)
			continue;
		fill[b]++;
		vals[n++] = htonl(i);
	}
	free(fill);
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(vfd, &i, &vals[i], BPF_ANY)) {
			free(vals);
			return -1;
		}
	free(vals);
	return n;
}

/* Run on cpu only (BPF_PROG_TEST_RUN may otherwise move between CPUs
 * when it yields); *saved gets the affinity to restore.
 */
static int pin_self(int cpu, cpu_set_t *saved)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_getaffinity(0, sizeof(*saved), saved) ||
	    sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pin to CPU %d: %s\n", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* Where each CPU starts in the cycle: CPU i at i * n / CPUs. */
static int cycle_start(struct ctx *c, uint32_t n, int spread)
{
	int cpus = libbpf_num_possible_cpus(), i, ret;
	uint32_t zero = 0;
	uint64_t *v = calloc((size_t)cpus, sizeof(*v));

	if (!v)
		return -1;
	for (i = 0; i < cpus && spread; i++)
		v[i] = (uint64_t)n * (uint64_t)i / (uint64_t)cpus;
	ret = bpf_map_update_elem(bpf_map__fd(c->wrap->maps.maglev_bench_cycle), &zero, v, 0);
	free(v);
	return ret;
}

/* Empty the table, then one SYN and one ACK of every flow of the cycle
 * (frame for f at vary_off): n inserts, no eviction, then n hits, the
 * last of which leaves each way's reference bits in their steady state.
 * Checked in the counters.
 */
static int cycle_fill(struct ctx *c, const struct flow *f, uint32_t vary_off, uint32_t n)
{
	uint64_t k0[MAGLEV_CTR_MAX], k1[MAGLEV_CTR_MAX];
	int wrap_fd = bpf_program__fd(c->wrap->progs.maglev_bench);
	uint8_t fr[FRAME], out[FRAME + 64];
	int pass;

	if (conn_flush(c) < 0)
		return -1;
	maglev_dp_counter_stats(c->dp, k0);
	for (pass = 0; pass < 2; pass++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->frame, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = n);

		frame_for(fr, f, pass ? 0x10 : 0x02);
		if (set_packet_n(c, fr, vary_off, n) || cycle_start(c, n, 0) ||
		    bpf_prog_test_run_opts(wrap_fd, &o) || o.retval != XDP_TX) {
			fprintf(stderr, "cycle fill failed: %s\n", strerror(errno));
			return -1;
		}
	}
	maglev_dp_counter_stats(c->dp, k1);
	if (k1[MAGLEV_CTR_CONN_INSERT] - k0[MAGLEV_CTR_CONN_INSERT] != n ||
	    k1[MAGLEV_CTR_CONN_EVICT] != k0[MAGLEV_CTR_CONN_EVICT] ||
	    k1[MAGLEV_CTR_CONN_HIT] - k0[MAGLEV_CTR_CONN_HIT] != n) {
		fprintf(stderr,
			"cycle fill: %llu inserts, %llu evictions, %llu hits for %u flows\n",
			(unsigned long long)(k1[MAGLEV_CTR_CONN_INSERT] -
					     k0[MAGLEV_CTR_CONN_INSERT]),
			(unsigned long long)(k1[MAGLEV_CTR_CONN_EVICT] - k0[MAGLEV_CTR_CONN_EVICT]),
			(unsigned long long)(k1[MAGLEV_CTR_CONN_HIT] - k0[MAGLEV_CTR_CONN_HIT]), n);
		return -1;
	}
	return cycle_start(c, n, 1);
}

/* Two CPUs at once: one thread pinned to each, each running the cycle
 * (from its own start) ROUNDS times; every iteration must be a hit.
 */
struct pinned {
	int cpu, prog_fd, ok;
	uint32_t repeat;
	uint8_t frame[FRAME];
	uint64_t ns[ROUNDS];
	pthread_barrier_t *bar;
};

static void *pinned_run(void *arg)
{
	struct pinned *p = arg;
	uint8_t out[FRAME + 64];
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	p->ok = !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (i = 0; i < ROUNDS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->frame, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = p->repeat);

		pthread_barrier_wait(p->bar);
		if (bpf_prog_test_run_opts(p->prog_fd, &o) || o.retval != XDP_TX)
			p->ok = 0;
		p->ns[i] = o.duration;
	}
	return NULL;
}

/* Per CPU ns/packet (medians) of the two threads; -1 on a failed path. */
static int measure_2cpu(struct ctx *c, int prog_fd, double ns[2])
{
	uint64_t r0[MAGLEV_REASON_MAX], r1[MAGLEV_REASON_MAX], k0[MAGLEV_CTR_MAX],
		k1[MAGLEV_CTR_MAX], total = 2ULL * REPEAT * ROUNDS;
	struct pinned p[2];
	pthread_barrier_t bar;
	pthread_t t[2];
	int i;

	if (libbpf_num_possible_cpus() < 2)
		return -1;
	pthread_barrier_init(&bar, NULL, 2);
	maglev_dp_reason_stats(c->dp, r0);
	maglev_dp_counter_stats(c->dp, k0);
	for (i = 0; i < 2; i++) {
		p[i] = (struct pinned){.cpu = i, .prog_fd = prog_fd, .repeat = REPEAT, .bar = &bar};
		memcpy(p[i].frame, c->frame, FRAME);
		pthread_create(&t[i], NULL, pinned_run, &p[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	maglev_dp_reason_stats(c->dp, r1);
	maglev_dp_counter_stats(c->dp, k1);
	if (!p[0].ok || !p[1].ok ||
	    r1[MAGLEV_REASON_TX_FORWARD] - r0[MAGLEV_REASON_TX_FORWARD] != total ||
	    k1[MAGLEV_CTR_CONN_HIT] - k0[MAGLEV_CTR_CONN_HIT] != total) {
		fprintf(stderr, "path check (2 CPUs): %llu forwarded, %llu hits, want %llu\n",
			(unsigned long long)(r1[MAGLEV_REASON_TX_FORWARD] -
					     r0[MAGLEV_REASON_TX_FORWARD]),
			(unsigned long long)(k1[MAGLEV_CTR_CONN_HIT] - k0[MAGLEV_CTR_CONN_HIT]),
			(unsigned long long)total);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		qsort(p[i].ns, ROUNDS, sizeof(p[i].ns[0]), cmp_u64);
		ns[i] = (double)p[i].ns[ROUNDS / 2];
	}
	return 0;
}

static int set_slow_path_limit(struct ctx *c, uint32_t limit)
{
	struct maglev_config cfg;
	int ret = maglev_dp_get_config(c->dp, &cfg);

	if (ret)
		return ret;
	cfg.slow_path_limit = limit;
	return maglev_dp_set_config(c->dp, &cfg);
}

/* Interleaved batches (issue 14 item 7): FLOOD_BATCH iterations of a flood
 * frame, then EST_BATCH of an established flow, FLOOD_ROUNDS times; the
 * medians of the established batches' and of the flood batches' ns/packet.
 * The flood leaves the caches and the connection table as it would on a
 * real CPU between two packets of the established flow. flood NULL: the
 * established flow alone, in the same batches (the reference). Under
 * BPF_PROG_TEST_RUN a passed packet costs nothing beyond XDP; what the
 * stack and the module would spend on it is not in these figures.
 */
#define FLOOD_ROUNDS 41
#define FLOOD_BATCH  20000
#define EST_BATCH    2000

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int interleaved(struct ctx *c, int prog_fd, const uint8_t *est, const uint8_t *flood,
		       uint32_t flood_vary, double *est_ns, double *flood_ns)
{
	double e[FLOOD_ROUNDS], f[FLOOD_ROUNDS];
	uint64_t r0[MAGLEV_REASON_MAX], r1[MAGLEV_REASON_MAX];
	uint8_t out[FRAME + 64];
	int i;

	maglev_dp_reason_stats(c->dp, r0);
	for (i = 0; i < FLOOD_ROUNDS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, fo, .data_in = c->frame, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = FLOOD_BATCH);
		LIBBPF_OPTS(bpf_test_run_opts, eo, .data_in = c->frame, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = EST_BATCH);

		f[i] = 0;
		if (flood) {
			if (set_packet(c, flood, flood_vary) ||
			    bpf_prog_test_run_opts(prog_fd, &fo))
				return -1;
			f[i] = (double)fo.duration;
		}
		if (set_packet(c, est, 0) || bpf_prog_test_run_opts(prog_fd, &eo) ||
		    eo.retval != XDP_TX)
			return -1;
		e[i] = (double)eo.duration;
	}
	maglev_dp_reason_stats(c->dp, r1);
	/* Every established packet forwarded. */
	if (r1[MAGLEV_REASON_TX_FORWARD] - r0[MAGLEV_REASON_TX_FORWARD] <
	    (uint64_t)FLOOD_ROUNDS * EST_BATCH) {
		fprintf(stderr, "path check: established packets not all forwarded\n");
		return -1;
	}
	qsort(e, FLOOD_ROUNDS, sizeof(e[0]), cmp_double);
	qsort(f, FLOOD_ROUNDS, sizeof(f[0]), cmp_double);
	*est_ns = e[FLOOD_ROUNDS / 2];
	*flood_ns = f[FLOOD_ROUNDS / 2];
	return 0;
}

struct result {
	const char *key, *what;
	double ns;
};

static double find(const struct result *res, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(res[i].key, key))
			return res[i].ns;
	return 0;
}

/* The ratios issue 21 sets targets for, from net figures of this run
 * (printed and written as ratio_*; a case not run gives none).
 */
static void add_ratios(struct json_object *js, const struct result *res, int n, double base,
		       double base_cycle, double mem_ns)
{
	static const struct {
		const char *name, *num, *den; /* den NULL: the dependent load */
		double target;
	} r[] = {
		{"ratio_established_large_v4_vs_dependent_load", "xdp_ns_established_large_v4",
		 NULL, 1.3},
		{"ratio_established_large_v6_vs_dependent_load", "xdp_ns_established_large_v6",
		 NULL, 1.3},
		{"ratio_newsource_v4_vs_dependent_load", "xdp_ns_newsource_v4", NULL, 2},
		{"ratio_newsource_v6_vs_dependent_load", "xdp_ns_newsource_v6", NULL, 2},
		{"ratio_established_v4_vs_forwarder_floor", "xdp_ns_established_v4",
		 "xdp_ns_forwarder_floor", 2},
		{"ratio_established_v6_vs_forwarder_floor", "xdp_ns_established_v6",
		 "xdp_ns_forwarder_floor", 2},
		{"ratio_v6_vs_v4_established", "xdp_ns_established_v6", "xdp_ns_established_v4",
		 1.15},
		{"ratio_v6_vs_v4_established_large", "xdp_ns_established_large_v6",
		 "xdp_ns_established_large_v4", 1.15},
		{"ratio_v6_vs_v4_newflow", "xdp_ns_newflow_v6", "xdp_ns_newflow_v4", 1.15},
		{"ratio_v6_vs_v4_newsource", "xdp_ns_newsource_v6", "xdp_ns_newsource_v4", 1.15},
		{"ratio_v6_vs_v4_synrepeat", "xdp_ns_synrepeat_v6", "xdp_ns_synrepeat_v4", 1.15},
	};
	size_t i;

	printf("\nratios (net figures of this run; target: at most)\n");
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		double a = find(res, n, r[i].num), b = r[i].den ? find(res, n, r[i].den) : mem_ns;

		if (a <= 0 || b <= 0)
			continue;
		a -= strstr(r[i].num, "_large_") ? base_cycle : base;
		if (r[i].den)
			b -= strstr(r[i].den, "_large_") ? base_cycle : base;
		printf("  %-48s %6.2f   (%.2f)\n", r[i].name, a / b, r[i].target);
		json_object_object_add(js, r[i].name, json_object_new_double(a / b));
	}
}

int main(int argc, char **argv)
{
	const char *only = getenv("XDP_BENCH_ONLY");
	struct ctx c = {0};
	struct result res[48];
	struct json_object *js;
	struct flow f4, f6;
	uint8_t fr[FRAME];
	char err[256] = "";
	double base, ns, mem_ns = 0, mem_bucket_ns = 0, mem_huge_ns, mem_indep_ns, base_cycle = 0,
			 two[2] = {0, 0};
	uint32_t large_flows = 0;
	uint64_t ev0[MAGLEV_CTR_MAX], ev1[MAGLEV_CTR_MAX];
	int two_ok = 0;
	cpu_set_t cpus_saved;
	uint64_t skips = 0, limited_skips = 0;
	int n = 0, i, wrap_fd, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.json\n", argv[0]);
		return 2;
	}
	if (getenv("XDP_BENCH_CONN_SIZE"))
		conn_size = (uint32_t)strtoul(getenv("XDP_BENCH_CONN_SIZE"), NULL, 0);
	/* A quarter of one CPU's share of the LRU: no new-flow insert evicts. */
	if (conn_size / 4 / (uint32_t)libbpf_num_possible_cpus() < repeat_new)
		repeat_new = conn_size / 4 / (uint32_t)libbpf_num_possible_cpus();
	ret = setup(&c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "setup: %s (%s)\n", err[0] ? err : "failed", strerror(-ret));
		return 1;
	}
	wrap_fd = bpf_program__fd(c.wrap->progs.maglev_bench);
	client_flow(&f4, P_AF4);
	client_flow(&f6, P_AF6);

#define WANT(KEY) (!only || strstr(KEY, only))
#define RUN(KEY, WHAT, FD, ACTION, REPEAT_, FRESH, ...)                    \
	do {                                                               \
		struct expect e_ = {__VA_ARGS__};                          \
		ns = measure(&c, FD, ACTION, &e_, &skips, REPEAT_, FRESH); \
		if (ns < 0)                                                \
			return 1;                                          \
		res[n++] = (struct result){KEY, WHAT, ns};                 \
	} while (0)
#define WARM() measure(&c, wrap_fd, XDP_TX, &(struct expect){-1, -1, -1, 0}, NULL, REPEAT, 0)
/* The packet set last, hot flows on at 1 in EVERY for the run, then off
 * again: ROUNDS x REPEAT packets of VIP VIP_, of which at least 90% of one
 * in EVERY (random gaps) must have been sampled.
 */
#define HOT_RUN(KEY, WHAT, VIP_, EVERY)                                                        \
	do {                                                                                   \
		uint64_t s0_ = hot_samples(&c, VIP_), s1_;                                     \
                                                                                               \
		if (maglev_dp_hot_set(c.dp, EVERY)) {                                          \
			fprintf(stderr, "hot flows: cannot turn on\n");                        \
			return 1;                                                              \
		}                                                                              \
		RUN(KEY, WHAT, wrap_fd, XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD, \
		    .ctr = MAGLEV_CTR_CONN_HIT, .ctr2 = -1);                                   \
		s1_ = hot_samples(&c, VIP_);                                                   \
		maglev_dp_hot_set(c.dp, 0);                                                    \
		if ((s1_ - s0_) * 10 * (EVERY) < (uint64_t)ROUNDS * REPEAT * 9) {              \
			fprintf(stderr, "hot flows: %llu samples of %u packets, 1 in %u\n",    \
				(unsigned long long)(s1_ - s0_), (unsigned)(ROUNDS * REPEAT),  \
				(EVERY));                                                      \
			return 1;                                                              \
		}                                                                              \
	} while (0)

	/* Baseline: the wrapper restoring a frame and tail-calling a no-op. */
	frame_for(fr, &f4, 0x10);
	set_packet(&c, fr, 0);
	set_target(&c, c.noop_fd);
	RUN("xdp_ns_wrapper_baseline", "wrapper only (restore + tail call)", wrap_fd, XDP_TX,
	    REPEAT, 0, .reason = -1, .ctr = -1, .ctr2 = -1);
	base = ns;
	/* References: an empty XDP program run directly (what
	 * BPF_PROG_TEST_RUN itself costs per iteration), and the wrapper
	 * tail-calling a program that only moves the head for a 20-byte outer
	 * header (the floor of any encapsulating balancer).
	 */
	RUN("xdp_ns_empty_direct", "empty XDP program, run directly", c.noop_fd, XDP_TX, REPEAT, 0,
	    .reason = -1, .ctr = -1, .ctr2 = -1);
	set_target(&c, bpf_program__fd(c.wrap->progs.maglev_bench_adjust));
	RUN("xdp_ns_adjust_floor", "adjust_head(-20) only (encapsulation floor)", wrap_fd, XDP_TX,
	    REPEAT, 0, .reason = -1, .ctr = -1, .ctr2 = -1);
	set_target(&c, bpf_program__fd(c.wrap->progs.maglev_bench_floor));
	frame_for(fr, &f4, 0x10);
	set_packet(&c, fr, 0);
	RUN("xdp_ns_forwarder_floor", "minimal IPv4 forwarder (floor, see maglev_bench.bpf.c)",
	    wrap_fd, XDP_TX, REPEAT, 0, .reason = -1, .ctr = -1, .ctr2 = -1);
	set_target(&c, c.lb_fd);

	/* Established: a warm-up pass creates the entry, then every
	 * measured iteration hits.
	 */
	if (WANT("xdp_ns_established_v4")) {
		frame_for(fr, &f4, 0x10);
		set_packet(&c, fr, 0);
		WARM();
		RUN("xdp_ns_established_v4", "established flow v4 (conn hit, IPIP)", wrap_fd,
		    XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_HIT, .ctr2 = -1);
	}
	/* Hot flows on (issue 35), the same packet: the default sampling,
	 * then every packet sampled; the off case is the one above, in the same
	 * run. The samples counted prove the trackers ran.
	 */
	if (WANT("xdp_ns_established_v4") && !getenv("XDP_BENCH_NO_HOT")) {
		HOT_RUN("xdp_ns_established_v4_hot", "established v4, hot flows on (1 in 16)", 0,
			MAGLEV_HOT_SAMPLE_DEFAULT);
		HOT_RUN("xdp_ns_established_v4_hot_every",
			"established v4, hot flows, every packet", 0, 1);
	}
	if (WANT("xdp_ns_established_v6")) {
		frame_for(fr, &f6, 0x10);
		set_packet(&c, fr, 0);
		WARM();
		RUN("xdp_ns_established_v6", "established flow v6 (conn hit, IPIP)", wrap_fd,
		    XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_HIT, .ctr2 = -1);
	}
	/* The IPv6 hit has the most live state around the count: measured
	 * too (VIP id 1).
	 */
	if (WANT("xdp_ns_established_v6") && !getenv("XDP_BENCH_NO_HOT"))
		HOT_RUN("xdp_ns_established_v6_hot", "established v6, hot flows on (1 in 16)", 1,
			MAGLEV_HOT_SAMPLE_DEFAULT);

	/* Second chance: the same ACK every iteration, never recorded (a flow
	 * that carries its slot's previous owner): VIP lookup, pick, previous
	 * owner, GUE with the 20-byte private field.
	 */
	if (WANT("xdp_ns_second_chance_v4")) {
		struct flow fs = f4;

		fs.dport = 81;
		frame_for(fr, &fs, 0x10);
		set_packet(&c, fr, 0);
		RUN("xdp_ns_second_chance_v4", "miss v4 carrying a previous owner (GUE + 20 B)",
		    wrap_fd, XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_SC_CARRIED, .ctr2 = MAGLEV_CTR_CONN_MISS);
	}

	/* New flow: every iteration a SYN from a client address never seen
	 * before, into an emptied table with room to spare: hash, pick and a
	 * genuine insert, no eviction (measure() checks the table holds one
	 * entry per iteration after each round).
	 */
	if (WANT("xdp_ns_newflow_v4")) {
		frame_for(fr, &f4, 0x02);
		set_packet(&c, fr, 14 + 12);
		RUN("xdp_ns_newflow_v4", "new flow v4 (SYN, new tuple: pick + insert)", wrap_fd,
		    XDP_TX, repeat_new, 1, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_MISS, .ctr2 = MAGLEV_CTR_CONN_INSERT);
	}
	if (WANT("xdp_ns_newflow_v6")) {
		frame_for(fr, &f6, 0x02);
		set_packet(&c, fr, 14 + 8 + 12);
		RUN("xdp_ns_newflow_v6", "new flow v6 (SYN, new tuple: pick + insert)", wrap_fd,
		    XDP_TX, repeat_new, 1, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_MISS, .ctr2 = MAGLEV_CTR_CONN_INSERT);
	}

	/* Bounded loads, side by side with the new flow above: every fourth
	 * backend marked over its cap, so about a quarter of the new flows
	 * probe (seeded slots until one is under cap). Marks cleared after.
	 */
	if (WANT("xdp_ns_newflow_v4_bounded")) {
		for (i = 1; i <= NBACKENDS; i += 4)
			if (maglev_dp_overcap_set(c.dp, (uint32_t)i, true))
				return 1;
		frame_for(fr, &f4, 0x02);
		set_packet(&c, fr, 14 + 12);
		RUN("xdp_ns_newflow_v4_bounded", "new flow v4, 1 in 4 backends over cap (probes)",
		    wrap_fd, XDP_TX, repeat_new, 1, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_MISS, .ctr2 = MAGLEV_CTR_CONN_INSERT);
		for (i = 1; i <= NBACKENDS; i += 4)
			if (maglev_dp_overcap_set(c.dp, (uint32_t)i, false))
				return 1;
	}

	/* The same SYN again and again (retransmits, port reuse): its entry
	 * exists and names the fresh pick. Counted as a hit when the entry is
	 * refreshed in place, as an insert when it is rewritten.
	 */
	if (WANT("xdp_ns_synrepeat_v4")) {
		frame_for(fr, &f4, 0x02);
		set_packet(&c, fr, 0);
		WARM();
		RUN("xdp_ns_synrepeat_v4", "repeated SYN v4 (entry exists, same pick)", wrap_fd,
		    XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_HIT, .ctr2 = MAGLEV_CTR_CONN_INSERT, .either = 1);
	}
	if (WANT("xdp_ns_synrepeat_v6")) {
		frame_for(fr, &f6, 0x02);
		set_packet(&c, fr, 0);
		WARM();
		RUN("xdp_ns_synrepeat_v6", "repeated SYN v6 (entry exists, same pick)", wrap_fd,
		    XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_HIT, .ctr2 = MAGLEV_CTR_CONN_INSERT, .either = 1);
	}

	/* Production scale: every way of the table holds a live flow (1M by
	 * default) and each packet is an ACK of a different one, cycling
	 * through all of them in an order random to the table (cycle_flows):
	 * a hit every iteration, its bucket a cache and TLB miss. Net of the
	 * wrapper cycling the same way into the no-op program.
	 */
	if (WANT("xdp_ns_established_large")) {
		static const struct {
			const char *key, *what;
			int family;
			uint32_t off;
		} lc[] = {
			{"xdp_ns_established_large_v4",
			 "established v4, table full, each pkt a new flow", P_AF4, 14 + 12},
			{"xdp_ns_established_large_v6",
			 "established v6, table full, each pkt a new flow", P_AF6, 14 + 8 + 12},
		};
		size_t k;

		/* The memory references right before and after (their mean):
		 * the machine's load moves them a lot, as it does the cases.
		 */
		mem_ns = mem_dependent_load_ns(0);
		mem_bucket_ns = mem_bucket_load_ns();
		/* The wrapper's cycle position is per CPU: stay on one. */
		if (pin_self(0, &cpus_saved))
			return 1;
		for (k = 0; k < sizeof(lc) / sizeof(lc[0]); k++) {
			const struct flow *fl = lc[k].family == P_AF4 ? &f4 : &f6;
			long nf = cycle_flows(&c, fl);

			if (nf <= 0 || cycle_fill(&c, fl, lc[k].off, (uint32_t)nf)) {
				fprintf(stderr, "%s: no cycle of flows\n", lc[k].key);
				return 1;
			}
			large_flows = (uint32_t)nf;
			frame_for(fr, fl, 0x10);
			set_packet_n(&c, fr, lc[k].off, (uint32_t)nf);
			if (k == 0) {
				set_target(&c, c.noop_fd);
				RUN("xdp_ns_wrapper_baseline_cycle",
				    "wrapper cycling through the flows (restore + tail call)",
				    wrap_fd, XDP_TX, REPEAT, 0, .reason = -1, .ctr = -1,
				    .ctr2 = -1);
				base_cycle = ns;
				set_target(&c, c.lb_fd);
			}
			RUN(lc[k].key, lc[k].what, wrap_fd, XDP_TX, REPEAT, 0,
			    .reason = MAGLEV_REASON_TX_FORWARD, .ctr = MAGLEV_CTR_CONN_HIT,
			    .ctr2 = -1);
			if (k == 0 && measure_2cpu(&c, wrap_fd, two) == 0)
				two_ok = 1;
		}
		sched_setaffinity(0, sizeof(cpus_saved), &cpus_saved);
		mem_ns = (mem_ns + mem_dependent_load_ns(0)) / 2;
		mem_bucket_ns = (mem_bucket_ns + mem_bucket_load_ns()) / 2;
	}

	/* Every packet from a new client address (ACKs: lookup miss, pick,
	 * insert). Run after the large cases, into the table they leave full:
	 * every insert evicts (checked).
	 */
	if (WANT("xdp_ns_newsource_v4")) {
		frame_for(fr, &f4, 0x10);
		set_packet(&c, fr, 14 + 12);
		if (!large_flows) {
			long nf = cycle_flows(&c, &f4);

			if (pin_self(0, &cpus_saved) || nf <= 0 ||
			    cycle_fill(&c, &f4, 14 + 12, (uint32_t)nf))
				return 1;
			sched_setaffinity(0, sizeof(cpus_saved), &cpus_saved);
			large_flows = (uint32_t)nf;
			frame_for(fr, &f4, 0x10);
		}
		set_packet(&c, fr, 14 + 12);
		maglev_dp_counter_stats(c.dp, ev0);
		RUN("xdp_ns_newsource_v4", "every packet a new source v4 (miss, insert, evict)",
		    wrap_fd, XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_MISS, .ctr2 = MAGLEV_CTR_CONN_INSERT);
		maglev_dp_counter_stats(c.dp, ev1);
		if (large_flows && ev1[MAGLEV_CTR_CONN_EVICT] - ev0[MAGLEV_CTR_CONN_EVICT] !=
					   (uint64_t)REPEAT * ROUNDS) {
			fprintf(stderr,
				"path check: not every new source evicted (table not full)\n");
			return 1;
		}
	}
	if (WANT("xdp_ns_newsource_v6")) {
		frame_for(fr, &f6, 0x10);
		set_packet(&c, fr, 14 + 8 + 12);
		RUN("xdp_ns_newsource_v6", "every packet a new source v6 (miss, insert, evict)",
		    wrap_fd, XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_MISS, .ctr2 = MAGLEV_CTR_CONN_INSERT);
	}

	/* The same flood with the new-flow limit on: forwarded, mostly not
	 * inserted.
	 */
	if (WANT("xdp_ns_newsource_limited_v4")) {
		if (set_limit(&c, 125000))
			return 1;
		frame_for(fr, &f4, 0x10);
		set_packet(&c, fr, 14 + 12);
		RUN("xdp_ns_newsource_limited_v4", "new source v4, new_flow_limit 125k/s/CPU",
		    wrap_fd, XDP_TX, REPEAT, 0, .reason = MAGLEV_REASON_TX_FORWARD,
		    .ctr = MAGLEV_CTR_CONN_MISS, .ctr2 = -1);
		limited_skips = skips;
		if (set_limit(&c, 0))
			return 1;
	}

	/* What a flood costs established flows (issue 14 item 7): established
	 * v4 packets interleaved with batches of new-source SYNs, of IPv4
	 * fragments (slow path) with slow_path_limit 0 (unlimited) and with
	 * the default, side by side in this run.
	 */
	if (WANT("xdp_ns_flood")) {
		uint8_t est[FRAME], syn[FRAME], frag[FRAME];
		double e, fl;

		frame_for(est, &f4, 0x10);
		frame_for(syn, &f4, 0x02);
		syn[14 + 15] ^= 0x40; /* another source range than the flow's */
		frame_for(frag, &f4, 0x10);
		put16(frag + 14 + 6, 0x2000);
		put16(frag + 14 + 10, 0);
		put16(frag + 14 + 10, csum_finish(csum_add(0, frag + 14, 20)));
		set_packet(&c, est, 0);
		WARM();
#define FLOOD(KEY, WHAT, FKEY, FWHAT, FL, VARY)                       \
	do {                                                          \
		if (interleaved(&c, wrap_fd, est, FL, VARY, &e, &fl)) \
			return 1;                                     \
		res[n++] = (struct result){KEY, WHAT, e};             \
		if (FKEY[0])                                          \
			res[n++] = (struct result){FKEY, FWHAT, fl};  \
	} while (0)
		if (set_slow_path_limit(&c, 0))
			return 1;
		FLOOD("xdp_ns_flood_none_est_v4", "established v4, no flood (same batches)", "", "",
		      NULL, 0);
		FLOOD("xdp_ns_flood_newflow_est_v4", "established v4 amid a new-source SYN flood",
		      "xdp_ns_flood_newflow_pkt", "  the SYN flood itself, per packet", syn,
		      14 + 12);
		FLOOD("xdp_ns_flood_frag_est_v4", "established v4 amid a fragment flood, no budget",
		      "xdp_ns_flood_frag_pkt", "  the fragments (XDP_PASS), per packet", frag, 0);
		if (set_slow_path_limit(&c, MAGLEV_SLOW_PATH_LIMIT_DEFAULT))
			return 1;
		FLOOD("xdp_ns_flood_frag_budget_est_v4",
		      "established v4 amid a fragment flood, budget 20k/s",
		      "xdp_ns_flood_frag_budget_pkt",
		      "  the fragments (mostly dropped), per packet", frag, 0);
		if (set_slow_path_limit(&c, 0))
			return 1;
#undef FLOOD
	}

	/* Not for a VIP: through the wrapper (comparable) and direct (the
	 * frame is not modified, so no restore is needed).
	 */
	if (WANT("xdp_ns_nonvip")) {
		struct flow g = f4;

		g.dst[3] = 99;
		frame_for(fr, &g, 0x10);
		set_packet(&c, fr, 0);
		RUN("xdp_ns_nonvip", "non-VIP v4 (XDP_PASS)", wrap_fd, XDP_PASS, REPEAT, 0,
		    .reason = MAGLEV_REASON_PASS_NOT_VIP, .ctr = -1, .ctr2 = -1);
		RUN("xdp_ns_nonvip_direct", "non-VIP v4, balancer run directly", c.lb_fd, XDP_PASS,
		    REPEAT, 0, .reason = MAGLEV_REASON_PASS_NOT_VIP, .ctr = -1, .ctr2 = -1);
	}

	/* Last: the decap cases move this process into a namespace of its own. */
	if (WANT("xdp_ns_decap")) {
		static const struct {
			const char *key, *what;
			int prev, sport_off, action;
			uint32_t ctr;
		} dc[] = {
			{"xdp_ns_decap_gue", "decap: plain GUE (no socket lookup)", 0, 0, XDP_PASS,
			 MAGLEV_DECAP_DONE},
			{"xdp_ns_decap_sc_local", "decap: previous owner carried, socket found", 1,
			 0, XDP_PASS, MAGLEV_DECAP_SC_LOCAL},
			{"xdp_ns_decap_sc_redirect",
			 "decap: previous owner carried, no socket: sent on (strict source)", 1, 1,
			 XDP_TX, MAGLEV_DECAP_SC_REDIRECT},
		};
		struct decap_bench db = {0};
		struct flow fd4;
		size_t k;

		client_flow(&fd4, P_AF4);
		ret = decap_setup(&db, &fd4);
		if (ret) {
			fprintf(stderr, "decap setup: %s\n", strerror(-ret));
			return 1;
		}
		set_target(&c, bpf_program__fd(db.skel->progs.maglev_decap));
		for (k = 0; k < sizeof(dc) / sizeof(dc[0]); k++) {
			struct flow fl = fd4;
			uint64_t before = decap_ctr(&db, dc[k].ctr);

			fl.sport += (uint16_t)dc[k].sport_off;
			/* Only strict mode sends on (include/maglev_decap.h). */
			if (dc[k].action == XDP_TX && decap_strict(&db)) {
				fprintf(stderr, "decap strict mode: %s\n", strerror(errno));
				return 1;
			}
			decap_frame(fr, &fl, dc[k].prev);
			set_packet(&c, fr, 0);
			RUN(dc[k].key, dc[k].what, wrap_fd, (uint32_t)dc[k].action, REPEAT, 0,
			    .reason = -1, .ctr = -1, .ctr2 = -1);
			/* The path check measure() makes for the balancer. */
			if (decap_ctr(&db, dc[k].ctr) - before != (uint64_t)REPEAT * ROUNDS) {
				fprintf(stderr, "path check: %s moved by %llu\n", dc[k].key,
					(unsigned long long)(decap_ctr(&db, dc[k].ctr) - before));
				return 1;
			}
		}
		maglev_decap__destroy(db.skel);
	}

	if (mem_ns <= 0) {
		mem_ns = mem_dependent_load_ns(0);
		mem_bucket_ns = mem_bucket_load_ns();
	}
	mem_huge_ns = mem_dependent_load_ns(1);
	mem_indep_ns = mem_independent_load_ns();
	printf("XDP balancer, BPF_PROG_TEST_RUN repeat=%d x %d rounds (median; new flow: %d x %d\n"
	       "into an emptied table), %d-byte frames, %d backends, connection table for %u\n"
	       "flows.\n"
	       "Method: wrapper moves the head back (bpf_xdp_adjust_head every iteration),\n"
	       "restores 80 header bytes and tail-calls the balancer; counters checked: every\n"
	       "iteration took the path named. net = total - wrapper.\n"
	       "verified_insns: balancer %u, wrapper %u\n\n",
	       REPEAT, ROUNDS, repeat_new, ROUNDS, FRAME, NBACKENDS, conn_size,
	       verified_insns(c.lb_fd), verified_insns(wrap_fd));
	printf("%-52s %10s %10s\n", "case", "ns/pkt", "net ns");
	js = json_object_new_object();
	for (i = 0; i < n; i++) {
		int wrapped = strcmp(res[i].key, "xdp_ns_nonvip_direct") &&
			      strcmp(res[i].key, "xdp_ns_empty_direct") &&
			      strcmp(res[i].key, "xdp_ns_wrapper_baseline") &&
			      strcmp(res[i].key, "xdp_ns_wrapper_baseline_cycle");
		/* The large cases against the wrapper cycling as they do. */
		double b = strstr(res[i].key, "_large_") ? base_cycle : base;
		char netkey[96];

		if (wrapped) {
			printf("%-52s %10.1f %10.1f\n", res[i].what, res[i].ns, res[i].ns - b);
			snprintf(netkey, sizeof(netkey), "%s_net", res[i].key);
			json_object_object_add(js, netkey, json_object_new_double(res[i].ns - b));
		} else {
			printf("%-52s %10.1f %10s\n", res[i].what, res[i].ns, "-");
		}
		json_object_object_add(js, res[i].key, json_object_new_double(res[i].ns));
	}
	if (find(res, n, "xdp_ns_established_v4") > 0 && find(res, n, "xdp_ns_newflow_v4") > 0)
		printf("\nIPv6/IPv4 (total): established %.2f, new flow %.2f\n",
		       find(res, n, "xdp_ns_established_v6") /
			       find(res, n, "xdp_ns_established_v4"),
		       find(res, n, "xdp_ns_newflow_v6") / find(res, n, "xdp_ns_newflow_v4"));
	/* Hot flows' cost on the established path, on minus off, this run. */
	if (find(res, n, "xdp_ns_established_v4_hot") > 0) {
		double off = find(res, n, "xdp_ns_established_v4"),
		       on = find(res, n, "xdp_ns_established_v4_hot"),
		       every = find(res, n, "xdp_ns_established_v4_hot_every");

		printf("established v4, hot flows off %.2f, on (1 in %d) %.2f (+%.2f), every "
		       "packet "
		       "%.2f (+%.2f) ns\n",
		       off, MAGLEV_HOT_SAMPLE_DEFAULT, on, on - off, every, every - off);
		json_object_object_add(js, "xdp_ns_hot_cost_v4", json_object_new_double(on - off));
		json_object_object_add(js, "xdp_ns_hot_every_cost_v4",
				       json_object_new_double(every - off));
	}
	if (find(res, n, "xdp_ns_established_v6_hot") > 0) {
		double off = find(res, n, "xdp_ns_established_v6"),
		       on = find(res, n, "xdp_ns_established_v6_hot");

		printf("established v6, hot flows off %.2f, on (1 in %d) %.2f (+%.2f) ns\n", off,
		       MAGLEV_HOT_SAMPLE_DEFAULT, on, on - off);
		json_object_object_add(js, "xdp_ns_hot_cost_v6", json_object_new_double(on - off));
	}
	if (find(res, n, "xdp_ns_newflow_v4") > 0 &&
	    find(res, n, "xdp_ns_newflow_v4_bounded") > 0) {
		printf("new flow v4, bounded loads (1 in 4 backends over cap) / off: %.2f\n",
		       find(res, n, "xdp_ns_newflow_v4_bounded") /
			       find(res, n, "xdp_ns_newflow_v4"));
		json_object_object_add(
			js, "xdp_ratio_newflow_v4_bounded_over_off",
			json_object_new_double(find(res, n, "xdp_ns_newflow_v4_bounded") /
					       find(res, n, "xdp_ns_newflow_v4")));
	}
	if (find(res, n, "xdp_ns_newflow_v4") > 0 || find(res, n, "xdp_ns_newflow_v6") > 0)
		printf("new flow: %llu of the new-flow inserts were evicted by a full bucket\n",
		       (unsigned long long)c.evicted);
	if (find(res, n, "xdp_ns_newsource_limited_v4") > 0)
		printf("new-flow limit: %llu of %d inserts skipped in the limited run\n",
		       (unsigned long long)limited_skips, REPEAT * ROUNDS);
	printf("memory: one dependent load at random in a buffer the size of the connection\n"
	       "table (%zu MB, 4 KiB pages) costs %.1f ns here\n",
	       conn_table_bytes() >> 20, mem_ns);
	json_object_object_add(js, "mem_ns_dependent_load_conn_table",
			       json_object_new_double(mem_ns));
	printf("the same chain through table-shaped buckets, the tag word then the end of\n"
	       "a way's slot (two dependent loads a bucket): %.1f ns a bucket (%.2fx)\n",
	       mem_bucket_ns, mem_ns > 0 ? mem_bucket_ns / mem_ns : 0);
	json_object_object_add(js, "mem_ns_dependent_load_conn_bucket",
			       json_object_new_double(mem_bucket_ns));
	printf("the same single-line chain with 2 MB pages (madvise): %.1f ns\n", mem_huge_ns);
	json_object_object_add(js, "mem_ns_dependent_load_conn_table_2m",
			       json_object_new_double(mem_huge_ns));
	printf("independent loads at random lines of that buffer: %.1f ns each\n", mem_indep_ns);
	json_object_object_add(js, "mem_ns_independent_load_conn_table",
			       json_object_new_double(mem_indep_ns));
	if (large_flows)
		printf("large cases: %u live flows (every way of the table), each packet the "
		       "next\n",
		       large_flows);
	if (two_ok) {
		/* Packets/s of the balancer (net) on each CPU, added up. */
		double one = find(res, n, "xdp_ns_established_large_v4") - base_cycle;
		double agg = 1e9 / (two[0] - base_cycle) + 1e9 / (two[1] - base_cycle);

		printf("established large v4 on both CPUs at once: %.1f and %.1f ns/pkt, net\n"
		       "aggregate %.2f Mpps vs %.2f Mpps on one CPU: %.2fx\n",
		       two[0], two[1], agg / 1e6, 1e3 / one, agg * one / 1e9);
		json_object_object_add(js, "xdp_ns_established_large_v4_2cpu_cpu0",
				       json_object_new_double(two[0]));
		json_object_object_add(js, "xdp_ns_established_large_v4_2cpu_cpu1",
				       json_object_new_double(two[1]));
		json_object_object_add(js, "xdp_mpps_established_large_v4_2cpu_net",
				       json_object_new_double(agg / 1e6));
		json_object_object_add(js, "ratio_established_large_v4_2cpu_vs_1cpu",
				       json_object_new_double(agg * one / 1e9));
	}
	add_ratios(js, res, n, base, base_cycle, mem_ns);
	json_object_object_add(js, "xdp_verified_insns",
			       json_object_new_int64(verified_insns(c.lb_fd)));
	if (json_object_to_file_ext(argv[1], js, JSON_C_TO_STRING_PLAIN)) {
		fprintf(stderr, "write %s failed\n", argv[1]);
		return 1;
	}
	json_object_put(js);
	maglev_bench__destroy(c.wrap);
	maglev_dp_close(c.dp);
	return 0;
}
