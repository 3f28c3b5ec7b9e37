// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bounded loads in the slow-path module, inside the 6.1 VM, on the topology
 * of topo.sh: the module gets tables and over-cap marks over netlink
 * (MAGLEV_CMD_OVERCAP_SET), then UDP datagrams of new flows in IPv4 and
 * IPv6 fragments, which only the module forwards, and the backend whose
 * socket receives each datagram (bytes compared) is checked against the
 * reference: the table's pick, or, if that backend is marked, the first
 * unmarked backend of the flow's probe sequence, computed here with the one
 * definition the XDP program uses (include/maglev_bounded.h). A flow whose
 * pick is unmarked, or whose probes all land on marked backends, keeps the
 * pick; cleared marks restore it. Spilled datagrams, and only those, are
 * counted (SPILLED). Malformed marks are refused with a reason
 * and leave the marks as they were. (kmod_xdp_diff checks the module's
 * choice against the XDP program's itself, with marks.)
 */
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "kselftest_harness.h"
#include "kmod_topo.h"
#include "maglev_bounded.h"

#define TABLE_SIZE MAGLEV_TABLE_SIZE
#define PAYLOAD	   2400 /* three fragments of 1,000 bytes or less */

struct bl_vip {
	int family;
	const char *addr;
	uint8_t encap;
	uint32_t base; /* backend indices base+1..base+3 (11..13: over IPv6) */
};

static const struct bl_vip vips[] = {
	{MAGLEV_AF_INET, "198.51.100.10", MAGLEV_ENCAP_IPIP, 0},
	{MAGLEV_AF_INET6, "2001:db8:100::12", MAGLEV_ENCAP_GUE, 10},
};

#define NVIPS ((int)(sizeof(vips) / sizeof(vips[0])))

/* Set up by main() before the tests fork; read-only afterwards. */
static struct maglev_seed g_seed;
static uint32_t *g_tables[NVIPS];
static uint64_t g_rand;

static struct maglev_vip_key vip_key_of(int v)
{
	return kmod_vip_key(vips[v].family, vips[v].addr, IPPROTO_UDP);
}

static int setup(void)
{
	struct slowpath_nl *nl = NULL;
	int v, err;
	uint32_t i;

	err = kmod_lb_setup(&nl, &g_seed, &g_rand, &kmod_topology_up);
	if (err) {
		slowpath_nl_close(nl);
		return err;
	}
	for (v = 0; v < NVIPS && !err; v++) {
		struct maglev_vip_info info = {.encap = vips[v].encap};
		struct maglev_vip_key key = vip_key_of(v);

		if (info.encap == MAGLEV_ENCAP_GUE)
			info.gue_port = htons(KMOD_GUE_PORT);
		g_tables[v] = malloc(TABLE_SIZE * sizeof(uint32_t));
		if (!g_tables[v])
			return -ENOMEM;
		for (i = 0; i < TABLE_SIZE; i++)
			g_tables[v][i] = vips[v].base + 1 + kmod_rand(&g_rand) % 3;
		err = slowpath_nl_vip_set(nl, &key, &info)
			      ?: slowpath_nl_table_push(nl, &key, 1, g_tables[v], TABLE_SIZE);
	}
	if (err)
		fprintf(stderr, "# configuring the module: %s\n", slowpath_nl_errmsg(nl));
	slowpath_nl_close(nl);
	return err;
}

struct bl_ctx {
	struct slowpath_nl *nl;
	int client;
	int rx[KMOD_NBACKENDS][2];
	uint8_t marks[MAGLEV_MAX_BACKENDS]; /* what the module was last given */
	uint8_t payload[PAYLOAD];
	struct kmod_frame frames[KMOD_MAX_FRAGS];
	struct kmod_rx got;
};

/* include/maglev_bounded.h's mark test over the marks the test pushed. */
static int test_marked(const void *ctx, __u32 idx)
{
	const uint8_t *m = ctx;

	return idx < MAGLEV_MAX_BACKENDS && m[idx];
}

static uint64_t flow_hash(const struct maglev_flow_key *f)
{
	if (f->family == MAGLEV_AF_INET)
		return maglev_flow_hash_v4(&g_seed, f->src[0], f->dst[0], f->sport, f->dport,
					   f->proto);
	return maglev_flow_hash_v6(&g_seed, f->src, f->dst, f->sport, f->dport, f->proto);
}

/* The table's pick for flow f of VIP v. */
static uint32_t table_pick(int v, const struct maglev_flow_key *f)
{
	return g_tables[v][maglev_slot(flow_hash(f), TABLE_SIZE)];
}

/* What XDP does with a new flow: the pick, or if marked the probe's pick. */
static uint32_t bounded_pick(const struct bl_ctx *c, int v, const struct maglev_flow_key *f)
{
	uint32_t idx = table_pick(v, f), j;

	if (!c->marks[idx])
		return idx;
	j = maglev_bounded_probe(&g_seed, flow_hash(f), g_tables[v], TABLE_SIZE, test_marked,
				 c->marks);
	return j ? j : idx;
}

/* A new random client flow toward VIP v. */
static void new_flow(int v, struct maglev_flow_key *f)
{
	struct maglev_vip_key key = vip_key_of(v);

	kmod_client_flow(&key, &g_rand, f);
}

static int set_marks(struct bl_ctx *c, const uint32_t *idx, int n);

/* A new flow of VIP 0 whose pick *p, marked alone, spills: its probe's pick. */
static uint32_t spilling_flow(struct bl_ctx *c, struct maglev_flow_key *f, uint32_t *p)
{
	uint32_t want;

	do {
		new_flow(0, f);
		*p = table_pick(0, f);
		if (set_marks(c, p, 1))
			return 0;
		want = bounded_pick(c, 0, f);
	} while (want == *p);
	return want;
}

/* The module's SPILLED counter; ~0 if it cannot be read. */
static uint64_t spilled_count(struct bl_ctx *c)
{
	struct slowpath_stats st;

	return slowpath_nl_stats(c->nl, &st) ? ~0ULL : st.cnt[MAGLEV_STAT_SPILLED];
}

/* Push marks on exactly the indices idx[0..n-1]. */
static int set_marks(struct bl_ctx *c, const uint32_t *idx, int n)
{
	int i;

	memset(c->marks, 0, sizeof(c->marks));
	for (i = 0; i < n; i++)
		c->marks[idx[i]] = 1;
	return slowpath_nl_overcap_set(c->nl, c->marks, MAGLEV_MAX_BACKENDS);
}

/*
 * Send flow f's datagram in fragments; it must reach backend index want
 * whole, from the client, and nowhere else. LOOKUP must name want too.
 */
static void expect_backend(struct __test_metadata *_metadata, struct bl_ctx *c,
			   const struct maglev_flow_key *f, uint32_t want)
{
	struct kmod_shape frag = {.frag = 1000};
	struct slowpath_lookup lk;
	size_t i;
	int n;

	ASSERT_EQ(0, slowpath_nl_lookup(c->nl, f, &lk));
	EXPECT_EQ(want, lk.backend_idx);
	for (i = 0; i < sizeof(c->payload); i++)
		c->payload[i] = (uint8_t)kmod_rand(&g_rand);
	n = kmod_build(f, c->payload, sizeof(c->payload), &frag, (uint32_t)kmod_rand(&g_rand),
		       c->frames);
	ASSERT_EQ(3, n);
	ASSERT_EQ(0, kmod_send_frames(c->client, c->frames, NULL, n));
	ASSERT_EQ(0, kmod_recv_any(c->rx, 3000, &c->got))
	{
		TH_LOG("the datagram reached no backend (want index %u)", want);
	}
	EXPECT_EQ((int)(want % 10) - 1, c->got.backend)
	{
		TH_LOG("the datagram reached backend %d, want index %u (LOOKUP: %u)",
		       c->got.backend + 1, want, lk.backend_idx);
	}
	ASSERT_EQ(sizeof(c->payload), c->got.len);
	EXPECT_EQ(0, memcmp(c->payload, c->got.data, sizeof(c->payload)));
	EXPECT_EQ(0, memcmp(f->src, c->got.src, f->family == MAGLEV_AF_INET ? 4 : 16));
	EXPECT_NE(0, kmod_recv_any(c->rx, 50, &c->got)); /* exactly one */
}

FIXTURE(bl)
{
	struct bl_ctx c;
};

FIXTURE_SETUP(bl)
{
	int k;

	g_rand ^= (uint64_t)getpid() << 20;
	memset(&self->c, 0, sizeof(self->c));
	for (k = 0; k < KMOD_NBACKENDS; k++)
		ASSERT_EQ(0, kmod_backend_sockets(k, self->c.rx[k]));
	self->c.client = kmod_client_socket();
	ASSERT_LE(0, self->c.client);
	ASSERT_EQ(0, kmod_setns("mlk-lb"));
	ASSERT_EQ(0, slowpath_nl_open(&self->c.nl));
}

FIXTURE_TEARDOWN(bl)
{
	int k;

	/* The next test starts without marks. */
	memset(self->c.marks, 0, sizeof(self->c.marks));
	if (self->c.nl)
		slowpath_nl_overcap_set(self->c.nl, self->c.marks, MAGLEV_MAX_BACKENDS);
	for (k = 0; k < KMOD_NBACKENDS; k++) {
		close(self->c.rx[k][0]);
		close(self->c.rx[k][1]);
	}
	close(self->c.client);
	slowpath_nl_close(self->c.nl);
}

/*
 * New flows whose pick is marked go to the probe's pick, here never the
 * pick itself (the flows are chosen so); probes that land on a marked
 * backend (the pick's, or a second one marked in every other flow) are
 * skipped. Both VIPs (IPv4 over IPIP, IPv6 over
 * GUE to IPv6 backends).
 */
TEST_F(bl, marked_pick_goes_to_probe_pick)
{
	struct maglev_flow_key f;
	int v, i, spilled = 0, skipped = 0;
	uint64_t c0 = spilled_count(&self->c);

	for (v = 0; v < NVIPS; v++) {
		for (i = 0; i < 12; i++) {
			uint32_t m[2], p, want;

			new_flow(v, &f);
			p = table_pick(v, &f);
			m[0] = p;
			m[1] = vips[v].base + 1 + (p - vips[v].base) % 3; /* the next one */
			ASSERT_EQ(0, set_marks(&self->c, m, i % 2 ? 2 : 1))
			{
				TH_LOG("OVERCAP_SET: %s", slowpath_nl_errmsg(self->c.nl));
			}
			want = bounded_pick(&self->c, v, &f);
			if (want == p) {
				i--; /* every probe marked: all_marked_keeps_pick */
				continue;
			}
			/* Did the sequence pass over a marked backend? */
			if (self->c.marks[g_tables[v][maglev_slot(
				    maglev_probe_hash(&g_seed, flow_hash(&f), 1), TABLE_SIZE)]])
				skipped++;
			expect_backend(_metadata, &self->c, &f, want);
			spilled++;
		}
	}
	TH_LOG("%d flows spilled, %d passing over a marked backend", spilled, skipped);
	EXPECT_EQ(2 * 12, spilled);
	EXPECT_EQ(2 * 12, spilled_count(&self->c) - c0); /* counted as SPILLED */
	EXPECT_LT(0, skipped);
}

/* A marked backend that is not the flow's pick changes nothing. */
TEST_F(bl, unmarked_pick_stays)
{
	uint64_t c0 = spilled_count(&self->c);
	struct maglev_flow_key f;
	int v, i;

	for (v = 0; v < NVIPS; v++) {
		for (i = 0; i < 6; i++) {
			uint32_t p, other;

			new_flow(v, &f);
			p = table_pick(v, &f);
			other = vips[v].base + 1 + (p - vips[v].base) % 3;
			ASSERT_EQ(0, set_marks(&self->c, &other, 1));
			expect_backend(_metadata, &self->c, &f, p);
		}
	}
	EXPECT_EQ(0, spilled_count(&self->c) - c0);
}

/* Every backend marked: no probe finds one under cap, the pick stays. */
TEST_F(bl, all_marked_keeps_pick)
{
	struct maglev_flow_key f;
	int v, i;

	for (v = 0; v < NVIPS; v++) {
		uint32_t all[3] = {vips[v].base + 1, vips[v].base + 2, vips[v].base + 3};

		ASSERT_EQ(0, set_marks(&self->c, all, 3));
		for (i = 0; i < 4; i++) {
			new_flow(v, &f);
			expect_backend(_metadata, &self->c, &f, table_pick(v, &f));
		}
	}
}

/* The marks cleared (OVERCAP_SET without OVERCAP): the table's pick again. */
TEST_F(bl, cleared_marks_restore_pick)
{
	struct maglev_flow_key f;
	uint32_t p, want;

	want = spilling_flow(&self->c, &f, &p);
	ASSERT_NE(0, want);
	expect_backend(_metadata, &self->c, &f, want);
	ASSERT_EQ(0, set_marks(&self->c, NULL, 0));
	expect_backend(_metadata, &self->c, &f, p);
}

/*
 * OVERCAP of a length that is no whole number of words, with index 0
 * marked, or longer than one bit per backend index: refused with a reason,
 * and the marks in force stay (the flow still spills).
 */
TEST_F(bl, malformed_marks_refused)
{
	static uint32_t words[MAGLEV_GENL_OVERCAP_MAX / 4 + 1];
	static char buf[MAGLEV_GENL_OVERCAP_MAX + 1024];
	const size_t lens[3] = {6, 4, sizeof(words)};
	const int want_err[3] = {-EINVAL, -EINVAL, -ERANGE};
	const char *const reason[3] = {"u32 words", "index 0", "validation"};
	struct maglev_flow_key f;
	uint32_t p, want;
	int i;

	want = spilling_flow(&self->c, &f, &p);
	ASSERT_NE(0, want);
	for (i = 0; i < 3; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct genlmsghdr *g;

		memset(words, 0, sizeof(words));
		words[0] = i == 1 ? 1 : 0x10;
		nlh->nlmsg_type = slowpath_nl_family_id(self->c.nl);
		nlh->nlmsg_flags = NLM_F_REQUEST;
		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		g->cmd = MAGLEV_CMD_OVERCAP_SET;
		g->version = MAGLEV_GENL_VERSION;
		mnl_attr_put(nlh, MAGLEV_A_OVERCAP, lens[i], words);
		EXPECT_EQ(want_err[i], slowpath_nl_request_raw(self->c.nl, nlh));
		EXPECT_NE(NULL, strstr(slowpath_nl_errmsg(self->c.nl), reason[i]))
		{
			TH_LOG("request %d: %s", i, slowpath_nl_errmsg(self->c.nl));
		}
	}
	expect_backend(_metadata, &self->c, &f, want);
}

int main(int argc, char **argv)
{
	return kmod_topology_main(argc, argv, setup);
}
