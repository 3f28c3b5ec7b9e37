// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Malformed and unusual packets to a VIP: truncated at each header, bad
 * IHL / lengths / offsets, IPv4 fragments and options, IPv6 extension
 * chains. Each must end in exactly one reason counter, and, when passed to
 * the stack, leave the program unmodified. Malformed ones are never
 * forwarded; options and extension headers other than fragments are.
 * The slow path's budget (bpf/xdp_slowpath_budget.h): over slow_path_limit
 * per CPU, packets for the slow path are dropped as drop_slow_path.
 */
#include <sched.h>
#include "fixture.h"

FIXTURE(parse)
{
	struct maglev_dp *dp;
	int prog;
	struct flow f4, f6;
	uint8_t in[512];
	size_t n;
};

FIXTURE_SETUP(parse)
{
	uint8_t be[16];

	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
	client_flows(&self->f4, &self->f6);
	v4addr(be, 192, 0, 2, 21);
	ASSERT_EQ(0, add_backend(self->dp, 1, be, P_AF4));
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 80, IPPROTO_UDP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 80, IPPROTO_UDP, 1, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 1));
}

FIXTURE_TEARDOWN(parse)
{
	maglev_dp_close(self->dp);
}

/* Run self->in and require exactly one count of reason, the matching
 * action, and for XDP_PASS an untouched frame.
 */
static void expect_reason(struct __test_metadata *_metadata, FIXTURE_DATA(parse) * self, int reason)
{
	uint64_t before[MAGLEV_REASON_MAX], after[MAGLEV_REASON_MAX];
	uint32_t want = maglev_reason_action((uint32_t)reason);
	struct run_result r;
	int i;

	ASSERT_EQ(0, maglev_dp_reason_stats(self->dp, before));
	ASSERT_EQ(0, run_prog(self->prog, self->in, self->n, &r));
	ASSERT_EQ(0, maglev_dp_reason_stats(self->dp, after));
	for (i = 0; i < MAGLEV_REASON_MAX; i++) {
		uint64_t d = after[i] - before[i];

		if (d != (uint64_t)(i == reason))
			TH_LOG("reason %s moved by %llu (want %s)", maglev_dp_reason_name(i),
			       (unsigned long long)d, maglev_dp_reason_name(reason));
		ASSERT_EQ(i == reason, d);
	}
	ASSERT_EQ(want, r.action);
	if (want == XDP_PASS)
		ASSERT_BYTES(r.out, r.len, self->in, self->n);
}

static void build(FIXTURE_DATA(parse) * self, int family, uint8_t proto, size_t payload)
{
	struct client_opts co = {.payload = payload};
	struct flow f = family == P_AF4 ? self->f4 : self->f6;

	f.proto = proto;
	self->n = build_client(self->in, &f, &co);
}

#define L3   14
#define L4_4 (L3 + 20)
#define L4_6 (L3 + 40)

/* Refresh the IPv4 header checksum after a mutation (kept valid so only
 * the intended field is wrong).
 */
static void fix_ip4(uint8_t *ip)
{
	put16(ip + 10, 0);
	put16(ip + 10, csum_finish(csum_add(0, ip, (ip[0] & 0xf) * 4)));
}

TEST_F(parse, vlan_tag_truncated)
{
	build(self, P_AF4, IPPROTO_TCP, 0);
	put16(self->in + 12, 0x8100);
	self->n = 16;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L2_TRUNC);
}

TEST_F(parse, second_vlan_tag_truncated)
{
	struct client_opts co = {.nvlan = 2};

	self->n = build_client(self->in, &self->f4, &co);
	self->n = 14 + 4 + 2;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L2_TRUNC);
}

TEST_F(parse, three_vlan_tags_passed)
{
	struct client_opts co = {.nvlan = 2};

	self->n = build_client(self->in, &self->f4, &co);
	put16(self->in + 20, 0x8100); /* the inner tag's type: a third tag */
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_VLAN_DEPTH);
}

TEST_F(parse, ipv4_truncated)
{
	build(self, P_AF4, IPPROTO_TCP, 0);
	self->n = L3 + 19;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_TRUNC);
}

TEST_F(parse, ipv4_bad_version)
{
	build(self, P_AF4, IPPROTO_TCP, 0);
	self->in[L3] = 0x65;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv4_ihl_below_5)
{
	build(self, P_AF4, IPPROTO_TCP, 0);
	self->in[L3] = 0x44;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv4_total_length_beyond_frame)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	put16(self->in + L3 + 2, (uint16_t)(self->n - L3 + 1));
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv4_total_length_below_header)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	put16(self->in + L3 + 2, 19);
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv4_fragment_mf)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	put16(self->in + L3 + 6, 0x2000);
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IP_FRAG);
}

TEST_F(parse, ipv4_fragment_offset)
{
	build(self, P_AF4, IPPROTO_UDP, 10);
	put16(self->in + L3 + 6, 0x0010);
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IP_FRAG);
}

/* Options ride along inside the encapsulation (issue 14 item 11). */
TEST_F(parse, ipv4_options_forwarded)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	insert_ipv4_nops(self->in, &self->n, L3, 4);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
	build(self, P_AF4, IPPROTO_UDP, 10);
	insert_ipv4_nops(self->in, &self->n, L3, 40);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
}

/* An ICMP error's quote is read at a fixed offset: with options, the kernel. */
TEST_F(parse, ipv4_icmp_with_options_passed)
{
	build(self, P_AF4, IPPROTO_UDP, 10);
	self->in[L3 + 9] = IPPROTO_ICMP;
	insert_ipv4_nops(self->in, &self->n, L3, 4);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IP_OPTIONS);
}

TEST_F(parse, ipv4_other_protocol)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	self->in[L3 + 9] = 47; /* GRE */
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_L4_PROTO);
}

TEST_F(parse, tcp_truncated)
{
	build(self, P_AF4, IPPROTO_TCP, 0);
	self->n = L4_4 + 19;
	put16(self->in + L3 + 2, 20 + 19);
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_TRUNC);
}

TEST_F(parse, tcp_doff_below_5)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	self->in[L4_4 + 12] = 4 << 4;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_BAD);
}

TEST_F(parse, tcp_doff_beyond_packet)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	self->in[L4_4 + 12] = 15 << 4;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_BAD);
}

TEST_F(parse, udp_truncated)
{
	build(self, P_AF4, IPPROTO_UDP, 0);
	self->n = L4_4 + 7;
	put16(self->in + L3 + 2, 27);
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_TRUNC);
}

TEST_F(parse, udp_length_below_8)
{
	build(self, P_AF4, IPPROTO_UDP, 10);
	put16(self->in + L4_4 + 4, 7);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_BAD);
}

TEST_F(parse, udp_length_beyond_ip)
{
	build(self, P_AF4, IPPROTO_UDP, 10);
	put16(self->in + L4_4 + 4, 19);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_BAD);
}

TEST_F(parse, ipv6_truncated)
{
	build(self, P_AF6, IPPROTO_TCP, 0);
	self->n = L3 + 39;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_TRUNC);
}

TEST_F(parse, ipv6_bad_version)
{
	build(self, P_AF6, IPPROTO_TCP, 0);
	self->in[L3] = (self->in[L3] & 0x0f) | 0x40;
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv6_payload_length_beyond_frame)
{
	build(self, P_AF6, IPPROTO_TCP, 10);
	put16(self->in + L3 + 4, (uint16_t)(self->n - L4_6 + 1));
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv6_tcp_truncated)
{
	build(self, P_AF6, IPPROTO_TCP, 0);
	self->n = L4_6 + 12;
	put16(self->in + L3 + 4, 12);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_TRUNC);
}

TEST_F(parse, ipv6_udp_length_beyond_payload)
{
	build(self, P_AF6, IPPROTO_UDP, 4);
	put16(self->in + L4_6 + 4, 13);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L4_BAD);
}

/* Insert extension headers (each given as nh, total bytes) between the
 * IPv6 header and the TCP segment.
 */
static void insert_ext(FIXTURE_DATA(parse) * self, const uint8_t *types, const size_t *lens,
		       int count)
{
	insert_ipv6_ext(self->in, &self->n, L3, types, lens, count);
}

TEST_F(parse, ipv6_hop_by_hop_forwarded)
{
	const uint8_t t[] = {0};
	const size_t l[] = {8};

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 1);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
}

TEST_F(parse, ipv6_routing_then_dstopts_forwarded)
{
	const uint8_t t[] = {43, 60};
	const size_t l[] = {24, 16};

	build(self, P_AF6, IPPROTO_UDP, 10);
	insert_ext(self, t, l, 2);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
}

/* Segments left: the VIP is a waypoint, not the destination yet. */
TEST_F(parse, ipv6_routing_segments_left_passed)
{
	const uint8_t t[] = {43};
	const size_t l[] = {24};

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 1);
	self->in[L4_6 + 3] = 1;
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IPV6_EXT);
}

/* ICMPv6 after extension headers: the kernel. */
TEST_F(parse, ipv6_icmp_after_ext_passed)
{
	const uint8_t t[] = {60};
	const size_t l[] = {8};

	build(self, P_AF6, IPPROTO_UDP, 10);
	self->in[L3 + 6] = IPPROTO_ICMPV6;
	insert_ext(self, t, l, 1);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IPV6_EXT);
}

TEST_F(parse, ipv6_fragment_passed)
{
	const uint8_t t[] = {44};
	const size_t l[] = {8};

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 1);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IPV6_FRAG);
}

TEST_F(parse, ipv6_fragment_after_dstopts_passed)
{
	const uint8_t t[] = {60, 44};
	const size_t l[] = {8, 8};

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 2);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IPV6_FRAG);
}

TEST_F(parse, ipv6_long_ext_chain_passed)
{
	const uint8_t t[] = {60, 60, 60, 60, 60};
	const size_t l[] = {8, 8, 8, 8, 8};

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 5);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_IPV6_EXT);
}

TEST_F(parse, ipv6_ext_truncated)
{
	build(self, P_AF6, IPPROTO_TCP, 0);
	self->in[L3 + 6] = 0; /* hop-by-hop, but only 4 bytes follow */
	self->n = L4_6 + 4;
	put16(self->in + L3 + 4, 4);
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_TRUNC);
}

TEST_F(parse, ipv6_ext_length_beyond_payload)
{
	const uint8_t t[] = {60};
	const size_t l[] = {8};

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 1);
	self->in[L4_6 + 1] = 20; /* claims 168 bytes */
	expect_reason(_metadata, self, MAGLEV_REASON_DROP_L3_BAD);
}

TEST_F(parse, ipv6_no_next_header)
{
	build(self, P_AF6, IPPROTO_TCP, 10);
	self->in[L3 + 6] = 59;
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_L4_PROTO);
}

/* Malformed traffic to a non-VIP address is the stack's business. */
TEST_F(parse, non_vip_malformed_passed)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	self->in[L3 + 19] = 99;
	put16(self->in + L3 + 2, 9999);
	fix_ip4(self->in + L3);
	expect_reason(_metadata, self, MAGLEV_REASON_PASS_NOT_VIP);
}

/* The good frame the mutations start from is forwarded (so each case
 * above fails because of its mutation alone).
 */
TEST_F(parse, unmutated_frames_forwarded)
{
	build(self, P_AF4, IPPROTO_TCP, 10);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
	build(self, P_AF4, IPPROTO_UDP, 10);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
	build(self, P_AF6, IPPROTO_TCP, 10);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
	build(self, P_AF6, IPPROTO_UDP, 4);
	expect_reason(_metadata, self, MAGLEV_REASON_TX_FORWARD);
}

/* Per-CPU budget: the test runs on CPU 0 only, so one bucket counts. */
static void set_slow_path_limit(struct __test_metadata *_metadata, FIXTURE_DATA(parse) * self,
				uint32_t limit)
{
	struct maglev_config cfg;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	base_config(&cfg);
	cfg.slow_path_limit = limit;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
}

/* Send n copies of self->in; the reason counts moved are returned in d. */
static void run_n(struct __test_metadata *_metadata, FIXTURE_DATA(parse) * self, int n,
		  uint64_t d[MAGLEV_REASON_MAX])
{
	uint64_t before[MAGLEV_REASON_MAX], after[MAGLEV_REASON_MAX];
	struct run_result r;
	int i;

	ASSERT_EQ(0, maglev_dp_reason_stats(self->dp, before));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, run_prog(self->prog, self->in, self->n, &r));
		/* Passed up untouched; dropped; or forwarded (XDP_TX). */
		if (r.action == XDP_PASS)
			ASSERT_BYTES(r.out, r.len, self->in, self->n);
	}
	ASSERT_EQ(0, maglev_dp_reason_stats(self->dp, after));
	for (i = 0; i < MAGLEV_REASON_MAX; i++)
		d[i] = after[i] - before[i];
}

/* slow_path_limit 1/s (a burst of one): of 50 fragments about one goes up
 * (one more per second the loop takes), the rest are dropped and counted;
 * IPv6 fragments and IPv4 options on ICMP share the bucket; a packet XDP
 * forwards itself is not touched by it.
 */
TEST_F(parse, slow_path_over_budget_dropped)
{
	uint64_t d[MAGLEV_REASON_MAX];
	const uint8_t t[] = {44};
	const size_t l[] = {8};

	set_slow_path_limit(_metadata, self, 1);
	build(self, P_AF4, IPPROTO_TCP, 10);
	put16(self->in + L3 + 6, 0x2000);
	fix_ip4(self->in + L3);
	run_n(_metadata, self, 50, d);
	TH_LOG("limit 1/s: %llu of 50 fragments passed, %llu dropped",
	       (unsigned long long)d[MAGLEV_REASON_PASS_IP_FRAG],
	       (unsigned long long)d[MAGLEV_REASON_DROP_SLOW_PATH]);
	ASSERT_LE(1, d[MAGLEV_REASON_PASS_IP_FRAG]);
	ASSERT_GE(3, d[MAGLEV_REASON_PASS_IP_FRAG]);
	ASSERT_EQ(50, d[MAGLEV_REASON_PASS_IP_FRAG] + d[MAGLEV_REASON_DROP_SLOW_PATH]);

	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 1);
	run_n(_metadata, self, 20, d);
	ASSERT_GE(2, d[MAGLEV_REASON_PASS_IPV6_FRAG]);
	ASSERT_EQ(20, d[MAGLEV_REASON_PASS_IPV6_FRAG] + d[MAGLEV_REASON_DROP_SLOW_PATH]);

	/* Not the slow path's: forwarded whatever the budget. */
	build(self, P_AF4, IPPROTO_TCP, 10);
	run_n(_metadata, self, 20, d);
	ASSERT_EQ(20, d[MAGLEV_REASON_TX_FORWARD]);
	ASSERT_EQ(0, d[MAGLEV_REASON_DROP_SLOW_PATH]);
}

/* Send n copies of self->in under slow_path_limit 1/s, whose bucket
 * earlier floods have emptied: at most a few pass as reason, the rest are
 * dropped as drop_slow_path, and nothing else is counted.
 */
static void flood_budgeted(struct __test_metadata *_metadata, FIXTURE_DATA(parse) * self, int n,
			   int reason)
{
	uint64_t d[MAGLEV_REASON_MAX];

	run_n(_metadata, self, n, d);
	TH_LOG("%s: %llu of %d passed, %llu dropped", maglev_dp_reason_name(reason),
	       (unsigned long long)d[reason], n,
	       (unsigned long long)d[MAGLEV_REASON_DROP_SLOW_PATH]);
	ASSERT_GE(3, d[reason]);
	ASSERT_EQ((uint64_t)n, d[reason] + d[MAGLEV_REASON_DROP_SLOW_PATH]);
}

/* Issue 31 item 6: what XDP passes and the module forwards is the slow
 * path's too. A flood of spoofed time-exceeded errors about a VIP flow
 * (IPv4 and IPv6), destination-unreachable quoting IPv4 options, and IPv6
 * whose first header is AH, over a limit of 1/s: dropped and counted. ICMP
 * the module never forwards (neighbour solicitation) is not budgeted.
 */
TEST_F(parse, slow_path_icmp_errors_and_ah_budgeted)
{
	static const uint8_t router4[4] = {198, 51, 100, 1};
	static const uint8_t router6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0e, [15] = 1};
	uint64_t d[MAGLEV_REASON_MAX];
	const uint8_t t[] = {51};
	const size_t l[] = {16};
	uint8_t *ic;

	set_slow_path_limit(_metadata, self, 1);
	self->n = build_icmp_error(self->in, &self->f4, router4, 11, 0, 28);
	flood_budgeted(_metadata, self, 50, MAGLEV_REASON_PASS_ICMP);
	self->n = build_icmp_error(self->in, &self->f6, router6, 3, 0, 48);
	flood_budgeted(_metadata, self, 20, MAGLEV_REASON_PASS_ICMP);
	/* Unreachable quoting a header with options (IHL 6). */
	self->n = build_icmp_error(self->in, &self->f4, router4, 3, 3, 28);
	ic = self->in + L4_4;
	ic[8] = 0x46;
	put16(ic + 2, 0);
	put16(ic + 2, csum_finish(csum_add(0, ic, self->n - L4_4)));
	flood_budgeted(_metadata, self, 20, MAGLEV_REASON_PASS_ICMP);
	build(self, P_AF6, IPPROTO_TCP, 10);
	insert_ext(self, t, l, 1);
	self->in[L4_6 + 1] = 2; /* AH: 4-byte words minus 2 */
	flood_budgeted(_metadata, self, 20, MAGLEV_REASON_PASS_IPV6_EXT);

	self->n = build_icmp_error(self->in, &self->f6, router6, 135, 0, 48);
	run_n(_metadata, self, 20, d);
	ASSERT_EQ(20, d[MAGLEV_REASON_PASS_ICMP]);
	ASSERT_EQ(0, d[MAGLEV_REASON_DROP_SLOW_PATH]);
}

/* Under the budget (1 M/s: a burst of 10,000) and unlimited (0): every
 * fragment goes up, none is dropped.
 */
TEST_F(parse, slow_path_under_budget_passed)
{
	uint64_t d[MAGLEV_REASON_MAX];

	build(self, P_AF4, IPPROTO_UDP, 10);
	put16(self->in + L3 + 6, 0x0010);
	fix_ip4(self->in + L3);
	set_slow_path_limit(_metadata, self, 1000000);
	run_n(_metadata, self, 500, d);
	ASSERT_EQ(500, d[MAGLEV_REASON_PASS_IP_FRAG]);
	ASSERT_EQ(0, d[MAGLEV_REASON_DROP_SLOW_PATH]);
	set_slow_path_limit(_metadata, self, 0);
	run_n(_metadata, self, 500, d);
	ASSERT_EQ(500, d[MAGLEV_REASON_PASS_IP_FRAG]);
	ASSERT_EQ(0, d[MAGLEV_REASON_DROP_SLOW_PATH]);
}

/* The action derived from a reason's place in the enum matches its name's
 * group for every reason (the static assertions in include/maglev_maps.h
 * keep the groups in order; this ties them to the names operators see).
 */
TEST(reason_names_match_actions)
{
	static const struct {
		const char *prefix;
		uint32_t action;
	} g[] = {{"tx_", XDP_TX}, {"pass_", XDP_PASS}, {"drop_", XDP_DROP}};
	uint32_t r;
	size_t k;

	for (r = 0; r < MAGLEV_REASON_MAX; r++) {
		const char *name = maglev_dp_reason_name(r);

		for (k = 0; k < 3; k++)
			if (!strncmp(name, g[k].prefix, strlen(g[k].prefix)))
				break;
		ASSERT_GT(3, k) TH_LOG("reason %u (%s) has no tx_/pass_/drop_ name", r, name);
		ASSERT_EQ(g[k].action, maglev_reason_action(r)) TH_LOG("reason %s", name);
	}
}

TEST_HARNESS_MAIN
