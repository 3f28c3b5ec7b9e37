// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hot flows in the datapath (include/maglev_hot.h): forwarded packets are
 * sampled one in sample_every per VIP and CPU; a sampled packet's flow and
 * source are counted in their buckets with their bytes and backend; off,
 * nothing is counted; the trackers are sized for one VIP unless the
 * datapath was opened with hot_flows, and then cannot be turned on.
 */
#include "fixture.h"

#define VIP 3

FIXTURE(hot)
{
	struct maglev_dp *dp;
	int prog, ncpus;
	struct flow f4, f6;
	struct maglev_hot_vip *v;
};

FIXTURE_SETUP(hot)
{
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = 1 << 16, .hot_flows = true};
	uint8_t be[16];

	self->dp = open_dp_opts(_metadata, &o);
	self->prog = maglev_dp_prog_fd(self->dp);
	self->ncpus = maglev_dp_ncpus(self->dp);
	self->v = calloc((size_t)self->ncpus, sizeof(*self->v));
	ASSERT_NE(NULL, self->v);
	v4addr(be, 192, 0, 2, 7);
	ASSERT_EQ(0, add_backend(self->dp, 5, be, P_AF4));
	client_flows(&self->f4, &self->f6);
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 0, IPPROTO_TCP, VIP, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 0, IPPROTO_TCP, VIP, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, VIP, 5));
}

FIXTURE_TEARDOWN(hot)
{
	free(self->v);
	maglev_dp_close(self->dp);
}

/* n packets of flow f, each payload bytes of TCP data; all forwarded. */
static void send_n(struct __test_metadata *_metadata, FIXTURE_DATA(hot) * self,
		   const struct flow *f, int n, size_t payload, size_t *frame_len)
{
	struct client_opts co = {.payload = payload};
	struct run_result r;
	uint8_t buf[1600];
	size_t len = build_client(buf, f, &co);
	int i;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, run_prog(self->prog, buf, len, &r));
		ASSERT_EQ(XDP_TX, r.action);
	}
	if (frame_len)
		*frame_len = len;
}

/* Sums over CPUs: samples, and the flow's and source's counts and bytes
 * (the larger of the rows' buckets on each CPU, as maglevd merges).
 */
struct tally {
	uint64_t samples, flow_count, flow_bytes, src_count, src_bytes;
	uint32_t flow_be, src_be;
};

static void tally(struct __test_metadata *_metadata, FIXTURE_DATA(hot) * self, const struct flow *f,
		  struct tally *t)
{
	struct maglev_flow_key k;
	int c, i;

	flow_key(&k, f);
	memset(t, 0, sizeof(*t));
	ASSERT_EQ(0, maglev_dp_hot_read(self->dp, VIP, self->v));
	for (c = 0; c < self->ncpus; c++) {
		const struct maglev_hot_vip *v = &self->v[c];
		uint64_t fc = 0, fb = 0, sc = 0, sb = 0;

		t->samples += v->samples;
		for (i = 0; i < MAGLEV_HOT_BUCKETS; i++) {
			const struct maglev_hot_flow *b = &v->flow[i];
			const struct maglev_hot_src *s = &v->src[i];

			if (b->count && maglev_hot_flow_eq(&b->key, &k) && b->count > fc) {
				fc = b->count;
				fb = b->bytes;
				t->flow_be = b->backend_idx;
			}
			if (s->count && s->family == k.family && !memcmp(s->addr, k.src, 16) &&
			    s->count > sc) {
				sc = s->count;
				sb = s->bytes;
				t->src_be = s->backend_idx;
			}
		}
		t->flow_count += fc;
		t->flow_bytes += fb;
		t->src_count += sc;
		t->src_bytes += sb;
	}
}

/* Off (the default): packets forwarded, nothing sampled. */
TEST_F(hot, off_counts_nothing)
{
	struct tally t;

	send_n(_metadata, self, &self->f4, 50, 10, NULL);
	tally(_metadata, self, &self->f4, &t);
	ASSERT_EQ(0, t.samples);
	ASSERT_EQ(0, t.flow_count);
}

/* Every packet: the flow and its source counted exactly, with their bytes
 * and the backend; a second flow of another source has buckets of its own.
 */
TEST_F(hot, every_packet_exact)
{
	struct flow g = self->f4;
	size_t len, glen;
	struct tally t;

	ASSERT_EQ(0, maglev_dp_hot_set(self->dp, 1));
	send_n(_metadata, self, &self->f4, 40, 100, &len);
	g.src[3] ^= 0x40;
	g.sport += 1;
	send_n(_metadata, self, &g, 7, 0, &glen);
	tally(_metadata, self, &self->f4, &t);
	ASSERT_EQ(47, t.samples);
	ASSERT_EQ(40, t.flow_count);
	ASSERT_EQ(40 * len, t.flow_bytes);
	ASSERT_EQ(5, t.flow_be);
	ASSERT_EQ(40, t.src_count);
	ASSERT_EQ(40 * len, t.src_bytes);
	ASSERT_EQ(5, t.src_be);
	tally(_metadata, self, &g, &t);
	ASSERT_EQ(7, t.flow_count);
	ASSERT_EQ(7 * glen, t.flow_bytes);
	ASSERT_EQ(7, t.src_count);
	/* IPv6 too. */
	send_n(_metadata, self, &self->f6, 9, 0, NULL);
	tally(_metadata, self, &self->f6, &t);
	ASSERT_EQ(9, t.flow_count);
	ASSERT_EQ(9, t.src_count);
}

/* One in 8 on average (gaps of 1 to 15 at random): 1600 packets give
 * about 200 samples (standard deviation about 11); the flow has them all.
 */
TEST_F(hot, sampled)
{
	struct tally t;
	uint64_t n;

	ASSERT_EQ(0, maglev_dp_hot_set(self->dp, 8));
	send_n(_metadata, self, &self->f4, 1600, 0, NULL);
	tally(_metadata, self, &self->f4, &t);
	TH_LOG("1600 packets, 1 in 8: %llu samples", (unsigned long long)t.samples);
	ASSERT_GE(t.samples, 150);
	ASSERT_LE(t.samples, 250);
	ASSERT_EQ(t.samples, t.flow_count);
	/* Off again: no more samples. */
	n = t.samples;
	ASSERT_EQ(0, maglev_dp_hot_set(self->dp, 0));
	send_n(_metadata, self, &self->f4, 80, 0, NULL);
	tally(_metadata, self, &self->f4, &t);
	ASSERT_EQ(n, t.samples);
}

/* Periodic traffic is not aliased: a flow sending every tenth packet of
 * the VIP, sampled one in 4, holds about a tenth of the samples (with a
 * fixed gap of 4 it held one in five or none).
 */
TEST_F(hot, periodic_not_aliased)
{
	struct flow g = self->f4;
	struct tally t;
	int i;

	g.src[3] ^= 0x40;
	ASSERT_EQ(0, maglev_dp_hot_set(self->dp, 4));
	for (i = 0; i < 4000; i++)
		send_n(_metadata, self, i % 10 == 3 ? &self->f4 : &g, 1, 0, NULL);
	tally(_metadata, self, &self->f4, &t);
	TH_LOG("%llu of %llu samples", (unsigned long long)t.flow_count,
	       (unsigned long long)t.samples);
	ASSERT_GE(t.flow_count * 100, t.samples * 5);
	ASSERT_LE(t.flow_count * 100, t.samples * 15);
}

/* A heavy flow among many light ones keeps its bucket: 1000 packets of it
 * interleaved with 3000 of 1000 other flows, every packet sampled.
 */
TEST_F(hot, heavy_survives_mice)
{
	struct flow g = self->f4;
	struct tally t;
	int i;

	ASSERT_EQ(0, maglev_dp_hot_set(self->dp, 1));
	for (i = 0; i < 1000; i++) {
		send_n(_metadata, self, &self->f4, 1, 0, NULL);
		g.sport = (uint16_t)(20000 + (i * 3) % 1000);
		g.src[3] = (uint8_t)(i % 120);
		send_n(_metadata, self, &g, 3, 0, NULL);
	}
	tally(_metadata, self, &self->f4, &t);
	/* Collisions may take a few counts off (HeavyKeeper's decay). */
	ASSERT_GE(t.flow_count, 950);
	ASSERT_LE(t.flow_count, 1000);
}

static uint32_t verified_insns(struct maglev_dp *dp)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(maglev_dp_prog_fd(dp), &info, &len))
		return 0;
	return info.verified_insns;
}

/* Opened without hot_flows: the trackers hold no VIP, stay off, and the
 * verifier dropped their code (fewer instructions verified than with it).
 */
TEST(hot_not_sized)
{
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = 1 << 16, .hot_flows = true};
	struct maglev_dp *dp = open_dp(_metadata), *on = open_dp_opts(_metadata, &o);
	struct maglev_hot_vip *v = calloc((size_t)maglev_dp_ncpus(dp), sizeof(*v));

	ASSERT_NE(NULL, v);
	ASSERT_EQ(-ENOSPC, maglev_dp_hot_set(dp, 16));
	ASSERT_EQ(0, maglev_dp_hot_set(dp, 0));
	ASSERT_EQ(-ENOENT, maglev_dp_hot_read(dp, VIP, v));
	TH_LOG("verified instructions: off %u, on %u", verified_insns(dp), verified_insns(on));
	ASSERT_LT(verified_insns(dp), verified_insns(on));
	free(v);
	maglev_dp_close(on);
	maglev_dp_close(dp);
}

TEST_HARNESS_MAIN
