// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Forwarding: every encapsulation and family combination, VLAN tags, the
 * all-ports VIP, non-VIP traffic, TTL handling. Output frames are compared
 * byte for byte with frames built by pkt.h.
 */
#include "fixture.h"

FIXTURE(lb)
{
	struct maglev_dp *dp;
	int prog;
	uint8_t vip4[16], vip6[16], be4[16], be6[16];
	struct flow f4, f6;
};

FIXTURE_SETUP(lb)
{
	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
	v4addr(self->vip4, 203, 0, 113, 10);
	v6addr(self->vip6, 0xf, 10);
	v4addr(self->be4, 192, 0, 2, 21);
	v6addr(self->be6, 0xb, 21);
	ASSERT_EQ(0, add_backend(self->dp, 1, self->be4, P_AF4));
	ASSERT_EQ(0, add_backend(self->dp, 2, self->be6, P_AF6));

	self->f4.family = P_AF4;
	v4addr(self->f4.src, 198, 51, 100, 7);
	memcpy(self->f4.dst, self->vip4, 16);
	self->f4.sport = 40001;
	self->f4.dport = 80;
	self->f4.proto = IPPROTO_TCP;
	self->f6 = self->f4;
	self->f6.family = P_AF6;
	v6addr(self->f6.src, 0xc, 7);
	memcpy(self->f6.dst, self->vip6, 16);
}

FIXTURE_TEARDOWN(lb)
{
	maglev_dp_close(self->dp);
}

struct combo {
	int inner, outer, gue, nvlan;
	uint8_t proto;
	uint16_t vip_port; /* 0: all-ports VIP */
	uint16_t gue_port; /* 0: default */
	uint8_t tos, ttl;
};

static void check_combo(struct __test_metadata *_metadata, FIXTURE_DATA(lb) * self,
			const struct combo *c)
{
	struct flow f = c->inner == P_AF4 ? self->f4 : self->f6;
	struct client_opts co = {.nvlan = c->nvlan, .tos = c->tos, .ttl = c->ttl, .payload = 100};
	struct encap_want w = {.outer_family = c->outer, .gue = c->gue, .nvlan = c->nvlan};
	uint32_t be = c->outer == P_AF4 ? 1 : 2;
	uint8_t in[512], exp[600];
	struct maglev_vip_stats vs;
	struct maglev_backend_stats bs;
	struct run_result r;
	size_t n, elen;

	f.proto = c->proto;
	ASSERT_EQ(0, add_vip(self->dp, f.dst, c->inner, c->vip_port, c->proto, 7,
			     c->gue ? MAGLEV_ENCAP_GUE : MAGLEV_ENCAP_IPIP, c->gue_port));
	ASSERT_EQ(0, fill_table(self->dp, 7, be));
	n = build_client(in, &f, &co);
	w.gue_port = c->gue_port ? c->gue_port : MAGLEV_GUE_PORT_DEFAULT;
	memcpy(w.backend, be == 1 ? self->be4 : self->be6, 16);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	memcpy(w.src6, SRC6, 16);
	w.src6_plen = SRC6_PLEN;
	elen = build_encap(exp, in, n, &f, &w);

	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_BYTES(r.out, r.len, exp, elen);
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_TX_FORWARD));
	ASSERT_EQ(0, maglev_dp_vip_stats(self->dp, 7, &vs));
	ASSERT_EQ(1, vs.packets);
	ASSERT_EQ(n, vs.bytes);
	ASSERT_EQ(1, vs.new_flows);
	ASSERT_EQ(0, maglev_dp_backend_stats(self->dp, be, &bs));
	ASSERT_EQ(1, bs.packets);
	ASSERT_EQ(1, bs.new_flows);

	/* The second packet of the flow hits the connection table and is
	 * encapsulated identically.
	 */
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_BYTES(r.out, r.len, exp, elen);
	ASSERT_EQ(1, counter(self->dp, MAGLEV_CTR_CONN_HIT));
}

#define COMBO_TEST(name, ...)                     \
	TEST_F(lb, name)                          \
	{                                         \
		struct combo c = {__VA_ARGS__};   \
		check_combo(_metadata, self, &c); \
	}

COMBO_TEST(ipip_4in4_tcp, .inner = P_AF4, .outer = P_AF4, .proto = IPPROTO_TCP, .vip_port = 80)
COMBO_TEST(ipip_6in6_tcp, .inner = P_AF6, .outer = P_AF6, .proto = IPPROTO_TCP, .vip_port = 80)
COMBO_TEST(ipip_4in6_tcp, .inner = P_AF4, .outer = P_AF6, .proto = IPPROTO_TCP, .vip_port = 80)
COMBO_TEST(ipip_6in4_tcp, .inner = P_AF6, .outer = P_AF4, .proto = IPPROTO_TCP, .vip_port = 80)
COMBO_TEST(ipip_4in4_udp, .inner = P_AF4, .outer = P_AF4, .proto = IPPROTO_UDP, .vip_port = 80)
COMBO_TEST(ipip_6in6_udp, .inner = P_AF6, .outer = P_AF6, .proto = IPPROTO_UDP, .vip_port = 80)
COMBO_TEST(gue_4in4, .inner = P_AF4, .outer = P_AF4, .gue = 1, .proto = IPPROTO_TCP, .vip_port = 80,
	   .gue_port = 9000)
COMBO_TEST(gue_6in6, .inner = P_AF6, .outer = P_AF6, .gue = 1, .proto = IPPROTO_TCP, .vip_port = 80,
	   .gue_port = 9000)
COMBO_TEST(gue_4in6, .inner = P_AF4, .outer = P_AF6, .gue = 1, .proto = IPPROTO_UDP, .vip_port = 80,
	   .gue_port = 9000)
COMBO_TEST(gue_6in4_default_port, .inner = P_AF6, .outer = P_AF4, .gue = 1, .proto = IPPROTO_UDP,
	   .vip_port = 80)
COMBO_TEST(dscp_ecn_copied_v4, .inner = P_AF4, .outer = P_AF6, .proto = IPPROTO_TCP, .vip_port = 80,
	   .tos = 0xb9)
COMBO_TEST(dscp_ecn_copied_v6, .inner = P_AF6, .outer = P_AF4, .proto = IPPROTO_TCP, .vip_port = 80,
	   .tos = 0x8a)
COMBO_TEST(ttl_2_forwarded_as_1, .inner = P_AF4, .outer = P_AF4, .proto = IPPROTO_TCP,
	   .vip_port = 80, .ttl = 2)
COMBO_TEST(vlan_one_tag, .inner = P_AF4, .outer = P_AF4, .nvlan = 1, .proto = IPPROTO_TCP,
	   .vip_port = 80)
COMBO_TEST(vlan_two_tags_v6_gue, .inner = P_AF6, .outer = P_AF6, .nvlan = 2, .gue = 1,
	   .proto = IPPROTO_TCP, .vip_port = 80)
COMBO_TEST(vlan_two_tags_4in6, .inner = P_AF4, .outer = P_AF6, .nvlan = 2, .proto = IPPROTO_UDP,
	   .vip_port = 80)
COMBO_TEST(wildcard_vip_v4, .inner = P_AF4, .outer = P_AF4, .proto = IPPROTO_TCP, .vip_port = 0)
COMBO_TEST(wildcard_vip_v6, .inner = P_AF6, .outer = P_AF6, .proto = IPPROTO_UDP, .vip_port = 0)

/* An exact-port VIP wins over the all-ports VIP of the same address. */
TEST_F(lb, exact_port_before_wildcard)
{
	struct client_opts co = {.payload = 10};
	struct maglev_vip_key k;
	struct flow f = self->f4;
	struct run_result r;
	uint8_t in[256], dst[16];
	size_t n;

	ASSERT_EQ(0, add_vip(self->dp, self->vip4, P_AF4, 0, IPPROTO_TCP, 3, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->vip4, P_AF4, 443, IPPROTO_TCP, 4, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 3, 1));
	ASSERT_EQ(0, fill_table(self->dp, 4, 2));
	f.dport = 443;
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	outer_dst(&r, 14, dst);
	ASSERT_EQ(0, memcmp(dst, self->be6, 16));
	f.dport = 8443;
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	outer_dst(&r, 14, dst);
	ASSERT_EQ(0, memcmp(dst, self->be4, 16));
	/* Deleting the exact VIP falls back to the wildcard. */
	vip_key(&k, self->vip4, P_AF4, 443, IPPROTO_TCP);
	ASSERT_EQ(0, maglev_dp_vip_del(self->dp, &k));
	f.dport = 443;
	f.sport++;
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	outer_dst(&r, 14, dst);
	ASSERT_EQ(0, memcmp(dst, self->be4, 16));
}

/* Anything not for a VIP goes up untouched, each with its reason. */
TEST_F(lb, non_vip_pass_untouched)
{
	struct client_opts co = {.payload = 20};
	struct flow f = self->f4;
	uint8_t in[256], arp[60] = {0};
	struct run_result r;
	size_t n;

	ASSERT_EQ(0, add_vip(self->dp, self->vip4, P_AF4, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 1));

	v4addr(f.dst, 203, 0, 113, 99); /* no VIP at this address */
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);

	f = self->f4;
	f.dport = 81; /* VIP address, no VIP on this port */
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);

	f = self->f4;
	f.proto = IPPROTO_UDP; /* VIP is TCP only */
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	ASSERT_EQ(3, reason_count(self->dp, MAGLEV_REASON_PASS_NOT_VIP));

	f = self->f6; /* IPv6 with no VIP at all */
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	ASSERT_EQ(4, reason_count(self->dp, MAGLEV_REASON_PASS_NOT_VIP));

	put_eth(arp, MAC_LB, MAC_CLIENT_RTR, 0, 0x0806);
	ASSERT_EQ(0, run_prog(self->prog, arp, sizeof(arp), &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, arp, sizeof(arp));
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_PASS_NOT_IP));
	ASSERT_EQ(0, reason_count(self->dp, MAGLEV_REASON_TX_FORWARD));
}

TEST_F(lb, ttl_1_dropped)
{
	struct client_opts co = {.ttl = 1};
	struct flow f = self->f6;
	struct run_result r;
	uint8_t in[256];
	size_t n;

	ASSERT_EQ(0, add_vip(self->dp, self->vip6, P_AF6, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 2));
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_DROP, r.action);
	f = self->f4;
	ASSERT_EQ(0, add_vip(self->dp, self->vip4, P_AF4, 80, IPPROTO_TCP, 1, 0, 0));
	n = build_client(in, &f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_DROP, r.action);
	ASSERT_EQ(2, reason_count(self->dp, MAGLEV_REASON_DROP_TTL));
}

/* Outer IPv6 source with a /120 prefix: only the last 8 bits vary. */
TEST_F(lb, outer_source_prefix_v6_120)
{
	struct client_opts co = {.payload = 30};
	struct encap_want w = {.outer_family = P_AF6, .src6_plen = 120};
	struct maglev_config cfg;
	struct flow f = self->f4;
	uint8_t in[256], exp[400];
	struct run_result r;
	size_t n, elen;
	int i;

	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &cfg));
	cfg.src6_plen = 120;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	ASSERT_EQ(0, add_vip(self->dp, self->vip4, P_AF4, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 2));
	memcpy(w.backend, self->be6, 16);
	memcpy(w.src6, SRC6, 16);
	for (i = 0; i < 16; i++) {
		f.sport = (uint16_t)(1000 + i * 977);
		n = build_client(in, &f, &co);
		elen = build_encap(exp, in, n, &f, &w);
		ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
		ASSERT_EQ(XDP_TX, r.action);
		ASSERT_BYTES(r.out, r.len, exp, elen);
		ASSERT_EQ(0, memcmp(r.out + 14 + 8, SRC6, 15));
	}
}

/* Config validation: bad prefix lengths and MTUs are refused. */
TEST_F(lb, config_rejects_bad_values)
{
	struct maglev_config cfg;

	base_config(&cfg);
	cfg.src4_plen = 33;
	ASSERT_EQ(-EINVAL, maglev_dp_set_config(self->dp, &cfg));
	base_config(&cfg);
	cfg.src6_plen = 129;
	ASSERT_EQ(-EINVAL, maglev_dp_set_config(self->dp, &cfg));
	base_config(&cfg);
	cfg.mtu = 500;
	ASSERT_EQ(-EINVAL, maglev_dp_set_config(self->dp, &cfg));
}

/* Frame from ifindex (what BPF_PROG_TEST_RUN's ctx says it came in on). */
static int run_on(int prog, uint32_t ifindex, const void *in, size_t len, struct run_result *r)
{
	struct xdp_md md = {.data_end = (uint32_t)len, .ingress_ifindex = ifindex};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out), .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = 1);
	int ret = bpf_prog_test_run_opts(prog, &o);

	r->action = o.retval;
	r->len = o.data_size_out;
	return ret;
}

static uint32_t if_l2_differs(struct maglev_dp *dp)
{
	struct maglev_config cfg;

	return maglev_dp_get_config(dp, &cfg) ? 0xffffffff : cfg.if_l2_differs;
}

/* The frame sent for in (of length n) on lo: dst and src MAC as expected,
 * the rest byte for byte as the encapsulation of the config's pair.
 */
static void check_macs(struct __test_metadata *_metadata, int prog, const uint8_t *in, size_t n,
		       const uint8_t *exp, size_t elen, const uint8_t dst[6], const uint8_t src[6])
{
	struct run_result r;

	ASSERT_EQ(0, run_on(prog, 1, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_EQ(0, memcmp(r.out, dst, 6));
	ASSERT_EQ(0, memcmp(r.out + 6, src, 6));
	ASSERT_BYTES(r.out + 12, r.len - 12, exp + 12, elen - 12);
}

/*
 * Each interface its own MACs (maglev_ifl2): a frame leaves with its ingress
 * interface's pair, else the config's. The datapath skips the lookup while
 * no entry differs from the config's pair (if_l2_differs, which the library
 * keeps whatever the caller writes): the frames must be the same as with
 * the lookup, through every write that changes the answer.
 */
TEST_F(lb, per_interface_macs)
{
	static const uint8_t nh_x[6] = {0x02, 0, 0, 0, 0xaa, 1},
			     src_x[6] = {0x02, 0, 0, 0, 0xbb, 1},
			     nh_new[6] = {0x02, 0, 0, 0, 0xcc, 1};
	struct encap_want w = {.outer_family = P_AF4};
	struct maglev_if_l2 lo_x, same;
	struct maglev_config cfg;
	uint8_t in[256], exp[400];
	size_t n, elen;

	memcpy(lo_x.nexthop_mac, nh_x, 6);
	memcpy(lo_x.src_mac, src_x, 6);
	memcpy(same.nexthop_mac, MAC_NEXTHOP, 6);
	memcpy(same.src_mac, MAC_LB, 6);
	ASSERT_EQ(0, add_vip(self->dp, self->vip4, P_AF4, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 1));
	n = build_client(in, &self->f4, &(struct client_opts){.payload = 30});
	memcpy(w.backend, self->be4, 16);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	elen = build_encap(exp, in, n, &self->f4, &w);

	/* No entry: the config's pair, no lookup. */
	ASSERT_EQ(0, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, MAC_NEXTHOP, MAC_LB);
	/* lo's own pair. */
	ASSERT_EQ(0, maglev_dp_if_l2_set(self->dp, 1, &lo_x));
	ASSERT_EQ(1, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, nh_x, src_x);
	/* A config written with the word cleared keeps it set. */
	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &cfg));
	cfg.if_l2_differs = 0;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	ASSERT_EQ(1, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, nh_x, src_x);
	/* lo back to the config's pair, another interface differing: still
	 * looked up, and lo's frames carry the config's pair.
	 */
	ASSERT_EQ(0, maglev_dp_if_l2_set(self->dp, 999999, &lo_x));
	ASSERT_EQ(0, maglev_dp_if_l2_set(self->dp, 1, &same));
	ASSERT_EQ(1, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, MAC_NEXTHOP, MAC_LB);
	/* The last differing entry gone: no lookup. */
	ASSERT_EQ(0, maglev_dp_if_l2_delete(self->dp, 999999));
	ASSERT_EQ(0, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, MAC_NEXTHOP, MAC_LB);
	/* A new next hop in the config while lo's entry holds the old pair:
	 * the entry differs now, and its pair goes out until it is rewritten.
	 */
	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &cfg));
	memcpy(cfg.nexthop_mac, nh_new, 6);
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
	ASSERT_EQ(1, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, MAC_NEXTHOP, MAC_LB);
	ASSERT_EQ(0, maglev_dp_if_l2_delete(self->dp, 1));
	ASSERT_EQ(0, if_l2_differs(self->dp));
	check_macs(_metadata, self->prog, in, n, exp, elen, nh_new, MAC_LB);
	/* No such entry: an error, nothing changed. */
	ASSERT_EQ(-ENOENT, maglev_dp_if_l2_delete(self->dp, 1));
	ASSERT_EQ(0, if_l2_differs(self->dp));
}

TEST_HARNESS_MAIN
