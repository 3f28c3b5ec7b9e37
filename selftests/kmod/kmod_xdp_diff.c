// SPDX-License-Identifier: GPL-2.0-only
/*
 * Differential test of the two data planes on the same kernel (the 6.1 VM):
 * the XDP program (loaded through the datapath library, run with
 * BPF_PROG_TEST_RUN) and the slow-path module (asked through LOOKUP, which
 * runs its hook's hash and table code) get the same random seed, backends,
 * VIPs and table; for 10,000 random new flows, both must pick the same
 * backend, and for 4,000 more with three backends marked over cap in both
 * (bounded loads: many spill along the probe sequence). The XDP side's
 * choice is read from the outer destination of the frame it transmits.
 */
#include <sched.h>
#include "fixture.h"
#include "kmod_util.h"

#define NBE    8
#define NFLOWS 10000

FIXTURE(diff)
{
	struct maglev_dp *dp;
	struct slowpath_nl *nl;
	int prog;
	uint8_t be[NBE + 1][16];
};

FIXTURE_SETUP(diff)
{
	int err;

	self->dp = NULL;
	self->nl = NULL;
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	err = slowpath_nl_open(&self->nl);
	if (err == -ENOENT)
		SKIP(_exit(255), "maglev genetlink family not registered (module not loaded)");
	ASSERT_EQ(0, err);
	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
}

FIXTURE_TEARDOWN(diff)
{
	if (self->dp)
		maglev_dp_close(self->dp);
	slowpath_nl_close(self->nl);
}

/* XDP's backend for a flow: the index whose address is the outer destination. */
static int xdp_pick(FIXTURE_DATA(diff) * self, const struct flow *f)
{
	/* A SYN: always a fresh pick. */
	return backend_sent_to(self->prog, f, 0x02, (const uint8_t(*)[16])self->be, NBE);
}

static const uint8_t protos[2] = {IPPROTO_TCP, IPPROTO_UDP};
static uint32_t table[MAGLEV_TABLE_SIZE];
static uint8_t vip4[16], vip6[16];

/* One random seed, backends 1..NBE (odd ones IPv4, even ones IPv6), one
 * random table shared by all-ports VIPs (TCP and UDP, both families), the
 * same in both data planes.
 */
static void configure(struct __test_metadata *_metadata, FIXTURE_DATA(diff) * self, uint64_t *rs)
{
	struct slowpath_config scfg = {};
	struct maglev_config xcfg;
	int i, fam, p;

	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &xcfg));
	xcfg.seed_k0 = scfg.seed.k0 = kmod_rand(rs);
	xcfg.seed_k1 = scfg.seed.k1 = kmod_rand(rs);
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &xcfg));
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &scfg));

	for (i = 1; i <= NBE; i++) {
		struct maglev_backend b = {.flags = MAGLEV_BACKEND_F_UP};

		if (i % 2)
			v4addr(self->be[i], 192, 0, 2, (uint8_t)(20 + i));
		else
			v6addr(self->be[i], 0xb, 20 + i);
		b.family = i % 2 ? MAGLEV_AF_INET : MAGLEV_AF_INET6;
		memcpy(b.addr, self->be[i], 16);
		ASSERT_EQ(0, add_backend(self->dp, i, self->be[i], b.family));
		ASSERT_EQ(0, slowpath_nl_backend_set(self->nl, i, &b));
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		table[i] = 1 + kmod_rand(rs) % NBE;
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, table));

	v4addr(vip4, 203, 0, 113, 10);
	v6addr(vip6, 0xf, 10);
	for (fam = 0; fam < 2; fam++) {
		for (p = 0; p < 2; p++) {
			struct maglev_vip_info info = {.vip_id = 1, .encap = MAGLEV_ENCAP_IPIP};
			struct maglev_vip_key k = {.proto = protos[p]};

			k.family = fam ? MAGLEV_AF_INET6 : MAGLEV_AF_INET;
			memcpy(k.addr, fam ? vip6 : vip4, 16);
			ASSERT_EQ(0, maglev_dp_vip_set(self->dp, &k, &info));
			ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &info));
			ASSERT_EQ(0, slowpath_nl_table_push(self->nl, &k, 1, table,
							    MAGLEV_TABLE_SIZE));
		}
	}
}

/* A random new flow toward one of the VIPs, for both data planes. */
static void random_flow(uint64_t *rs, struct flow *f, struct maglev_flow_key *k)
{
	uint64_t r = kmod_rand(rs);
	int j;

	memset(f, 0, sizeof(*f));
	memset(k, 0, sizeof(*k));
	f->family = r & 1 ? P_AF6 : P_AF4;
	f->proto = protos[(r >> 1) & 1];
	f->sport = (uint16_t)(1024 + kmod_rand(rs) % 64000);
	f->dport = (uint16_t)(1 + kmod_rand(rs) % 65535);
	if (f->family == P_AF4) {
		v4addr(f->src, 198, 51, 100, (uint8_t)(kmod_rand(rs) & 0x7f));
		memcpy(f->dst, vip4, 16);
	} else {
		v6addr(f->src, 0xc, (uint32_t)kmod_rand(rs));
		for (j = 8; j < 12; j++)
			f->src[j] = (uint8_t)kmod_rand(rs);
		memcpy(f->dst, vip6, 16);
	}
	k->family = (uint8_t)f->family;
	k->proto = f->proto;
	memcpy(k->src, f->src, 16);
	memcpy(k->dst, f->dst, 16);
	k->sport = htons(f->sport);
	k->dport = htons(f->dport);
}

/* The table's own pick for a flow (no marks). */
static uint32_t table_pick(const struct maglev_seed *seed, const struct maglev_flow_key *k)
{
	return kmod_expected_pick(seed, k, table, MAGLEV_TABLE_SIZE);
}

TEST_F_TIMEOUT(diff, module_and_xdp_pick_alike_10000_flows, 300)
{
	uint64_t rs = kmod_seed_from_env();
	int i, mismatches = 0, seen[NBE + 1] = {0};

	TH_LOG("MAGLEV_TEST_SEED=0x%llx", (unsigned long long)rs);
	configure(_metadata, self, &rs);
	for (i = 0; i < NFLOWS; i++) {
		struct maglev_flow_key k;
		struct slowpath_lookup got;
		struct flow f;
		int x;

		random_flow(&rs, &f, &k);
		ASSERT_EQ(0, slowpath_nl_lookup(self->nl, &k, &got))
		{
			TH_LOG("lookup: %s", slowpath_nl_errmsg(self->nl));
		}
		x = xdp_pick(self, &f);
		if (x != (int)got.backend_idx && mismatches++ < 5)
			TH_LOG("flow %d: XDP picked %d, module %u", i, x, got.backend_idx);
		if (x > 0)
			seen[x]++;
	}
	EXPECT_EQ(0, mismatches);
	for (i = 1; i <= NBE; i++)
		EXPECT_LT(NFLOWS / NBE / 2, seen[i]); /* every backend used */
}

/*
 * Bounded loads: three of the eight backends marked over cap in both (XDP's
 * maglev_overcap map, the module's OVERCAP_SET). New flows whose pick is
 * marked spill along the same probe sequence: both pick the same backend,
 * and a good share of them is not the table's pick.
 */
TEST_F_TIMEOUT(diff, marked_backends_spill_alike_4000_flows, 300)
{
	static uint8_t marks[MAGLEV_MAX_BACKENDS];
	uint64_t rs = kmod_seed_from_env() ^ 0x5eed;
	int i, mismatches = 0, spilled = 0, to_marked = 0;
	struct slowpath_config scfg;

	TH_LOG("MAGLEV_TEST_SEED=0x%llx", (unsigned long long)rs);
	configure(_metadata, self, &rs);
	ASSERT_EQ(0, slowpath_nl_config_get(self->nl, &scfg));
	memset(marks, 0, sizeof(marks));
	for (i = 0; i < 3; i++) {
		uint32_t idx = 1 + (uint32_t)(kmod_rand(&rs) % NBE);

		marks[idx] = 1;
		ASSERT_EQ(0, maglev_dp_overcap_set(self->dp, idx, true));
	}
	ASSERT_EQ(0, slowpath_nl_overcap_set(self->nl, marks, MAGLEV_MAX_BACKENDS));
	for (i = 0; i < 4000; i++) {
		struct maglev_flow_key k;
		struct slowpath_lookup got;
		struct flow f;
		int x;

		random_flow(&rs, &f, &k);
		ASSERT_EQ(0, slowpath_nl_lookup(self->nl, &k, &got));
		x = xdp_pick(self, &f);
		if (x != (int)got.backend_idx && mismatches++ < 5)
			TH_LOG("flow %d: XDP picked %d, module %u (table: %u)", i, x,
			       got.backend_idx, table_pick(&scfg.seed, &k));
		spilled += x != (int)table_pick(&scfg.seed, &k);
		to_marked += x > 0 && marks[x];
	}
	TH_LOG("%d of 4000 new flows spilled, %d to a marked backend", spilled, to_marked);
	EXPECT_EQ(0, mismatches);
	/* Each pick is marked with probability 3/8 at most (2/8 if two marks
	 * fell on one backend): well over 400 of 4,000 spill.
	 */
	EXPECT_LT(400, spilled);
	EXPECT_GT(10, to_marked); /* only when all 8 probes land on marks */
	for (i = 1; i <= NBE; i++)
		maglev_dp_overcap_set(self->dp, (uint32_t)i, false);
	memset(marks, 0, sizeof(marks));
	EXPECT_EQ(0, slowpath_nl_overcap_set(self->nl, marks, MAGLEV_MAX_BACKENDS));
}

TEST_HARNESS_MAIN
