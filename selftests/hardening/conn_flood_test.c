// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Connection-table flood (issue 7, resource limits): millions of new flows
 * (a SYN flood from ever new IPv6 sources) through the real XDP program with
 * BPF_PROG_TEST_RUN, into a deliberately small table (16,384 flows), while
 * established flows keep sending.
 *
 * The flood goes through the benchmark wrapper (bpf/maglev_bench.bpf.c): with
 * `repeat` it restores the frame every iteration, XORs the iteration number
 * into the low word of the client's address and tail-calls the balancer, so
 * every iteration is a new flow whose tuple the test knows. The Maglev pick of
 * each is computed here (include/maglev_hash.h + the table builder) and the
 * per-backend packet counters must match those picks exactly: every flood
 * flow was forwarded (XDP_TX) to its correct backend while the table was
 * full.
 *
 * The established flows are chosen so that their recorded backend is NOT the
 * current table's pick (they started before a table change that drained
 * their backend). Each of their packets must go to the recorded backend
 * while the entry lives, or to the current pick once the flood evicted it,
 * and never flip back: never anywhere else.
 *
 *  - unlimited: every new flow is inserted (conn_insert), the table ends up
 *    full, the flood evicts itself (conn_evict) and no established flow
 *    loses its entry (not-recently-used replacement), but in a bucket that
 *    four established flows share (the set-up puts at most four in one;
 *    with 512 flows in 4,096 buckets, about one run in 25): five flows that
 *    keep sending cannot all be kept in four ways;
 *  - new_flow_limit: inserts above the limit are skipped and counted
 *    (conn_insert_skip), and no established flow loses its backend (but in
 *    such a crowded bucket).
 */
#include <time.h>
#include <unistd.h>
#include "fixture.h"
#include "maglev_table.h"
#include "maglev_conn.h"
#include "maglev_bench.h" /* the wrapper's packet */
#include "maglev_bench.skel.h"

#define NBE	  100
#define NDRAIN	  10	    /* backends 1..NDRAIN leave the table (drained) */
#define NEST	  512	    /* established flows, half IPv4, half IPv6 */
#define CONN_SIZE (1 << 14) /* flows the table holds: 4,096 buckets of 4 */
#define CHUNK	  4096	    /* flood flows per test run: ~1 per bucket */
#define FRAME	  128
#define VARY_OFF  (14 + 8 + 12) /* low word of the IPv6 source address */
#define TIME_MAX  50.0		/* seconds: the flood stops early, and fails */

static uint32_t t1[MAGLEV_TABLE_SIZE], t2[MAGLEV_TABLE_SIZE];
static const struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};

/* A figure for the log; the harness's child _exit()s, so flush. */
#define note(fmt, ...)                                   \
	do {                                             \
		ksft_print_msg(fmt "\n", ##__VA_ARGS__); \
		fflush(stdout);                          \
	} while (0)

FIXTURE(flood)
{
	struct maglev_dp *dp;
	struct maglev_bench *wrap;
	int prog, wrap_fd;
	uint8_t be[NBE + 1][16];
	struct flow est[NEST];
	uint32_t est_be[NEST];	 /* recorded backend (old table's pick) */
	uint32_t est_pick[NEST]; /* current table's pick */
	uint8_t est_lost[NEST];	 /* seen at est_pick: the entry was evicted */
	struct flow base;	 /* the flood's first tuple, before the XOR */
	uint64_t want[NBE + 1];	 /* packets each backend must have got */
	uint64_t be0[NBE + 1];	 /* backend packet counters before the flood */
	uint64_t r0[MAGLEV_REASON_MAX], c0[MAGLEV_CTR_MAX];
	uint64_t est_pkts, est_kept_pkts, est_moved_pkts;
};

/* Backend index a frame went to (outer destination), 0: not XDP_TX. */
static int sent_to(FIXTURE_DATA(flood) * self, const struct flow *f, uint8_t flags)
{
	return backend_sent_to(self->prog, f, flags, (const uint8_t(*)[16])self->be, NBE);
}

/* Established flows that may lose their entry: those in a bucket that at
 * least as many established flows share as it has ways (the flood's flows
 * then compete with four flows that keep sending). -1 if a flow lost its
 * entry anywhere else.
 */
static int crowded_losses(struct __test_metadata *_metadata, FIXTURE_DATA(flood) * self,
			  const char *test)
{
	static uint16_t n[CONN_SIZE / MAGLEV_CONN_WAYS];
	int i, allowed = 0, crowded = 0;
	uint32_t b[NEST];

	memset(n, 0, sizeof(n));
	for (i = 0; i < NEST; i++) {
		b[i] = bucket_of(self->dp, &self->est[i]);
		if (b[i] >= CONN_SIZE / MAGLEV_CONN_WAYS)
			return -1;
		n[b[i]]++;
	}
	for (i = 0; i < CONN_SIZE / MAGLEV_CONN_WAYS; i++) {
		if (n[i] >= MAGLEV_CONN_WAYS) {
			crowded++;
			allowed += n[i];
		}
	}
	note("%s: %d bucket(s) held %d or more established flows (%d flows that may be evicted)",
	     test, crowded, MAGLEV_CONN_WAYS, allowed);
	for (i = 0; i < NEST; i++)
		if (self->est_lost[i] && n[b[i]] < MAGLEV_CONN_WAYS) {
			TH_LOG("established flow %d lost its entry in bucket %u, which holds %u "
			       "established flows",
			       i, b[i], n[b[i]]);
			return -1;
		}
	return allowed;
}

static uint32_t slot_of(const struct flow *f)
{
	struct maglev_flow_key k;
	uint64_t h;

	flow_key(&k, f);
	if (f->family == P_AF4)
		h = maglev_flow_hash_v4(&seed, k.src[0], k.dst[0], k.sport, k.dport, k.proto);
	else
		h = maglev_flow_hash_v6(&seed, k.src, k.dst, k.sport, k.dport, k.proto);
	return maglev_slot(h, MAGLEV_TABLE_SIZE);
}

/* Table of datapath backends lo..hi (spec index + lo = datapath index). */
static int build(FIXTURE_DATA(flood) * self, int lo, int hi, uint32_t *out)
{
	return backends_table((const uint8_t(*)[16])self->be, lo, hi, out);
}

FIXTURE_SETUP(flood)
{
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = CONN_SIZE};
	struct maglev_config cfg;
	struct maglev_backend b;
	struct flow f;
	static uint8_t in_bucket[CONN_SIZE / MAGLEV_CONN_WAYS];
	char err[256] = "";
	int i, n, fam;
	uint32_t zero = 0;

	memset(in_bucket, 0, sizeof(in_bucket));
	ASSERT_EQ(0, maglev_dp_open(&self->dp, &o, err, sizeof(err)))
	{
		TH_LOG("maglev_dp_open: %s", err);
	}
	base_config(&cfg);
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	self->prog = maglev_dp_prog_fd(self->dp);
	for (i = 1; i <= NBE; i++) {
		if (i % 2)
			v4addr(self->be[i], 192, 0, 2, (uint8_t)i);
		else
			v6addr(self->be[i], 0xb, (uint32_t)i);
		ASSERT_EQ(0, add_backend(self->dp, i, self->be[i], i % 2 ? P_AF4 : P_AF6));
	}
	ASSERT_EQ(0, build(self, 1, NBE, t1));
	ASSERT_EQ(0, build(self, NDRAIN + 1, NBE, t2));

	/* VIPs 203.0.113.10:80/tcp and [2001:db8:f::10]:80/tcp, one table. */
	memset(&f, 0, sizeof(f));
	f.proto = IPPROTO_TCP;
	f.dport = 80;
	for (fam = 0; fam < 2; fam++) {
		f.family = fam ? P_AF6 : P_AF4;
		if (fam)
			v6addr(f.dst, 0xf, 0x10);
		else
			v4addr(f.dst, 203, 0, 113, 10);
		ASSERT_EQ(0, add_vip(self->dp, f.dst, f.family, 80, IPPROTO_TCP, 1, 0, 0));
		if (fam)
			self->base = f;
	}
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, t1));

	/* Established flows whose backend the coming table change drains. */
	n = 0;
	for (fam = 0; fam < 2; fam++) {
		struct flow g = fam ? self->base : f;
		uint16_t sport;
		uint32_t bk;

		if (fam)
			v6addr(g.src, 0xc, 7);
		else
			v4addr(g.src, 198, 51, 100, 7);
		g.family = fam ? P_AF6 : P_AF4;
		if (!fam)
			v4addr(g.dst, 203, 0, 113, 10);
		for (sport = 30000; n < NEST / 2 * (fam + 1); sport++) {
			g.sport = sport;
			if (t1[slot_of(&g)] > NDRAIN)
				continue;
			/* A fifth flow in a bucket would evict one of these
			 * before the flood starts (about one fixture in 1,000).
			 */
			bk = bucket_of(self->dp, &g);
			ASSERT_GT(CONN_SIZE / MAGLEV_CONN_WAYS, bk);
			if (in_bucket[bk] >= MAGLEV_CONN_WAYS)
				continue;
			in_bucket[bk]++;
			self->est[n] = g;
			self->est_be[n] = t1[slot_of(&g)];
			self->est_pick[n] = t2[slot_of(&g)];
			ASSERT_EQ(self->est_be[n], sent_to(self, &g, 0x02)); /* SYN */
			ASSERT_EQ(self->est_be[n], sent_to(self, &g, 0x10)); /* ACK */
			n++;
		}
	}
	/* The table change: backends 1..NDRAIN out of the table, draining. */
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, t2));
	for (i = 1; i <= NDRAIN; i++) {
		ASSERT_EQ(0, maglev_dp_backend_get(self->dp, i, &b));
		b.flags = MAGLEV_BACKEND_F_DRAIN;
		ASSERT_EQ(0, maglev_dp_backend_set(self->dp, i, &b));
	}
	for (i = 0; i < NEST; i++) {
		ASSERT_NE(self->est_be[i], self->est_pick[i]);
		ASSERT_EQ(self->est_be[i], sent_to(self, &self->est[i], 0x10));
	}

	/* The flood: SYNs from 2001:db8:c::1:0:0 ^ iteration to the v6 VIP. */
	v6addr(self->base.src, 0xc, 0);
	self->base.src[11] = 1;
	self->base.sport = 40000;
	self->wrap = maglev_bench__open_and_load();
	ASSERT_NE(NULL, self->wrap);
	self->wrap_fd = bpf_program__fd(self->wrap->progs.maglev_bench);
	ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(self->wrap->maps.maglev_bench_next), &zero,
					 &self->prog, 0));
	{
		struct maglev_bench_pkt p = {.len = FRAME, .vary_off = VARY_OFF};
		struct client_opts co = {.tcp_flags = 0x02, .payload = FRAME - 14 - 40 - 20};
		uint8_t fr[FRAME];

		ASSERT_EQ(FRAME, build_client(fr, &self->base, &co));
		memcpy(p.data, fr, sizeof(p.data));
		ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(self->wrap->maps.maglev_bench_pkt),
						 &zero, &p, 0));
	}
}

FIXTURE_TEARDOWN(flood)
{
	if (self->wrap)
		maglev_bench__destroy(self->wrap);
	maglev_dp_close(self->dp);
}

static uint64_t bench_iter(FIXTURE_DATA(flood) * self)
{
	uint64_t v = (uint64_t)-1;
	uint32_t zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(self->wrap->maps.maglev_bench_iter), &zero, &v);
	return v;
}

/* Flows the connection table holds (ways with a tag). */
static long occupancy(FIXTURE_DATA(flood) * self)
{
	int fd = maglev_dp_map_fd(self->dp, "maglev_conns");
	struct maglev_conn_bucket b;
	uint32_t i, w;
	long n = 0;

	for (i = 0; i < CONN_SIZE / MAGLEV_CONN_WAYS; i++) {
		if (bpf_map_lookup_elem(fd, &i, &b))
			return -1;
		for (w = 0; w < MAGLEV_CONN_WAYS; w++)
			n += b.tag[w] != 0;
	}
	return n;
}

static void snap(FIXTURE_DATA(flood) * self)
{
	struct maglev_backend_stats bs;
	int i;

	maglev_dp_reason_stats(self->dp, self->r0);
	maglev_dp_counter_stats(self->dp, self->c0);
	for (i = 1; i <= NBE; i++) {
		maglev_dp_backend_stats(self->dp, i, &bs);
		self->be0[i] = bs.packets;
	}
}

/* One ACK from every established flow: recorded backend, or the current
 * pick once the entry is gone, and then for good.
 */
static void check_established(struct __test_metadata *_metadata, FIXTURE_DATA(flood) * self)
{
	int i, got;

	for (i = 0; i < NEST; i++) {
		got = sent_to(self, &self->est[i], 0x10);
		if (!self->est_lost[i] && got == (int)self->est_be[i]) {
			self->est_kept_pkts++;
		} else if (got == (int)self->est_pick[i]) {
			self->est_lost[i] = 1;
			self->est_moved_pkts++;
		} else {
			TH_LOG("established flow %d went to %d: recorded %u, current pick %u%s", i,
			       got, self->est_be[i], self->est_pick[i],
			       self->est_lost[i] ? " (already re-picked)" : "");
			ASSERT_TRUE(0);
		}
		self->want[got]++;
		self->est_pkts++;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n flood flows in CHUNKs, every established flow checked after each
 * chunk. Returns the seconds the balancer spent on the flood (the kernel's
 * own per-iteration timing of the test runs: time this task waited for the
 * CPU on a busy machine is not in it).
 */
static double flood(struct __test_metadata *_metadata, FIXTURE_DATA(flood) * self, uint64_t n)
{
	static uint8_t out[FRAME + 64];
	double t0 = now_s(), in_flood = 0;
	uint64_t done, it;

	snap(self);
	for (done = 0; done < n; done += CHUNK) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = NULL, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = CHUNK);
		uint64_t i0 = bench_iter(self), i1;
		uint8_t fr[FRAME];
		struct client_opts co = {.tcp_flags = 0x02, .payload = FRAME - 14 - 40 - 20};

		build_client(fr, &self->base, &co);
		o.data_in = fr;
		ASSERT_EQ(0, bpf_prog_test_run_opts(self->wrap_fd, &o));
		in_flood += (double)o.duration * CHUNK * 1e-9;
		ASSERT_EQ(XDP_TX, o.retval);
		i1 = bench_iter(self);
		ASSERT_EQ(i0 + CHUNK, i1);
		/* Where each of these CHUNK flows must have gone. */
		for (it = i0 + 1; it <= i1; it++) {
			struct flow g = self->base;

			g.src[12] ^= (uint8_t)(it >> 24);
			g.src[13] ^= (uint8_t)(it >> 16);
			g.src[14] ^= (uint8_t)(it >> 8);
			g.src[15] ^= (uint8_t)it;
			self->want[t2[slot_of(&g)]]++;
		}
		check_established(_metadata, self);
		ASSERT_GT(TIME_MAX, now_s() - t0);
	}
	return in_flood;
}

/* Every packet since snap() where want[] says; counters add up. */
static void check_counts(struct __test_metadata *_metadata, FIXTURE_DATA(flood) * self, uint64_t n,
			 uint64_t *d)
{
	uint64_t r[MAGLEV_REASON_MAX], c[MAGLEV_CTR_MAX], total = n + self->est_pkts;
	struct maglev_backend_stats bs;
	int i, bad = 0;

	for (i = 1; i <= NBE; i++) {
		ASSERT_EQ(0, maglev_dp_backend_stats(self->dp, i, &bs));
		if (bs.packets - self->be0[i] != self->want[i]) {
			TH_LOG("backend %d: %llu packets, want %llu", i,
			       (unsigned long long)(bs.packets - self->be0[i]),
			       (unsigned long long)self->want[i]);
			bad++;
		}
	}
	ASSERT_EQ(0, bad);
	ASSERT_EQ(0, maglev_dp_reason_stats(self->dp, r));
	ASSERT_EQ(0, maglev_dp_counter_stats(self->dp, c));
	for (i = 0; i < MAGLEV_REASON_MAX; i++)
		ASSERT_EQ(i == MAGLEV_REASON_TX_FORWARD ? total : 0, r[i] - self->r0[i])
		{
			TH_LOG("reason %s", maglev_dp_reason_name(i));
		}
	for (i = 0; i < MAGLEV_CTR_MAX; i++)
		d[i] = c[i] - self->c0[i];
	/* Every VIP packet is a hit or a miss; every miss is inserted or
	 * counted as skipped.
	 */
	ASSERT_EQ(total, d[MAGLEV_CTR_CONN_HIT] + d[MAGLEV_CTR_CONN_MISS]);
	ASSERT_EQ(d[MAGLEV_CTR_CONN_MISS],
		  d[MAGLEV_CTR_CONN_INSERT] + d[MAGLEV_CTR_CONN_INSERT_SKIP]);
	ASSERT_EQ(0, d[MAGLEV_CTR_CONN_REPICK]);
	ASSERT_LE(n, d[MAGLEV_CTR_CONN_MISS]);
}

/* New flows while the table is full: each to the current pick, checked
 * one by one on its encapsulated frame.
 */
static void sample_new_flows(struct __test_metadata *_metadata, FIXTURE_DATA(flood) * self)
{
	struct flow g6 = self->base, g4 = self->est[0];
	uint32_t i;

	g6.src[11] = 2; /* 2001:db8:c::2:0:x, never used by the flood */
	for (i = 0; i < 500; i++) {
		g6.src[14] = (uint8_t)(i >> 8);
		g6.src[15] = (uint8_t)i;
		ASSERT_EQ((int)t2[slot_of(&g6)], sent_to(self, &g6, 0x02));
		g4.sport = (uint16_t)(50000 + i); /* above every established port */
		ASSERT_EQ((int)t2[slot_of(&g4)], sent_to(self, &g4, 0x02));
	}
}

/*
 * No limit: every flood flow is recorded and, once the table is full,
 * evicts another flood flow (each counted: conn_evict), never an
 * established flow that keeps sending: its way's reference bit is set by its
 * packets and cleared only when all four ways of its bucket were used.
 */
TEST_F_TIMEOUT(flood, unlimited, 120)
{
	const uint64_t n = 2u << 20;
	uint64_t d[MAGLEV_CTR_MAX];
	long held0, held;
	double secs;
	int i, kept = 0, allowed;

	held0 = occupancy(self);
	ASSERT_EQ(NEST, held0);
	secs = flood(_metadata, self, n);
	check_counts(_metadata, self, n, d);
	ASSERT_EQ(0, d[MAGLEV_CTR_CONN_INSERT_SKIP]);
	held = occupancy(self);
	/* Full: every way of every bucket holds a flow. */
	ASSERT_EQ(CONN_SIZE, held);
	/* Every insert went into an empty way or evicted exactly one flow. */
	ASSERT_EQ(d[MAGLEV_CTR_CONN_INSERT] - (uint64_t)(held - held0), d[MAGLEV_CTR_CONN_EVICT]);
	for (i = 0; i < NEST; i++)
		kept += !self->est_lost[i];
	note("unlimited: %llu new flows in %.2f s of balancer time (%.2f M flows/s), %llu "
	     "established packets checked between chunks of %d",
	     (unsigned long long)n, secs, n / secs / 1e6, (unsigned long long)self->est_pkts,
	     CHUNK);
	note("unlimited: conn_insert %llu, conn_miss %llu, conn_hit %llu, conn_insert_skip %llu, "
	     "conn_evict %llu; table holds %ld of %d (full)",
	     (unsigned long long)d[MAGLEV_CTR_CONN_INSERT],
	     (unsigned long long)d[MAGLEV_CTR_CONN_MISS],
	     (unsigned long long)d[MAGLEV_CTR_CONN_HIT],
	     (unsigned long long)d[MAGLEV_CTR_CONN_INSERT_SKIP],
	     (unsigned long long)d[MAGLEV_CTR_CONN_EVICT], held, CONN_SIZE);
	note("unlimited: %d of %d established flows kept their recorded backend; the others "
	     "were evicted and re-picked (%llu packets to the recorded backend, %llu to the "
	     "current pick, none elsewhere)",
	     kept, NEST, (unsigned long long)self->est_kept_pkts,
	     (unsigned long long)self->est_moved_pkts);
	allowed = crowded_losses(_metadata, self, "unlimited");
	ASSERT_LE(0, allowed);
	ASSERT_LE(NEST - allowed, kept);
	sample_new_flows(_metadata, self);
}

/*
 * new_flow_limit: beyond the limit the flood is forwarded by the pick but
 * not recorded, and counted (conn_insert_skip); the table keeps its room
 * and established flows keep their backends (but in a crowded bucket, as
 * above).
 */
TEST_F_TIMEOUT(flood, new_flow_limit, 120)
{
	const uint64_t n = 1u << 20;
	const uint32_t limit = 200;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct maglev_config cfg;
	uint64_t d[MAGLEV_CTR_MAX];
	double t0, secs, wall;
	int i, kept = 0, allowed;
	long held;

	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &cfg));
	cfg.new_flow_limit = limit;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	t0 = now_s();
	secs = flood(_metadata, self, n);
	wall = now_s() - t0;
	check_counts(_metadata, self, n, d);
	held = occupancy(self);
	for (i = 0; i < NEST; i++)
		kept += !self->est_lost[i];
	note("new_flow_limit %u/s/CPU: %llu new flows in %.2f s of balancer time (%.2f M "
	     "flows/s), %.1f s wall",
	     limit, (unsigned long long)n, secs, n / secs / 1e6, wall);
	note("new_flow_limit: conn_insert %llu, conn_insert_skip %llu, conn_miss %llu, conn_hit "
	     "%llu, conn_evict %llu; table holds %ld of %d",
	     (unsigned long long)d[MAGLEV_CTR_CONN_INSERT],
	     (unsigned long long)d[MAGLEV_CTR_CONN_INSERT_SKIP],
	     (unsigned long long)d[MAGLEV_CTR_CONN_MISS],
	     (unsigned long long)d[MAGLEV_CTR_CONN_HIT],
	     (unsigned long long)d[MAGLEV_CTR_CONN_EVICT], held, CONN_SIZE);
	note("new_flow_limit: %d of %d established flows kept their recorded backend (%llu "
	     "packets to it, %llu to the current pick, none elsewhere)",
	     kept, NEST, (unsigned long long)self->est_kept_pkts,
	     (unsigned long long)self->est_moved_pkts);
	/* Within the limit: at most limit per started second per CPU. */
	ASSERT_GE((uint64_t)limit * (uint64_t)(wall + 2) * (uint64_t)ncpus,
		  d[MAGLEV_CTR_CONN_INSERT]);
	ASSERT_LT(n - n / 100, d[MAGLEV_CTR_CONN_INSERT_SKIP]);
	/* Extra misses: only established flows that lost their entry. */
	ASSERT_LE(n + (uint64_t)(NEST - kept), d[MAGLEV_CTR_CONN_MISS]);
	ASSERT_GE(n + self->est_moved_pkts, d[MAGLEV_CTR_CONN_MISS]);
	/* An insert within the limit can still land in a crowded bucket. */
	allowed = crowded_losses(_metadata, self, "new_flow_limit");
	ASSERT_LE(0, allowed);
	ASSERT_LE(NEST - allowed, kept);
	ASSERT_GE(NEST + d[MAGLEV_CTR_CONN_INSERT], held);
	ASSERT_GT(CONN_SIZE / 2, held);
	sample_new_flows(_metadata, self);
}

TEST_HARNESS_MAIN
