// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The backend-side decap program: IPIP in all four family combinations and
 * GUE are stripped and the inner packet passed up with the frame's MAC
 * header and VLAN tags, its ECN field combined with the outer one as RFC
 * 6040 says; anything else passes untouched. In strict mode only outer
 * sources in the allowed prefixes and outer destinations that are this
 * host's are decapsulated; other encapsulated packets are dropped and
 * counted (include/maglev_decap.h).
 */
#include "fixture.h"
#include "maglev_decap.skel.h"
#include "decap_cfg.h"

FIXTURE(decap)
{
	struct maglev_decap *skel;
	int prog;
	struct flow f4, f6;
};

FIXTURE_SETUP(decap)
{
	self->skel = maglev_decap__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->prog = bpf_program__fd(self->skel->progs.maglev_decap);
	client_flows(&self->f4, &self->f6);
}

FIXTURE_TEARDOWN(decap)
{
	maglev_decap__destroy(self->skel);
}

static uint64_t decap_count(FIXTURE_DATA(decap) * self, uint32_t what)
{
	int n = libbpf_num_possible_cpus(), i;
	uint64_t v[512], sum = 0;

	if (n > 512 ||
	    bpf_map_lookup_elem(bpf_map__fd(self->skel->maps.maglev_decap_cnt), &what, v))
		return (uint64_t)-1;
	for (i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

/* Encapsulated frame as the balancer sends it (built by pkt.h), and the
 * frame the backend's stack must see: the client's packet, TTL one lower,
 * behind the encapsulated frame's MAC header and tags.
 */
/* ECN of a round trip: the inner packet's, the mark set on the outer header
 * after the balancer, and what the backend's stack must get (-1: dropped).
 */
struct ecn_case {
	uint8_t inner, outer;
	int want;
};

/* Set the ECN field of the IP header at p; IPv4 checksum refreshed. */
static void set_ecn(uint8_t *p, uint8_t ecn)
{
	if ((p[0] >> 4) == 6) {
		p[1] = (uint8_t)((p[1] & ~0x30) | ecn << 4);
		return;
	}
	p[1] = (uint8_t)((p[1] & ~3) | ecn);
	put16(p + 10, 0);
	put16(p + 10, csum_finish(csum_add(0, p, 20)));
}

static void roundtrip_ecn(struct __test_metadata *_metadata, FIXTURE_DATA(decap) * self,
			  const struct flow *f, int outer, int gue, uint16_t port, int nvlan,
			  const struct ecn_case *ecn)
{
	/* DSCP EF (46) beside the ECN bits: only ECN may change. */
	struct client_opts co = {
		.nvlan = nvlan, .payload = 60, .tos = ecn ? (uint8_t)(0xb8 | ecn->inner) : 0};
	struct encap_want w = {.outer_family = outer, .gue = gue, .gue_port = port, .nvlan = nvlan};
	uint8_t client[512], enc[600], exp[512];
	size_t l2 = 14 + 4 * nvlan, n, elen;
	struct run_result r;

	n = build_client(client, f, &co);
	v4addr(w.backend, 192, 0, 2, 21);
	if (outer == P_AF6)
		v6addr(w.backend, 0xb, 21);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	memcpy(w.src6, SRC6, 16);
	w.src6_plen = SRC6_PLEN;
	elen = build_encap(enc, client, n, f, &w);

	memcpy(exp, enc, l2); /* the frame's MACs and tags */
	put16(exp + l2 - 2, f->family == P_AF4 ? 0x0800 : 0x86dd);
	memcpy(exp + l2, client + l2, n - l2);
	if (f->family == P_AF4) {
		exp[l2 + 8]--;
		put16(exp + l2 + 10, 0);
		put16(exp + l2 + 10, csum_finish(csum_add(0, exp + l2, 20)));
	} else {
		exp[l2 + 7]--;
	}
	if (ecn) {
		set_ecn(enc + l2, ecn->outer);
		if (ecn->want >= 0)
			set_ecn(exp + l2, (uint8_t)ecn->want);
	}
	ASSERT_EQ(0, run_prog(self->prog, enc, elen, &r));
	if (ecn && ecn->want < 0) {
		ASSERT_EQ(XDP_DROP, r.action);
		ASSERT_EQ(1, decap_count(self, 2));
		return;
	}
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, exp, n);
}

static void roundtrip(struct __test_metadata *_metadata, FIXTURE_DATA(decap) * self,
		      const struct flow *f, int outer, int gue, uint16_t port, int nvlan)
{
	roundtrip_ecn(_metadata, self, f, outer, gue, port, nvlan, NULL);
	ASSERT_EQ(1, decap_count(self, 0));
}

TEST_F(decap, ipip_4in4)
{
	roundtrip(_metadata, self, &self->f4, P_AF4, 0, 0, 0);
}

TEST_F(decap, ipip_6in6)
{
	roundtrip(_metadata, self, &self->f6, P_AF6, 0, 0, 0);
}

TEST_F(decap, ipip_4in6)
{
	roundtrip(_metadata, self, &self->f4, P_AF6, 0, 0, 0);
}

TEST_F(decap, ipip_6in4)
{
	roundtrip(_metadata, self, &self->f6, P_AF4, 0, 0, 0);
}

TEST_F(decap, gue_4in4_default_port)
{
	roundtrip(_metadata, self, &self->f4, P_AF4, 1, MAGLEV_GUE_PORT_DEFAULT, 0);
}

TEST_F(decap, gue_6in6_vlan)
{
	roundtrip(_metadata, self, &self->f6, P_AF6, 1, MAGLEV_GUE_PORT_DEFAULT, 1);
}

TEST_F(decap, gue_4in6_two_tags)
{
	roundtrip(_metadata, self, &self->f4, P_AF6, 1, MAGLEV_GUE_PORT_DEFAULT, 2);
}

TEST_F(decap, gue_6in4_configured_port)
{
	uint16_t cfg[2] = {htons(9000), 0};
	uint32_t zero = 0;

	ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(self->skel->maps.maglev_decap_cfg), &zero, cfg,
					 0));
	roundtrip(_metadata, self, &self->f6, P_AF4, 1, 9000, 0);
}

/* Not ours: plain TCP, GUE to another port, GUE version 1, IPIP whose
 * inner version does not match.
 */
TEST_F(decap, others_untouched)
{
	struct client_opts co = {.payload = 60};
	struct encap_want w = {.outer_family = P_AF4, .gue = 1, .gue_port = 9999};
	uint8_t client[512], enc[600];
	struct run_result r;
	size_t n, elen;

	n = build_client(client, &self->f4, &co);
	ASSERT_EQ(0, run_prog(self->prog, client, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, client, n);

	v4addr(w.backend, 192, 0, 2, 21);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	elen = build_encap(enc, client, n, &self->f4, &w);
	ASSERT_EQ(0, run_prog(self->prog, enc, elen, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, enc, elen);

	w.gue_port = MAGLEV_GUE_PORT_DEFAULT;
	elen = build_encap(enc, client, n, &self->f4, &w);
	enc[14 + 20 + 8] = 0x40; /* GUE version 1 */
	ASSERT_EQ(0, run_prog(self->prog, enc, elen, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, enc, elen);

	w.gue = 0;
	elen = build_encap(enc, client, n, &self->f4, &w);
	enc[14 + 9] = 41; /* claims IPv6 inside, holds IPv4 */
	ASSERT_EQ(0, run_prog(self->prog, enc, elen, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, enc, elen);
	ASSERT_EQ(0, decap_count(self, 0));
	ASSERT_EQ(4, decap_count(self, 1));
}

/* GUE with optional fields (hlen > 0) skips them. */
TEST_F(decap, gue_with_optional_fields)
{
	struct client_opts co = {.payload = 60};
	struct encap_want w = {
		.outer_family = P_AF4, .gue = 1, .gue_port = MAGLEV_GUE_PORT_DEFAULT};
	uint8_t client[512], enc[600], big[600];
	size_t n, elen, gue = 14 + 20 + 8;
	struct run_result r;

	n = build_client(client, &self->f4, &co);
	v4addr(w.backend, 192, 0, 2, 21);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	elen = build_encap(enc, client, n, &self->f4, &w);
	/* Two words of private data after the GUE header. */
	memcpy(big, enc, gue + 4);
	memset(big + gue + 4, 0xee, 8);
	memcpy(big + gue + 12, enc + gue + 4, elen - gue - 4);
	big[gue] = 2;
	ASSERT_EQ(0, run_prog(self->prog, big, elen + 8, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_EQ(n, r.len);
	ASSERT_EQ(0, memcmp(r.out + 14, enc + gue + 4, n - 14));
}

/* RFC 6040 section 4.2, every inner/outer pair, in each family pairing and
 * in GUE: a CE set between balancer and backend reaches the backend's stack.
 */
TEST_F(decap, ecn_rfc6040)
{
	enum { N = 0, E1 = 1, E0 = 2, CE = 3 };
	static const struct ecn_case cases[] = {
		{N, N, N},    {N, E0, N},   {N, E1, N},	  {N, CE, -1},	{E0, N, E0},  {E0, E0, E0},
		{E0, E1, E1}, {E0, CE, CE}, {E1, N, E1},  {E1, E0, E1}, {E1, E1, E1}, {E1, CE, CE},
		{CE, N, CE},  {CE, E0, CE}, {CE, E1, CE}, {CE, CE, CE},
	};
	const int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
	int map = bpf_map__fd(self->skel->maps.maglev_decap_cnt), k, drops = 0;
	uint64_t zero[512] = {};
	uint32_t drop_ctr = 2;

	/* k: the case, then inner family, outer family, IPIP or GUE. */
	for (k = 0; k < ncases * 8; k++) {
		const struct ecn_case *c = &cases[k % ncases];
		const struct flow *f = (k / ncases) & 1 ? &self->f6 : &self->f4;
		int outer = (k / ncases) & 2 ? P_AF6 : P_AF4, gue = (k / ncases) >> 2;

		/* Each case counts its own drop. */
		ASSERT_EQ(0, bpf_map_update_elem(map, &drop_ctr, zero, 0));
		roundtrip_ecn(_metadata, self, f, outer, gue, MAGLEV_GUE_PORT_DEFAULT, 0, c);
		drops += c->want < 0;
	}
	ASSERT_EQ(8, drops);
}

/* A balancer frame for f to backend .21 of the outer family, and the
 */
static size_t strict_frame(uint8_t *enc, const struct flow *f, int outer, int gue)
{
	struct client_opts co = {.payload = 60};
	struct encap_want w = {
		.outer_family = outer, .gue = gue, .gue_port = MAGLEV_GUE_PORT_DEFAULT};
	uint8_t client[512];
	size_t n;

	n = build_client(client, f, &co);
	v4addr(w.backend, 192, 0, 2, 21);
	if (outer == P_AF6)
		v6addr(w.backend, 0xb, 21);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	memcpy(w.src6, SRC6, 16);
	w.src6_plen = SRC6_PLEN;
	return build_encap(enc, client, n, f, &w);
}

/* Strict source and destination, each family pairing, IPIP and GUE: the
 * balancer's prefix and our own address deliver; a source outside every
 * allowed prefix is dropped as drop_src, a destination that is not ours
 * as drop_dst; traffic that is not encapsulated still passes.
 */
TEST_F(decap, strict_src_and_dst)
{
	int cfg = bpf_map__fd(self->skel->maps.maglev_decap_cfg);
	int src = bpf_map__fd(self->skel->maps.maglev_dcp_src);
	int dst = bpf_map__fd(self->skel->maps.maglev_dcp_dst);
	uint8_t be4[4] = {192, 0, 2, 21}, be6[16], other6[16], enc[600], plain[512];
	uint8_t other4[4] = {203, 0, 113, 0};
	struct client_opts co = {.payload = 60};
	uint64_t done = 0, dsrc = 0, ddst = 0;
	struct run_result r;
	size_t n;
	int k;

	memset(be6, 0, 16);
	v6addr(be6, 0xb, 21);
	memcpy(other6, be6, 16);
	other6[15] = 22;
	ASSERT_EQ(0, decap_set_flags(cfg, MAGLEV_DECAP_F_STRICT_SRC | MAGLEV_DECAP_F_STRICT_DST));
	/* Nothing allowed yet: every encapsulated packet is a spoof. */
	n = strict_frame(enc, &self->f4, P_AF4, 0);
	ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
	ASSERT_EQ(XDP_DROP, r.action);
	ASSERT_EQ(1, decap_count(self, MAGLEV_DECAP_DROP_SRC));
	dsrc = 1;
	ASSERT_EQ(0, decap_allow_src(src, other4, 1, 24));
	ASSERT_EQ(0, decap_allow_src(src, other6, 0, 120));
	/* k: inner family, outer family, IPIP or GUE. */
	for (k = 0; k < 8; k++) {
		const struct flow *f = k & 1 ? &self->f6 : &self->f4;
		int outer = k & 2 ? P_AF6 : P_AF4, gue = k >> 2;
		int v4 = outer == P_AF4;

		n = strict_frame(enc, f, outer, gue);
		/* Source outside the allowed prefixes (only 203.0.113.0/24
		 * and another /120 are): dropped, however right the rest.
		 */
		ASSERT_EQ(0, decap_own_dst(dst, v4 ? be4 : be6, v4));
		ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
		ASSERT_EQ(XDP_DROP, r.action);
		ASSERT_EQ(++dsrc, decap_count(self, MAGLEV_DECAP_DROP_SRC));
		/* The balancer's prefix allowed: delivered. */
		ASSERT_EQ(0,
			  decap_allow_src(src, v4 ? SRC4 : SRC6, v4, v4 ? SRC4_PLEN : SRC6_PLEN));
		ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
		ASSERT_EQ(XDP_PASS, r.action);
		ASSERT_EQ(++done, decap_count(self, MAGLEV_DECAP_DONE));
		/* Our address no longer ours (another one is): dropped. */
		ASSERT_EQ(0, decap_del_dst(dst, v4 ? be4 : be6, v4));
		ASSERT_EQ(0, decap_own_dst(dst, v4 ? other4 : other6, v4));
		ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
		ASSERT_EQ(XDP_DROP, r.action);
		ASSERT_EQ(++ddst, decap_count(self, MAGLEV_DECAP_DROP_DST));
		/* Back to the start of the next case: its prefix not allowed. */
		ASSERT_EQ(0, decap_del_src(src, v4 ? SRC4 : SRC6, v4, v4 ? SRC4_PLEN : SRC6_PLEN));
		ASSERT_EQ(0, decap_del_dst(dst, v4 ? other4 : other6, v4));
	}
	/* Not encapsulated: passes untouched, strict or not. */
	n = build_client(plain, &self->f4, &co);
	ASSERT_EQ(0, run_prog(self->prog, plain, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, plain, n);
	ASSERT_EQ(1, decap_count(self, MAGLEV_DECAP_PASS));
}

/* Strict source only (no own addresses configured): the destination is
 * not checked; and the flags cleared make the program open again.
 */
TEST_F(decap, strict_src_only_then_open)
{
	int cfg = bpf_map__fd(self->skel->maps.maglev_decap_cfg);
	uint8_t enc[600];
	struct run_result r;
	size_t n;

	n = strict_frame(enc, &self->f6, P_AF6, 1);
	ASSERT_EQ(0, decap_set_flags(cfg, MAGLEV_DECAP_F_STRICT_SRC));
	ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
	ASSERT_EQ(XDP_DROP, r.action);
	ASSERT_EQ(0, decap_allow_src(bpf_map__fd(self->skel->maps.maglev_dcp_src), SRC6, 0,
				     SRC6_PLEN));
	ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	/* Open again: the prefix gone, the flags cleared, anyone is taken. */
	ASSERT_EQ(0,
		  decap_del_src(bpf_map__fd(self->skel->maps.maglev_dcp_src), SRC6, 0, SRC6_PLEN));
	ASSERT_EQ(0, decap_set_flags(cfg, 0));
	ASSERT_EQ(0, run_prog(self->prog, enc, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_EQ(2, decap_count(self, MAGLEV_DECAP_DONE));
	ASSERT_EQ(1, decap_count(self, MAGLEV_DECAP_DROP_SRC));
	ASSERT_EQ(0, decap_count(self, MAGLEV_DECAP_DROP_DST));
}

TEST_HARNESS_MAIN
