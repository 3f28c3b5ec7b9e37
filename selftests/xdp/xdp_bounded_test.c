// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bounded loads in the datapath: a new flow whose pick is marked over cap
 * takes the first unmarked backend of its seeded probe sequence (checked
 * against a userspace reference of the sequence, include/maglev_hash.h), and
 * is counted as spilled; an established flow keeps its backend when that
 * goes over cap; all over cap: the original pick; the sequence is fixed by
 * the seed and changes with it.
 */
#include "fixture.h"
#include "maglev_table.h"

#define NBE   8
#define FLOWS 2000

FIXTURE(bounded)
{
	struct maglev_dp *dp;
	int prog;
	uint8_t be[NBE + 1][16];
	struct flow f4, f6;
	uint32_t table[MAGLEV_TABLE_SIZE];
	bool over[NBE + 1];
	struct maglev_seed seed;
};

FIXTURE_SETUP(bounded)
{
	int i;

	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
	for (i = 1; i <= NBE; i++) {
		if (i % 2)
			v4addr(self->be[i], 192, 0, 2, (uint8_t)(20 + i));
		else
			v6addr(self->be[i], 0xb, 20 + i);
		ASSERT_EQ(0, add_backend(self->dp, i, self->be[i], i % 2 ? P_AF4 : P_AF6));
	}
	client_flows(&self->f4, &self->f6);
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 0, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 0, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, backends_table((const uint8_t(*)[16])self->be, 1, NBE, self->table));
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, self->table));
	memset(self->over, 0, sizeof(self->over));
	self->seed.k0 = MAGLEV_DEFAULT_SEED_K0;
	self->seed.k1 = MAGLEV_DEFAULT_SEED_K1;
}

FIXTURE_TEARDOWN(bounded)
{
	maglev_dp_close(self->dp);
}

static int sent_to(FIXTURE_DATA(bounded) * self, const struct flow *f, uint8_t flags)
{
	return backend_sent_to(self->prog, f, flags, (const uint8_t(*)[16])self->be, NBE);
}

static void mark(struct __test_metadata *_metadata, FIXTURE_DATA(bounded) * self, int idx,
		 bool over)
{
	ASSERT_EQ(0, maglev_dp_overcap_set(self->dp, (uint32_t)idx, over));
	self->over[idx] = over;
}

static uint64_t spilled(FIXTURE_DATA(bounded) * self)
{
	uint64_t n = UINT64_MAX;

	maglev_dp_vip_spilled(self->dp, 1, &n);
	return n;
}

static uint64_t flow_hash(const struct maglev_seed *seed, const struct flow *f)
{
	struct maglev_flow_key k;

	flow_key(&k, f);
	if (f->family == P_AF4)
		return maglev_flow_hash_v4(seed, k.src[0], k.dst[0], k.sport, k.dport, k.proto);
	return maglev_flow_hash_v6(seed, k.src, k.dst, k.sport, k.dport, k.proto);
}

static int plain_pick(FIXTURE_DATA(bounded) * self, const struct flow *f)
{
	return (int)self->table[maglev_slot(flow_hash(&self->seed, f), MAGLEV_TABLE_SIZE)];
}

/* The reference: the pick, or if it is marked the first unmarked backend of
 * the flow's probe sequence, or the pick if there is none. *spill: a probe
 * took it.
 */
static int ref_pick(FIXTURE_DATA(bounded) * self, const struct flow *f, int *spill)
{
	uint64_t h = flow_hash(&self->seed, f);
	int idx = (int)self->table[maglev_slot(h, MAGLEV_TABLE_SIZE)];
	uint32_t i;

	*spill = 0;
	if (!self->over[idx])
		return idx;
	for (i = 1; i <= MAGLEV_BOUNDED_PROBES; i++) {
		int j = (int)self->table[maglev_slot(maglev_probe_hash(&self->seed, h, i),
						     MAGLEV_TABLE_SIZE)];

		if (!self->over[j]) {
			*spill = 1;
			return j;
		}
	}
	return idx;
}

/* Flow n of a fixed set: v4 and v6 clients, many source ports. */
static void nth_flow(FIXTURE_DATA(bounded) * self, int n, struct flow *f)
{
	*f = n % 2 ? self->f6 : self->f4;
	f->sport = (uint16_t)(10000 + n);
	f->src[f->family == P_AF4 ? 3 : 15] = (uint8_t)(n * 7);
}

/* The first flow n >= from of nth_flow() whose pick is p, into *f; FLOWS
 * if none.
 */
static int flow_with_pick(FIXTURE_DATA(bounded) * self, int from, int p, struct flow *f)
{
	int n;

	for (n = from; n < FLOWS; n++) {
		nth_flow(self, n, f);
		if (plain_pick(self, f) == p)
			break;
	}
	return n;
}

TEST_F(bounded, new_flow_over_cap_spills_to_probed_backend)
{
	int n, i, want, got, spill, nspill = 0, nplain = 0, on_marked = 0, per[NBE + 1] = {0};
	struct flow f;

	mark(_metadata, self, 1, true);
	mark(_metadata, self, 2, true);
	mark(_metadata, self, 5, true);
	for (n = 0; n < FLOWS; n++) {
		nth_flow(self, n, &f);
		want = ref_pick(self, &f, &spill);
		got = sent_to(self, &f, 0x02 /* SYN */);
		if (got != want)
			TH_LOG("flow %d: datapath %d, reference %d (pick %d)", n, got, want,
			       plain_pick(self, &f));
		ASSERT_EQ(want, got);
		nspill += spill;
		per[got] += spill;
		nplain += !self->over[plain_pick(self, &f)];
		on_marked += self->over[got];
	}
	/* 3 of 8 marked: about 3/8 of the flows spill, the rest keep their pick. */
	ASSERT_EQ((uint64_t)nspill, spilled(self));
	ASSERT_EQ(FLOWS, nspill + nplain + on_marked);
	ASSERT_LT(FLOWS / 4, nspill);
	ASSERT_GT(FLOWS / 2, nspill);
	/* Only a flow whose 8 probes all hit a marked backend stays there:
	 * (3/8)^9 of the flows, about 0.3 in 2000.
	 */
	ASSERT_GE(2, on_marked);
	/* Spilled flows spread over the unmarked backends, not onto one
	 * neighbour: each of the five takes a share.
	 */
	for (i = 1; i <= NBE; i++) {
		if (!self->over[i])
			ASSERT_LT(nspill / 10, per[i]);
	}
}

TEST_F(bounded, established_flow_never_moves)
{
	struct flow f, g;
	int p, n, spill;

	nth_flow(self, 0, &f);
	p = plain_pick(self, &f);
	ASSERT_EQ(p, sent_to(self, &f, 0x02));
	ASSERT_EQ(p, sent_to(self, &f, 0x10));
	mark(_metadata, self, p, true);
	/* Its backend is over cap now: the established flow stays. */
	for (n = 0; n < 5; n++) {
		ASSERT_EQ(p, sent_to(self, &f, 0x10));
	}
	ASSERT_EQ(0, spilled(self));
	/* A new flow with the same pick is spilled. */
	ASSERT_GT(FLOWS, flow_with_pick(self, 1, p, &g));
	ASSERT_EQ(ref_pick(self, &g, &spill), sent_to(self, &g, 0x02));
	ASSERT_EQ(1, spill);
	ASSERT_NE(p, ref_pick(self, &g, &spill));
	ASSERT_EQ(1, spilled(self));
	/* Once recorded, the spilled flow stays where it went even when the
	 * marks clear (its pick is under cap again).
	 */
	mark(_metadata, self, p, false);
	ASSERT_NE(p, sent_to(self, &g, 0x10));
	ASSERT_EQ(p, sent_to(self, &f, 0x10));
	ASSERT_EQ(1, spilled(self));
}

/*
 * A SYN retransmit (the SYN-ACK was lost) of a flow that spilled goes where
 * the first SYN went, even after the marks changed: its backend holds the
 * half-open connection. Before, the retransmit took the pick again and,
 * with the marks changed, went to another backend.
 */
TEST_F(bounded, syn_retransmit_keeps_spill_backend)
{
	struct flow f;
	int p, b, n, spill;

	mark(_metadata, self, 1, true);
	n = flow_with_pick(self, 0, 1, &f);
	ASSERT_GT(FLOWS, n);
	p = plain_pick(self, &f);
	b = ref_pick(self, &f, &spill);
	ASSERT_EQ(1, spill);
	ASSERT_EQ(b, sent_to(self, &f, 0x02));
	/* The pick is under cap again, the spill backend over it. */
	mark(_metadata, self, 1, false);
	mark(_metadata, self, b, true);
	ASSERT_EQ(b, sent_to(self, &f, 0x02));
	ASSERT_EQ(b, sent_to(self, &f, 0x02));
	ASSERT_EQ(b, sent_to(self, &f, 0x10)); /* the handshake completes there */
	ASSERT_EQ(1, spilled(self));
	/* A new flow with the same pick takes it: the marks did change. */
	ASSERT_GT(FLOWS, flow_with_pick(self, n + 1, p, &f));
	ASSERT_EQ(p, sent_to(self, &f, 0x02));
}

/*
 * Issue 31 item 2: the marks apply only to packets that open a connection.
 * A flow recorded on its pick p loses its entry (evicted, expired, skipped
 * under new_flow_limit, or ECMP brought it here: deleted here) while p is
 * marked: its ACKs still go to p, which holds the connection. Before, they
 * went to the probe's pick, which has no socket for them and resets them.
 * A SYN with the same pick still spills.
 */
TEST_F(bounded, non_syn_miss_ignores_marks)
{
	struct maglev_flow_key k;
	struct flow f, g;
	int p, spill;

	nth_flow(self, 0, &f);
	p = plain_pick(self, &f);
	ASSERT_EQ(p, sent_to(self, &f, 0x02));
	ASSERT_EQ(p, sent_to(self, &f, 0x10));
	mark(_metadata, self, p, true);
	ASSERT_NE(p, ref_pick(self, &f, &spill)); /* where a new flow would go */
	flow_key(&k, &f);
	ASSERT_EQ(0, maglev_dp_conn_delete(self->dp, &k));
	ASSERT_EQ(p, sent_to(self, &f, 0x10));
	ASSERT_EQ(p, sent_to(self, &f, 0x18)); /* PSH, ACK */
	ASSERT_EQ(p, sent_to(self, &f, 0x11)); /* FIN, ACK */
	ASSERT_EQ(0, spilled(self));
	ASSERT_GT(FLOWS, flow_with_pick(self, 1, p, &g));
	ASSERT_EQ(ref_pick(self, &g, &spill), sent_to(self, &g, 0x02));
	ASSERT_EQ(1, spill);
	ASSERT_EQ(1, spilled(self));
}

/*
 * A pick held in its slots while down (maglevd's settle_ms: marked, flags
 * cleared as on_fail repick does): a packet of an established flow that was
 * on it is re-picked as if the table had been rebuilt without it, to the
 * probe sequence's first unmarked backend, not dropped at the held pick.
 */
TEST_F(bounded, held_pick_repicks_to_probe)
{
	struct maglev_backend down = {0};
	struct flow f;
	int p, spill;

	nth_flow(self, 0, &f);
	p = plain_pick(self, &f);
	ASSERT_EQ(p, sent_to(self, &f, 0x02));
	ASSERT_EQ(p, sent_to(self, &f, 0x10));
	mark(_metadata, self, p, true);
	down.family = (uint8_t)(p % 2 ? P_AF4 : P_AF6);
	memcpy(down.addr, self->be[p], sizeof(down.addr));
	ASSERT_EQ(0, maglev_dp_backend_set(self->dp, (uint32_t)p, &down));
	ASSERT_NE(p, ref_pick(self, &f, &spill));
	ASSERT_EQ(ref_pick(self, &f, &spill), sent_to(self, &f, 0x18)); /* PSH, ACK */
	ASSERT_EQ(0, spilled(self));
}

/*
 * UDP has no packet that opens a flow; the balancer's notion of a UDP flow
 * is its entry (udp_idle_ns ends it), so a UDP packet without one honours
 * the marks like a SYN (docs/datapath.md "Bounded loads"), in XDP and the
 * module alike.
 */
TEST_F(bounded, udp_miss_honours_marks)
{
	struct flow f;
	int n, p, spill;

	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 0, IPPROTO_UDP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 0, IPPROTO_UDP, 1, 0, 0));
	mark(_metadata, self, 3, true);
	for (n = 0; n < FLOWS; n++) {
		nth_flow(self, n, &f);
		f.proto = IPPROTO_UDP;
		p = plain_pick(self, &f);
		if (p == 3)
			break;
	}
	ASSERT_GT(FLOWS, n);
	ASSERT_NE(3, ref_pick(self, &f, &spill));
	ASSERT_EQ(ref_pick(self, &f, &spill), sent_to(self, &f, 0));
	ASSERT_EQ(1, spilled(self));
}

TEST_F(bounded, all_over_cap_takes_the_pick)
{
	struct flow f;
	int n, i;

	for (i = 1; i <= NBE; i++)
		mark(_metadata, self, i, true);
	for (n = 0; n < 200; n++) {
		nth_flow(self, n, &f);
		ASSERT_EQ(plain_pick(self, &f), sent_to(self, &f, 0x02));
	}
	ASSERT_EQ(0, spilled(self));
}

TEST_F(bounded, probe_sequence_is_seeded)
{
	struct maglev_seed a = self->seed;
	struct maglev_config c;
	int n, spill, differ = 0, want;
	struct flow f;

	mark(_metadata, self, 3, true);
	mark(_metadata, self, 4, true);
	/* The same flow, marks and seed: the same backend, run after run. */
	for (n = 0; n < 200; n++) {
		struct maglev_flow_key k;

		nth_flow(self, n, &f);
		want = ref_pick(self, &f, &spill);
		ASSERT_EQ(want, sent_to(self, &f, 0x02));
		flow_key(&k, &f);
		ASSERT_EQ(0, maglev_dp_conn_delete(self->dp, &k));
		ASSERT_EQ(want, sent_to(self, &f, 0x02));
	}
	/* Another seed (same table): the datapath follows that seed's
	 * sequence, and it is another sequence.
	 */
	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &c));
	c.seed_k0 ^= 0x5555aaaa5555aaaaULL;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &c));
	ASSERT_EQ(0, maglev_dp_conn_flush(self->dp) < 0);
	for (n = 0; n < 200; n++) {
		uint64_t ha, hb;
		int i;

		nth_flow(self, n, &f);
		self->seed.k0 = c.seed_k0;
		want = ref_pick(self, &f, &spill);
		ASSERT_EQ(want, sent_to(self, &f, 0x02));
		hb = flow_hash(&self->seed, &f);
		self->seed = a;
		ha = flow_hash(&a, &f);
		for (i = 1; i <= MAGLEV_BOUNDED_PROBES; i++) {
			struct maglev_seed b = {c.seed_k0, c.seed_k1};

			differ += maglev_probe_hash(&a, ha, i) % MAGLEV_TABLE_SIZE !=
				  maglev_probe_hash(&b, hb, i) % MAGLEV_TABLE_SIZE;
		}
	}
	ASSERT_LT(200 * MAGLEV_BOUNDED_PROBES * 99 / 100, differ);
}

TEST_HARNESS_MAIN
