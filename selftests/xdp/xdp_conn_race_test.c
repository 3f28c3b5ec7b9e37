// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The connection table under real concurrency (issue 14): two threads
 * pinned to CPU 0 and CPU 1 run the balancer with BPF_PROG_TEST_RUN at the
 * same time, each through its own benchmark wrapper (bpf/maglev_bench.bpf.c:
 * it restores the frame every iteration, so one run is `repeat` packets of
 * one flow, or of a new flow every 256 packets). Runs are long (each test
 * run of an XDP program waits for an RCU grace period when it starts and
 * ends, so short ones would barely overlap).
 *
 * The table has one bucket (4 ways), so every flow of both threads competes
 * for the same ways. Each thread's packets may only leave toward its own
 * VIP, backends and encapsulation. Checked twice: the last frame of every
 * run (outer family, encapsulation, destination), and every packet through
 * the per-CPU per-VIP and per-backend counters, read for each CPU apart:
 * what CPU 0 counted is exactly what the CPU 0 thread sent.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include "fixture.h"
#include "maglev_bench.h" /* the wrapper's packet */
#include "maglev_bench.skel.h"

#define FRAME	128
#define RUN_SEC 6.0

/* Backends 1, 2 (IPv4) serve VIP 1 (IPIP); 3, 4 (IPv6) serve VIP 2 (GUE). */
#define NBE 4

struct wrapper {
	struct maglev_bench *skel;
	int fd, pkt_fd;
};

FIXTURE(race)
{
	struct maglev_dp *dp;
	struct wrapper w[2];
	int prog, ncpus;
	uint8_t be[NBE + 1][16];
	struct flow vip1, vip2; /* base flows of each VIP */
};

static int wrapper_open(struct wrapper *w, int prog)
{
	uint32_t zero = 0;

	w->skel = maglev_bench__open_and_load();
	if (!w->skel)
		return -1;
	w->fd = bpf_program__fd(w->skel->progs.maglev_bench);
	w->pkt_fd = bpf_map__fd(w->skel->maps.maglev_bench_pkt);
	return bpf_map_update_elem(bpf_map__fd(w->skel->maps.maglev_bench_next), &zero, &prog, 0);
}

FIXTURE_SETUP(race)
{
	/* One bucket: every flow of both threads in the same four ways. */
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = MAGLEV_CONN_WAYS};
	struct maglev_config cfg;
	char err[256] = "";
	int i;

	ASSERT_EQ(0, maglev_dp_open(&self->dp, &o, err, sizeof(err)))
	{
		TH_LOG("maglev_dp_open: %s", err);
	}
	base_config(&cfg);
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	self->prog = maglev_dp_prog_fd(self->dp);
	self->ncpus = libbpf_num_possible_cpus();
	ASSERT_LE(2, self->ncpus);
	ASSERT_LE(2, sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 1; i <= NBE; i++) {
		if (i <= 2)
			v4addr(self->be[i], 192, 0, 2, (uint8_t)(30 + i));
		else
			v6addr(self->be[i], 0xb, 30 + i);
		ASSERT_EQ(0, add_backend(self->dp, i, self->be[i], i <= 2 ? P_AF4 : P_AF6));
	}
	client_flows(&self->vip1, &self->vip2);
	self->vip2 = self->vip1;
	v4addr(self->vip2.dst, 203, 0, 113, 20);
	ASSERT_EQ(0, add_vip(self->dp, self->vip1.dst, P_AF4, 0, IPPROTO_TCP, 1, MAGLEV_ENCAP_IPIP,
			     0));
	ASSERT_EQ(0, add_vip(self->dp, self->vip1.dst, P_AF4, 0, IPPROTO_UDP, 1, MAGLEV_ENCAP_IPIP,
			     0));
	ASSERT_EQ(0, add_vip(self->dp, self->vip2.dst, P_AF4, 0, IPPROTO_TCP, 2, MAGLEV_ENCAP_GUE,
			     6080));
	ASSERT_EQ(0, fill_table(self->dp, 1, 1));
	ASSERT_EQ(0, fill_table(self->dp, 2, 3));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, wrapper_open(&self->w[i], self->prog));
}

FIXTURE_TEARDOWN(race)
{
	int i;

	for (i = 0; i < 2; i++)
		if (self->w[i].skel)
			maglev_bench__destroy(self->w[i].skel);
	maglev_dp_close(self->dp);
}

/* What one thread's frames must look like when they leave. */
struct own {
	uint16_t ethertype; /* outer family */
	uint8_t l4;	    /* outer IP protocol: 4 (IPIP) or 17 (GUE) */
	int lo, hi;	    /* backends */
};

struct runner {
	FIXTURE_DATA(race) * self;
	int cpu;
	struct wrapper *w;
	struct flow *flows; /* replayed in turn, `repeat` packets each */
	int nflows;
	int new_flows; /* another destination port every 256 packets */
	uint32_t repeat;
	struct own own;
	volatile int *stop;
	uint64_t packets, runs, bad_frames;
	int err;
};

/* A frame as it left: which backend (0: none of this thread's), or -1 if
 * its family or encapsulation is not the thread's.
 */
static int frame_backend(const struct runner *r, const uint8_t *out)
{
	uint8_t dst[16];
	int i;

	if (get16(out + 12) != r->own.ethertype)
		return -1;
	if (out[14 + (r->own.ethertype == 0x0800 ? 9 : 6)] != r->own.l4)
		return -1;
	memset(dst, 0, sizeof(dst));
	if (r->own.ethertype == 0x0800)
		memcpy(dst, out + 14 + 16, 4);
	else
		memcpy(dst, out + 14 + 24, 16);
	for (i = r->own.lo; i <= r->own.hi; i++)
		if (!memcmp(dst, r->self->be[i], 16))
			return i;
	return 0;
}

static int bump_vip_gen(struct maglev_dp *dp)
{
	int fd = maglev_dp_map_fd(dp, "maglev_vipgen");
	uint32_t zero = 0, gen;

	if (bpf_map_lookup_elem(fd, &zero, &gen))
		return -1;
	gen++;
	return bpf_map_update_elem(fd, &zero, &gen, 0);
}

static void *runner_loop(void *arg)
{
	struct runner *r = arg;
	struct maglev_bench_pkt p = {.len = FRAME};
	struct client_opts co = {.tcp_flags = 0x10};
	static __thread uint8_t in[FRAME], out[FRAME + 128];
	uint32_t zero = 0;
	cpu_set_t set;
	int k = 0;

	/* The iteration number, big-endian, xored into bytes 35..38 of the
	 * IPv4/TCP frame: sport's low byte, dport, and the sequence number's
	 * first byte, which takes the low 8 bits: 256 packets per flow.
	 */
	if (r->new_flows)
		p.vary_off = 14 + 20 + 1;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		r->err = -1;
		return NULL;
	}
	while (!*r->stop) {
		struct flow f = r->flows[k];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = FRAME,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = r->repeat);

		k = (k + 1) % r->nflows;
		co.payload = FRAME - 14 - 20 - (f.proto == IPPROTO_TCP ? 20 : 8);
		build_client(in, &f, &co);
		memcpy(p.data, in, sizeof(p.data));
		if (bpf_map_update_elem(r->w->pkt_fd, &zero, &p, 0) ||
		    bpf_prog_test_run_opts(r->w->fd, &o) || o.retval != XDP_TX) {
			r->err = -3;
			break;
		}
		r->bad_frames += frame_backend(r, out) <= 0;
		r->packets += r->repeat;
		r->runs++;
	}
	return NULL;
}

/* A third, unpinned thread changing things under the two runners. */
struct changer {
	FIXTURE_DATA(race) * self;
	volatile int *stop;
	int bump_gen; /* bump the VIP generation; else swap both VIPs' tables */
	long changes;
	int err;
};

/* Swap each VIP's table between its two backends, or bump the VIP
 * generation (what any unrelated VIP change does), until stopped.
 */
static void *change_loop(void *arg)
{
	struct changer *s = arg;

	while (!*s->stop) {
		int i = (int)(s->changes & 1);

		if (s->bump_gen ? bump_vip_gen(s->self->dp)
				: fill_table(s->self->dp, 1, 1 + i) ||
					  fill_table(s->self->dp, 2, 3 + i)) {
			s->err = -1;
			break;
		}
		s->changes++;
		if (s->bump_gen)
			usleep(10); /* leave the runners their CPUs */
	}
	return NULL;
}

/* One per-CPU statistic (packets) of map `name`, key `key`, CPU `cpu`. */
static uint64_t percpu_packets(FIXTURE_DATA(race) * self, const char *name, uint32_t key, int cpu)
{
	struct maglev_backend_stats v[256];

	if (self->ncpus > 256 || bpf_map_lookup_elem(maglev_dp_map_fd(self->dp, name), &key, v))
		return UINT64_MAX;
	return v[cpu].packets;
}

static uint64_t percpu_u64(FIXTURE_DATA(race) * self, const char *name, uint32_t key, int cpu)
{
	uint64_t v[256];

	if (self->ncpus > 256 || bpf_map_lookup_elem(maglev_dp_map_fd(self->dp, name), &key, v))
		return UINT64_MAX;
	return v[cpu];
}

/* What one CPU had counted: packets per backend and VIP, forwarded. */
struct cpu_counts {
	uint64_t be[NBE + 1], vip[3], fwd;
};

static void read_counts(FIXTURE_DATA(race) * self, int cpu, struct cpu_counts *c)
{
	uint32_t i;

	for (i = 1; i <= NBE; i++)
		c->be[i] = percpu_packets(self, "maglev_bestat", i, cpu);
	for (i = 1; i <= 2; i++)
		c->vip[i] = percpu_packets(self, "maglev_vipstat", i, cpu);
	c->fwd = percpu_u64(self, "maglev_reasons", MAGLEV_REASON_TX_FORWARD, cpu);
}

/* Everything CPU r->cpu counted since c0 is r's own: its VIP, its
 * backends, and every one of its packets forwarded.
 */
static void check_cpu(struct __test_metadata *_metadata, FIXTURE_DATA(race) * self,
		      const struct runner *r, const struct cpu_counts *c0, uint32_t vip)
{
	uint64_t own = 0, other = 0;
	struct cpu_counts c;
	int i;

	read_counts(self, r->cpu, &c);
	for (i = 1; i <= NBE; i++) {
		if (i >= r->own.lo && i <= r->own.hi)
			own += c.be[i] - c0->be[i];
		else
			other += c.be[i] - c0->be[i];
	}
	TH_LOG("CPU %d: %llu packets in %llu runs; counted at its own backends %llu, at others "
	       "%llu; at its VIP %llu, at the other %llu; wrong last frames %llu",
	       r->cpu, (unsigned long long)r->packets, (unsigned long long)r->runs,
	       (unsigned long long)own, (unsigned long long)other,
	       (unsigned long long)(c.vip[vip] - c0->vip[vip]),
	       (unsigned long long)(c.vip[3 - vip] - c0->vip[3 - vip]),
	       (unsigned long long)r->bad_frames);
	EXPECT_EQ(0, r->bad_frames);
	EXPECT_EQ(0, other);
	EXPECT_EQ(r->packets, own);
	EXPECT_EQ(0, c.vip[3 - vip] - c0->vip[3 - vip]);
	EXPECT_EQ(r->packets, c.vip[vip] - c0->vip[vip]);
	EXPECT_EQ(r->packets, c.fwd - c0->fwd);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Both runners and the changer for RUN_SEC seconds. */
static void run_both(struct __test_metadata *_metadata, struct runner *r, struct changer *s)
{
	pthread_t th[3];
	double t0 = now_s();
	int i;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, runner_loop, &r[i]));
	if (s)
		ASSERT_EQ(0, pthread_create(&th[2], NULL, change_loop, s));
	while (now_s() - t0 < RUN_SEC)
		usleep(50 * 1000);
	*r[0].stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (s)
		pthread_join(th[2], NULL);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, r[i].err);
	if (s)
		ASSERT_EQ(0, s->err);
}

/*
 * CPU 0 replays three established flows of VIP 1 (IPIP, backends 1-2);
 * CPU 1 sends flows of VIP 2 (GUE, backends 3-4), a new one every 256
 * packets, all into the same bucket, so established ways are evicted and
 * refilled by VIP 2 flows while CPU 0 reads them; a third thread swaps both
 * VIPs' tables meanwhile. A packet whose slot was validated and then read
 * again after another CPU refilled it would leave with VIP 2's backend, VIP
 * or encapsulation.
 */
TEST_F_TIMEOUT(race, evicting_cpu_never_redirects_established_flows, 60)
{
	static volatile int stop;
	struct flow est[3];
	struct runner r[2] = {
		{.self = self,
		 .cpu = 0,
		 .w = &self->w[0],
		 .flows = est,
		 .nflows = 3,
		 .repeat = 1 << 20,
		 .own = {0x0800, 4, 1, 2},
		 .stop = &stop},
		{.self = self,
		 .cpu = 1,
		 .w = &self->w[1],
		 .flows = &self->vip2,
		 .nflows = 1,
		 .new_flows = 1,
		 .repeat = 1 << 20,
		 .own = {0x86dd, 17, 3, 4},
		 .stop = &stop},
	};
	struct changer s = {.self = self, .stop = &stop};
	struct cpu_counts c0[2];
	uint64_t ins0;
	int i;

	stop = 0;
	for (i = 0; i < 3; i++) {
		est[i] = self->vip1;
		est[i].sport = (uint16_t)(41000 + i);
	}
	for (i = 0; i < 2; i++)
		read_counts(self, i, &c0[i]);
	run_both(_metadata, r, &s);
	ins0 = percpu_u64(self, "maglev_ctrs", MAGLEV_CTR_CONN_INSERT, 0);
	TH_LOG("%ld table swaps; CPU 0's flows re-inserted %llu times (evicted by CPU 1), "
	       "CPU 1 inserted %llu flows",
	       s.changes, (unsigned long long)ins0,
	       (unsigned long long)percpu_u64(self, "maglev_ctrs", MAGLEV_CTR_CONN_INSERT, 1));
	check_cpu(_metadata, self, &r[0], &c0[0], 1);
	check_cpu(_metadata, self, &r[1], &c0[1], 2);
	/* The race was there to be lost: established ways were taken. */
	ASSERT_LT(10, ins0); /* 100-600 per run here */
	ASSERT_LE(2, s.changes);
	ASSERT_LT(2000000, r[0].packets + r[1].packets);
}

/*
 * Both CPUs replay the same established UDP flow of VIP 1, recorded at
 * backend 1 before VIP 1's table moved to backend 2, while a third thread
 * keeps bumping the VIP generation (what any unrelated VIP change does):
 * both CPUs revalidate the entry's cached VIP at once, over and over, and
 * both refresh its last_seen (every udp_idle_ns/16), each with its own
 * clock reading. Every packet must stay on backend 1; the entry must never
 * expire nor be rewritten. (Both CPUs run the same wrapper program, so its
 * runs follow each other without waiting for RCU.)
 */
TEST_F_TIMEOUT(race, revalidation_never_moves_established_flows, 60)
{
	static volatile int stop;
	struct flow f = self->vip1;
	struct runner r[2] = {{.self = self,
			       .w = &self->w[0],
			       .flows = &f,
			       .nflows = 1,
			       .repeat = 1 << 18,
			       .own = {0x0800, 4, 1, 1},
			       .stop = &stop}};
	struct changer s = {.self = self, .stop = &stop, .bump_gen = 1};
	struct cpu_counts c0[2];
	struct maglev_config cfg;
	uint64_t ins, exp;
	int i;

	stop = 0;
	r[1] = r[0]; /* the same flow, through the same wrapper, on CPU 1 */
	r[1].cpu = 1;
	f.proto = IPPROTO_UDP;
	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &cfg));
	/* Refreshed every 125 ms; long enough that the two threads, both
	 * preempted at once on a busy machine, do not let it expire.
	 */
	cfg.udp_idle_ns = 2000 * 1000000ULL;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	ASSERT_EQ(1, backend_sent_to(self->prog, &f, 0, (const uint8_t(*)[16])self->be, NBE));
	ASSERT_EQ(0, fill_table(self->dp, 1, 2));
	ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
	for (i = 0; i < 2; i++)
		read_counts(self, i, &c0[i]);
	run_both(_metadata, r, &s);
	exp = counter(self->dp, MAGLEV_CTR_CONN_EXPIRED);
	TH_LOG("%ld VIP generation bumps; conn_insert %llu, conn_expired %llu, "
	       "conn_insert_skip %llu",
	       s.changes, (unsigned long long)(counter(self->dp, MAGLEV_CTR_CONN_INSERT) - ins),
	       (unsigned long long)exp,
	       (unsigned long long)counter(self->dp, MAGLEV_CTR_CONN_INSERT_SKIP));
	check_cpu(_metadata, self, &r[0], &c0[0], 1);
	check_cpu(_metadata, self, &r[1], &c0[1], 1);
	EXPECT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
	EXPECT_EQ(0, exp);
	ASSERT_LT(1000, s.changes);
}

TEST_HARNESS_MAIN
