// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ICMP: echo replies for VIP addresses, "fragmentation needed" / "packet too
 * big" for packets that would exceed the MTU once encapsulated, and ICMP
 * errors about a VIP flow following that flow to its backend.
 */
#include "fixture.h"

FIXTURE(icmp)
{
	struct maglev_dp *dp;
	int prog;
	uint8_t be4[16], be6[16], be4b[16], router4[16], router6[16];
	struct flow f4, f6;
};

FIXTURE_SETUP(icmp)
{
	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
	v4addr(self->be4, 192, 0, 2, 21);
	v4addr(self->be4b, 192, 0, 2, 22);
	v6addr(self->be6, 0xb, 21);
	v4addr(self->router4, 198, 51, 100, 1);
	v6addr(self->router6, 0xc, 1);
	ASSERT_EQ(0, add_backend(self->dp, 1, self->be4, P_AF4));
	ASSERT_EQ(0, add_backend(self->dp, 2, self->be6, P_AF6));
	ASSERT_EQ(0, add_backend(self->dp, 3, self->be4b, P_AF4));
	client_flows(&self->f4, &self->f6);
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 80, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 80, IPPROTO_TCP, 2, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 1));
	ASSERT_EQ(0, fill_table(self->dp, 2, 2));
}

FIXTURE_TEARDOWN(icmp)
{
	maglev_dp_close(self->dp);
}

/* Echo request (or reply, swapped = 1) between client and VIP. */
static size_t build_echo(uint8_t *b, const struct flow *f, int nvlan, int reply, uint8_t ttl)
{
	const uint8_t *s = reply ? f->dst : f->src, *d = reply ? f->src : f->dst;
	size_t off, i, len = 8 + 32;
	uint8_t *ic;

	off = put_eth(b, reply ? MAC_CLIENT_RTR : MAC_LB, reply ? MAC_LB : MAC_CLIENT_RTR, nvlan,
		      f->family == P_AF4 ? 0x0800 : 0x86dd);
	if (f->family == P_AF4)
		off += put_ip4(b + off, 0, (uint16_t)(20 + len), 0, ttl, 1, s, d);
	else
		off += put_ip6(b + off, 0, 0x12345, (uint16_t)len, 58, ttl, s, d);
	ic = b + off;
	memset(ic, 0, len);
	if (f->family == P_AF4)
		ic[0] = reply ? 0 : 8;
	else
		ic[0] = reply ? 129 : 128;
	put16(ic + 4, 0x4242);
	put16(ic + 6, 7);
	for (i = 8; i < len; i++)
		ic[i] = (uint8_t)i;
	if (f->family == P_AF4)
		put16(ic + 2, csum_finish(csum_add(0, ic, len)));
	else
		put16(ic + 2, l4_csum(P_AF6, s, d, 58, ic, len));
	return off + len;
}

static void echo_case(struct __test_metadata *_metadata, FIXTURE_DATA(icmp) * self,
		      const struct flow *f, int nvlan)
{
	uint8_t in[256], exp[256];
	struct run_result r;
	size_t n, elen;
	int i;

	n = build_echo(in, f, nvlan, 0, 50);
	elen = build_echo(exp, f, nvlan, 1, 64);
	for (i = 0; i < nvlan; i++)
		memcpy(exp + 12 + 4 * i, in + 12 + 4 * i, 4);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_BYTES(r.out, r.len, exp, elen);
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_TX_ECHO_REPLY));
}

TEST_F(icmp, echo_v4)
{
	echo_case(_metadata, self, &self->f4, 0);
}

TEST_F(icmp, echo_v6)
{
	echo_case(_metadata, self, &self->f6, 0);
}

TEST_F(icmp, echo_v4_vlan)
{
	echo_case(_metadata, self, &self->f4, 1);
}

TEST_F(icmp, echo_to_non_vip_passed)
{
	struct flow f = self->f4;
	struct run_result r;
	uint8_t in[256];
	size_t n;

	v4addr(f.dst, 203, 0, 113, 99);
	n = build_echo(in, &f, 0, 0, 50);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
}

/* The VIP address filter is a hash: a non-VIP address sharing a VIP's slot
 * must not be answered (found by the packet fuzzer).
 */
static uint32_t filter_slot(const uint8_t *a, int family)
{
	uint32_t w[4];

	memcpy(w, a, 16);
	return maglev_vip_filter_slot(w, family == P_AF4 ? MAGLEV_AF_INET : MAGLEV_AF_INET6);
}

static void echo_collision_case(struct __test_metadata *_metadata, FIXTURE_DATA(icmp) * self,
				const struct flow *vip, const uint8_t *other)
{
	struct flow f = *vip;
	struct run_result r;
	uint8_t in[256];
	size_t n;

	ASSERT_EQ(filter_slot(vip->dst, vip->family), filter_slot(other, vip->family));
	ASSERT_NE(0, memcmp(vip->dst, other, 16));
	memcpy(f.dst, other, 16);
	n = build_echo(in, &f, 0, 0, 50);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	/* The VIP itself is still answered. */
	echo_case(_metadata, self, vip, 0);
}

TEST_F(icmp, echo_to_filter_collision_v6_passed)
{
	uint8_t other[16];

	/* Same xor of the four address words: the same filter slot. (No two
	 * IPv4 addresses of the documentation ranges share a slot; the check
	 * is the same code for both families.)
	 */
	memcpy(other, self->f6.dst, 16);
	other[9] ^= 0x11;
	other[13] ^= 0x11;
	echo_collision_case(_metadata, self, &self->f6, other);
}

TEST_F(icmp, echo_after_vip_delete_passed)
{
	struct maglev_vip_key k;
	struct run_result r;
	uint8_t in[256];
	size_t n;

	vip_key(&k, self->f4.dst, P_AF4, 80, IPPROTO_TCP);
	ASSERT_EQ(0, maglev_dp_vip_del(self->dp, &k));
	n = build_echo(in, &self->f4, 0, 0, 50);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
}

/* Expected "fragmentation needed" / "packet too big" for client frame in. */
static size_t build_too_big(uint8_t *b, const uint8_t *in, const struct flow *f, uint32_t mtu)
{
	size_t off = put_eth(b, MAC_CLIENT_RTR, MAC_LB, 0, f->family == P_AF4 ? 0x0800 : 0x86dd);
	size_t q = f->family == P_AF4 ? 28 : 48;
	uint8_t *ic;

	if (f->family == P_AF4) {
		put_ip4(b + off, 0, (uint16_t)(20 + 8 + q), 0, 64, 1, f->dst, f->src);
		put16(b + off + 4, 0); /* IP id 0 */
		put16(b + off + 10, 0);
		put16(b + off + 10, csum_finish(csum_add(0, b + off, 20)));
		off += 20;
	} else
		off += put_ip6(b + off, 0, 0, (uint16_t)(8 + q), 58, 64, f->dst, f->src);
	ic = b + off;
	memset(ic, 0, 8);
	if (f->family == P_AF4) {
		ic[0] = 3;
		ic[1] = 4;
		put16(ic + 6, (uint16_t)mtu);
	} else {
		ic[0] = 2;
		put32(ic + 4, mtu);
	}
	memcpy(ic + 8, in + 14, q);
	if (f->family == P_AF4)
		put16(ic + 2, csum_finish(csum_add(0, ic, 8 + q)));
	else
		put16(ic + 2, l4_csum(P_AF6, f->dst, f->src, 58, ic, 8 + q));
	return off + 8 + q;
}

static void set_mtu(struct __test_metadata *_metadata, FIXTURE_DATA(icmp) * self, uint32_t mtu)
{
	struct maglev_config cfg;

	ASSERT_EQ(0, maglev_dp_get_config(self->dp, &cfg));
	cfg.mtu = mtu;
	ASSERT_EQ(0, maglev_dp_set_config(self->dp, &cfg));
}

/* l3 bytes of client packet: at the MTU minus overhead it is forwarded,
 * one byte more gets the ICMP error with the MTU left for the client.
 */
static void mtu_case(struct __test_metadata *_metadata, FIXTURE_DATA(icmp) * self,
		     const struct flow *f, size_t over)
{
	size_t hdr = (f->family == P_AF4 ? 20 : 40) + 20;
	struct client_opts co = {.payload = 1500 - over - hdr};
	uint8_t in[2048], exp[256];
	struct run_result r;
	size_t n, elen;

	set_mtu(_metadata, self, 1500);
	n = build_client(in, f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_EQ(n + over, r.len);

	co.payload++;
	n = build_client(in, f, &co);
	elen = build_too_big(exp, in, f, (uint32_t)(1500 - over));
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_BYTES(r.out, r.len, exp, elen);
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_TX_TOO_BIG));
}

TEST_F(icmp, mtu_frag_needed_v4_ipip)
{
	mtu_case(_metadata, self, &self->f4, 20);
}

TEST_F(icmp, mtu_frag_needed_v4_gue_v6_outer)
{
	ASSERT_EQ(0,
		  add_vip(self->dp, self->f4.dst, P_AF4, 80, IPPROTO_TCP, 1, MAGLEV_ENCAP_GUE, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 2));
	mtu_case(_metadata, self, &self->f4, 40 + 12);
}

TEST_F(icmp, mtu_packet_too_big_v6)
{
	mtu_case(_metadata, self, &self->f6, 40);
}

TEST_F(icmp, mtu_no_df_passed_to_stack)
{
	struct client_opts co = {.payload = 1500, .no_df = 1};
	struct run_result r;
	uint8_t in[2048];
	size_t n;

	set_mtu(_metadata, self, 1500);
	n = build_client(in, &self->f4, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_PASS_NEED_FRAG));
}

/* A client frame of f with 8 bytes of IPv4 options or an 8-byte IPv6
 * destination options header.
 */
static size_t build_with_options(uint8_t *in, const struct flow *f, const struct client_opts *co)
{
	const uint8_t t[] = {60};
	const size_t l[] = {8};
	size_t n = build_client(in, f, co);

	if (f->family == P_AF6)
		insert_ipv6_ext(in, &n, 14, t, l, 1);
	else
		insert_ipv4_nops(in, &n, 14, 8);
	return n;
}

/* Over the MTU with IPv4 options or IPv6 extension headers: the too-big
 * quote (fixed header + 8 bytes) would not reach the ports, so the kernel
 * answers; at the MTU such a packet is forwarded.
 */
TEST_F(icmp, mtu_with_options_passed_to_stack)
{
	struct run_result r;
	uint8_t in[2048];
	size_t n;
	int fam;

	set_mtu(_metadata, self, 1500);
	for (fam = 0; fam < 2; fam++) {
		const struct flow *f = fam ? &self->f6 : &self->f4;
		size_t over = fam ? 40 : 20, hdr = (fam ? 40 + 8 : 20 + 8) + 20;
		struct client_opts co = {.payload = 1500 - over - hdr};

		n = build_with_options(in, f, &co);
		ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
		ASSERT_EQ(XDP_TX, r.action);
		ASSERT_EQ(n + over, r.len);
		co.payload++;
		n = build_with_options(in, f, &co);
		ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
		ASSERT_EQ(XDP_PASS, r.action);
		ASSERT_BYTES(r.out, r.len, in, n);
	}
	ASSERT_EQ(2, reason_count(self->dp, MAGLEV_REASON_PASS_NEED_FRAG));
	ASSERT_EQ(0, reason_count(self->dp, MAGLEV_REASON_TX_TOO_BIG));
}

/*
 * The flow is established on backend A; the table then moves to backend B.
 * The ICMP error about the flow must still reach A, encapsulated like the
 * flow's own packets (same outer source, since that derives from the flow).
 */
static void icmp_error_case(struct __test_metadata *_metadata, FIXTURE_DATA(icmp) * self,
			    const struct flow *f, uint8_t type, uint8_t code)
{
	struct client_opts co = {.tcp_flags = 0x02};
	struct encap_want w = {.outer_family = P_AF4};
	uint32_t vip_id = f->family == P_AF4 ? 1 : 2;
	uint8_t in[512], exp[600];
	struct flow g = *f;
	struct run_result r;
	size_t n, elen;

	ASSERT_EQ(0, fill_table(self->dp, vip_id, 1));
	n = build_client(in, f, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_EQ(0, fill_table(self->dp, vip_id, 3));

	n = build_icmp_error(in, f, f->family == P_AF4 ? self->router4 : self->router6, type, code,
			     f->family == P_AF4 ? 28 : 48);
	memcpy(w.backend, self->be4, 16);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	elen = build_encap(exp, in, n, f, &w);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_BYTES(r.out, r.len, exp, elen);
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_TX_ICMP_FORWARD));

	/* A flow without an entry follows the current table (backend B). */
	g.sport++;
	n = build_icmp_error(in, &g, f->family == P_AF4 ? self->router4 : self->router6, type, code,
			     f->family == P_AF4 ? 28 : 48);
	memcpy(w.backend, self->be4b, 16);
	elen = build_encap(exp, in, n, &g, &w);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_BYTES(r.out, r.len, exp, elen);
}

TEST_F(icmp, frag_needed_follows_flow_v4)
{
	icmp_error_case(_metadata, self, &self->f4, 3, 4);
}

TEST_F(icmp, port_unreachable_follows_flow_v4)
{
	icmp_error_case(_metadata, self, &self->f4, 3, 3);
}

TEST_F(icmp, packet_too_big_follows_flow_v6)
{
	icmp_error_case(_metadata, self, &self->f6, 2, 0);
}

TEST_F(icmp, dest_unreach_follows_flow_v6)
{
	icmp_error_case(_metadata, self, &self->f6, 1, 4);
}

TEST_F(icmp, error_about_non_vip_passed)
{
	struct flow f = self->f4;
	struct run_result r;
	uint8_t in[512];
	size_t n;

	f.dport = 8080; /* no VIP on this port: not our flow */
	n = build_icmp_error(in, &f, self->router4, 3, 4, 28);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_PASS_ICMP));
}

TEST_F(icmp, error_with_truncated_quote_dropped)
{
	struct run_result r;
	uint8_t in[512];
	size_t n;

	n = build_icmp_error(in, &self->f4, self->router4, 3, 4, 22);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_DROP, r.action);
	n = build_icmp_error(in, &self->f6, self->router6, 2, 0, 30);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_DROP, r.action);
	ASSERT_EQ(2, reason_count(self->dp, MAGLEV_REASON_DROP_ICMP_BAD));
}

TEST_F(icmp, other_icmp_types_passed)
{
	struct run_result r;
	uint8_t in[512];
	size_t n;

	n = build_icmp_error(in, &self->f4, self->router4, 11, 0, 28); /* time exceeded */
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	n = build_icmp_error(in, &self->f6, self->router6, 135, 0, 48); /* neighbour solicit */
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	ASSERT_BYTES(r.out, r.len, in, n);
	ASSERT_EQ(2, reason_count(self->dp, MAGLEV_REASON_PASS_ICMP));
}

TEST_HARNESS_MAIN
