// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Seed corpus of the packet fuzzer: every packet shape the XDP tests use
 * (selftests/xdp), aimed at the fuzzer's set-up (xdp_fuzz.c) so that every
 * reason the program can reach under BPF_PROG_TEST_RUN has seeds, and every
 * encapsulation (IPIP and GUE, all four family pairs, VLAN depths) a
 * forwarded one. Built with pkt.h; each seed is checked to reach its reason
 * before it is written.
 */
#include "xdp_fuzz.h"

#define L3 14

enum {
	VIP4_TCP80,   /* 203.0.113.10 TCP 80, IPIP, backends 1 2 3 */
	VIP4_UDP53,   /* 203.0.113.10 UDP 53, GUE 9000, backends 1 4 */
	VIP4_TCPANY,  /* 203.0.113.11 TCP all ports, IPIP, backends 3 4 */
	VIP4_TCP443,  /* 203.0.113.11 TCP 443, GUE default port, backends 2 5 */
	VIP4_UDPANY,  /* 203.0.113.12 UDP all ports, GUE, backends 1 6(down) */
	VIP6_TCP80,   /* 2001:db8:f::10 TCP 80, IPIP, backends 1 3 4 */
	VIP6_UDPANY,  /* 2001:db8:f::10 UDP all ports, GUE, backends 2 3 */
	VIP6_NOTABLE, /* 2001:db8:f::11 TCP 443, no table */
	VIP6_UDP4500, /* 2001:db8:f::12 UDP 4500, GUE, backends 4 6(down) */
};

static fz_emit_fn emit;
static int failures;
static uint8_t b[2048];
static size_t n;

static void out(const char *name, int reason)
{
	if (emit(name, b, n, reason))
		failures++;
}

/* A client flow to VIP i (dport: the VIP's port, or 8080 for all-ports). */
static struct flow to_vip(int i)
{
	const struct fz_vip *v = &fz_vips[i];
	struct flow f = {.family = v->family, .proto = v->proto, .sport = 40001};

	if (v->family == P_AF4) {
		const uint8_t c4[4] = {198, 51, 100, 7};

		memcpy(f.src, c4, 4);
	} else {
		const uint8_t c6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0c, [15] = 7};

		memcpy(f.src, c6, 16);
	}
	memcpy(f.dst, v->addr, 16);
	f.dport = v->port ? v->port : 8080;
	return f;
}

/* Move the source port until the userspace pick is backend idx. */
static struct flow aim(int i, uint32_t idx)
{
	struct flow f = to_vip(i);

	while (fz_pick(&fz_vips[i], &f) != idx)
		f.sport++;
	return f;
}

static void client(const struct flow *f, int nvlan, size_t payload, uint8_t flags)
{
	struct client_opts co = {.nvlan = nvlan, .payload = payload, .tcp_flags = flags};

	n = build_client(b, f, &co);
}

static void fix_ip4(uint8_t *ip)
{
	put16(ip + 10, 0);
	put16(ip + 10, csum_finish(csum_add(0, ip, (ip[0] & 0xf) * 4)));
}

/* Extension headers (types[i], lens[i] bytes) between IPv6 header and L4. */
static void insert_ext(const uint8_t *types, const size_t *lens, int count)
{
	insert_ipv6_ext(b, &n, L3, types, lens, count);
}

static void echo(const struct flow *f, int nvlan)
{
	size_t off, i, len = 8 + 32;
	uint8_t *ic;

	off = put_eth(b, MAC_LB, MAC_CLIENT_RTR, nvlan, f->family == P_AF4 ? 0x0800 : 0x86dd);
	if (f->family == P_AF4)
		off += put_ip4(b + off, 0, (uint16_t)(20 + len), 0, 50, 1, f->src, f->dst);
	else
		off += put_ip6(b + off, 0, 0x12345, (uint16_t)len, 58, 50, f->src, f->dst);
	ic = b + off;
	memset(ic, 0, len);
	ic[0] = f->family == P_AF4 ? 8 : 128;
	put16(ic + 4, 0x4242);
	put16(ic + 6, 7);
	for (i = 8; i < len; i++)
		ic[i] = (uint8_t)i;
	if (f->family == P_AF4)
		put16(ic + 2, csum_finish(csum_add(0, ic, len)));
	else
		put16(ic + 2, l4_csum(P_AF6, f->src, f->dst, 58, ic, len));
	n = off + len;
}

/* An ICMP error from a router about the VIP -> client packet of flow f. */
static void icmp_error(const struct flow *f, uint8_t type, uint8_t code, size_t quote)
{
	const uint8_t r4[4] = {198, 51, 100, 1};
	const uint8_t r6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0c, [15] = 1};

	n = build_icmp_error(b, f, f->family == P_AF4 ? r4 : r6, type, code, quote);
}

static void forwards(void)
{
	struct flow f;

	/* Every encapsulation and family pair, VLAN depths, wildcard VIPs. */
	f = aim(VIP4_TCP80, 1);
	client(&f, 0, 100, 0);
	out("tx_forward-ipip-4in4-tcp", MAGLEV_REASON_TX_FORWARD);
	client(&f, 1, 100, 0x02);
	out("tx_forward-ipip-4in4-vlan1-syn", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP4_TCP80, 3);
	client(&f, 2, 100, 0);
	out("tx_forward-ipip-4in6-qinq", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP4_UDP53, 1);
	client(&f, 0, 60, 0);
	out("tx_forward-gue-4in4-udp", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP4_UDP53, 4);
	client(&f, 1, 60, 0);
	out("tx_forward-gue-4in6-udp-vlan1", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP4_TCPANY, 4);
	client(&f, 0, 10, 0);
	out("tx_forward-ipip-4in6-wildcard", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP4_TCP443, 5);
	client(&f, 0, 10, 0);
	out("tx_forward-gue-default-port-draining", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP4_UDPANY, 1);
	client(&f, 0, 0, 0);
	out("tx_forward-gue-udp-wildcard-empty", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP6_TCP80, 3);
	client(&f, 0, 100, 0);
	out("tx_forward-ipip-6in6-tcp", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP6_TCP80, 1);
	client(&f, 2, 100, 0x02);
	out("tx_forward-ipip-6in4-qinq-syn", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP6_UDPANY, 3);
	client(&f, 0, 4, 0);
	out("tx_forward-gue-6in6-udp-wildcard", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP6_UDPANY, 2);
	client(&f, 1, 4, 0);
	out("tx_forward-gue-6in4-udp-vlan1", MAGLEV_REASON_TX_FORWARD);
	f = aim(VIP6_UDP4500, 4);
	client(&f, 0, 30, 0);
	out("tx_forward-gue-6in6-default-port", MAGLEV_REASON_TX_FORWARD);
	{
		struct client_opts co = {.tos = 0xb9, .ttl = 2, .payload = 20};

		f = aim(VIP4_TCP80, 2);
		n = build_client(b, &f, &co);
		out("tx_forward-tos-ttl2", MAGLEV_REASON_TX_FORWARD);
		co.tos = 0x8a;
		f = aim(VIP6_TCP80, 4);
		n = build_client(b, &f, &co);
		out("tx_forward-v6-tclass-hlim2", MAGLEV_REASON_TX_FORWARD);
	}
	/* At the MTU exactly (1400 - 20 outer - 40 headers of payload). */
	f = aim(VIP4_TCP80, 1);
	client(&f, 0, FZ_MTU - 20 - 40, 0);
	out("tx_forward-at-mtu", MAGLEV_REASON_TX_FORWARD);
	/* Ethernet padding after the IP packet travels along. */
	f = aim(VIP4_UDP53, 1);
	client(&f, 0, 2, 0);
	memset(b + n, 0, 60 - n);
	n = 60;
	out("tx_forward-padded-frame", MAGLEV_REASON_TX_FORWARD);
}

static void icmp_shapes(void)
{
	struct flow f;

	f = aim(VIP4_TCP80, 2);
	icmp_error(&f, 3, 4, 28);
	out("tx_icmp_forward-frag-needed-v4", MAGLEV_REASON_TX_ICMP_FORWARD);
	f = aim(VIP4_UDP53, 4);
	icmp_error(&f, 3, 3, 28);
	out("tx_icmp_forward-port-unreach-gue", MAGLEV_REASON_TX_ICMP_FORWARD);
	f = aim(VIP6_TCP80, 4);
	icmp_error(&f, 2, 0, 48);
	out("tx_icmp_forward-packet-too-big-v6", MAGLEV_REASON_TX_ICMP_FORWARD);
	f = aim(VIP6_UDPANY, 2);
	icmp_error(&f, 1, 4, 48);
	out("tx_icmp_forward-dest-unreach-v6-gue", MAGLEV_REASON_TX_ICMP_FORWARD);

	f = to_vip(VIP4_TCP80);
	echo(&f, 0);
	out("tx_echo_reply-v4", MAGLEV_REASON_TX_ECHO_REPLY);
	echo(&f, 1);
	out("tx_echo_reply-v4-vlan", MAGLEV_REASON_TX_ECHO_REPLY);
	f = to_vip(VIP6_NOTABLE);
	echo(&f, 0);
	out("tx_echo_reply-v6", MAGLEV_REASON_TX_ECHO_REPLY);

	f = aim(VIP4_TCP80, 3);
	client(&f, 0, FZ_MTU, 0);
	out("tx_too_big-v4-ipip6", MAGLEV_REASON_TX_TOO_BIG);
	f = aim(VIP4_TCP443, 2);
	client(&f, 1, FZ_MTU - 20 - 40 - 12 + 1, 0);
	out("tx_too_big-v4-gue-by-one", MAGLEV_REASON_TX_TOO_BIG);
	f = aim(VIP6_TCP80, 4);
	client(&f, 0, FZ_MTU, 0);
	out("tx_too_big-v6", MAGLEV_REASON_TX_TOO_BIG);
	{
		struct client_opts co = {.payload = FZ_MTU, .no_df = 1};

		f = aim(VIP4_TCP80, 1);
		n = build_client(b, &f, &co);
		out("pass_need_frag-no-df", MAGLEV_REASON_PASS_NEED_FRAG);
	}

	f = to_vip(VIP4_TCP80);
	icmp_error(&f, 11, 0, 28);
	out("pass_icmp-time-exceeded", MAGLEV_REASON_PASS_ICMP);
	f = to_vip(VIP6_TCP80);
	icmp_error(&f, 135, 0, 48);
	out("pass_icmp-neighbour-solicit", MAGLEV_REASON_PASS_ICMP);
	f = to_vip(VIP4_TCP80);
	f.dport = 8080;
	icmp_error(&f, 3, 4, 28);
	out("pass_icmp-error-about-non-vip", MAGLEV_REASON_PASS_ICMP);
	f = to_vip(VIP4_TCP80);
	icmp_error(&f, 3, 4, 22);
	out("drop_icmp_bad-short-quote-v4", MAGLEV_REASON_DROP_ICMP_BAD);
	f = to_vip(VIP6_TCP80);
	icmp_error(&f, 2, 0, 30);
	out("drop_icmp_bad-short-quote-v6", MAGLEV_REASON_DROP_ICMP_BAD);
	f = to_vip(VIP4_TCP80);
	icmp_error(&f, 3, 4, 28);
	b[L3 + 28] = 0x65;
	out("drop_icmp_bad-quote-version", MAGLEV_REASON_DROP_ICMP_BAD);
	f = to_vip(VIP4_TCP80);
	echo(&f, 0);
	n = L3 + 20 + 4;
	put16(b + L3 + 2, 24);
	fix_ip4(b + L3);
	out("drop_l4_trunc-icmp-header", MAGLEV_REASON_DROP_L4_TRUNC);
}

static void parse_shapes(void)
{
	struct flow f4 = aim(VIP4_TCP80, 1), f6 = aim(VIP6_TCP80, 3), u4, u6;
	uint8_t tmp[2048];

	u4 = aim(VIP4_UDP53, 1);
	u6 = aim(VIP6_UDPANY, 2);

	client(&f4, 0, 0, 0);
	put16(b + 12, 0x8100);
	n = 16;
	out("drop_l2_trunc-vlan", MAGLEV_REASON_DROP_L2_TRUNC);
	client(&f4, 2, 0, 0);
	n = 14 + 4 + 2;
	out("drop_l2_trunc-second-vlan", MAGLEV_REASON_DROP_L2_TRUNC);
	client(&f4, 2, 0, 0);
	put16(b + 20, 0x8100);
	out("pass_vlan_depth-three-tags", MAGLEV_REASON_PASS_VLAN_DEPTH);

	memset(b, 0, 60);
	n = put_eth(b, MAC_LB, MAC_CLIENT_RTR, 0, 0x0806);
	n = 60;
	out("pass_not_ip-arp", MAGLEV_REASON_PASS_NOT_IP);
	n = put_eth(b, MAC_LB, MAC_CLIENT_RTR, 1, 0x88cc);
	n = 64;
	out("pass_not_ip-lldp-vlan", MAGLEV_REASON_PASS_NOT_IP);

	{
		struct flow g = f4;

		g.dst[3] = 99;
		client(&g, 0, 20, 0);
		out("pass_not_vip-v4-address", MAGLEV_REASON_PASS_NOT_VIP);
		b[L3 + 19] = 98;
		put16(b + L3 + 2, 9999);
		fix_ip4(b + L3);
		out("pass_not_vip-v4-malformed", MAGLEV_REASON_PASS_NOT_VIP);
		g = f4;
		g.dport = 81;
		client(&g, 0, 20, 0);
		out("pass_not_vip-v4-port", MAGLEV_REASON_PASS_NOT_VIP);
		g = f4;
		g.proto = IPPROTO_UDP;
		client(&g, 0, 20, 0);
		out("pass_not_vip-v4-proto", MAGLEV_REASON_PASS_NOT_VIP);
		g = f6;
		g.dst[15] = 0x99;
		client(&g, 1, 20, 0);
		out("pass_not_vip-v6", MAGLEV_REASON_PASS_NOT_VIP);
	}

	client(&f4, 0, 0, 0);
	n = L3 + 19;
	out("drop_l3_trunc-v4", MAGLEV_REASON_DROP_L3_TRUNC);
	client(&f4, 0, 0, 0);
	b[L3] = 0x65;
	out("drop_l3_bad-v4-version", MAGLEV_REASON_DROP_L3_BAD);
	client(&f4, 0, 0, 0);
	b[L3] = 0x44;
	out("drop_l3_bad-v4-ihl", MAGLEV_REASON_DROP_L3_BAD);
	client(&f4, 0, 10, 0);
	put16(b + L3 + 2, (uint16_t)(n - L3 + 1));
	fix_ip4(b + L3);
	out("drop_l3_bad-v4-tot-beyond", MAGLEV_REASON_DROP_L3_BAD);
	client(&f4, 0, 10, 0);
	put16(b + L3 + 2, 19);
	fix_ip4(b + L3);
	out("drop_l3_bad-v4-tot-below", MAGLEV_REASON_DROP_L3_BAD);
	client(&f4, 0, 10, 0);
	put16(b + L3 + 6, 0x2000);
	fix_ip4(b + L3);
	out("pass_ip_frag-mf", MAGLEV_REASON_PASS_IP_FRAG);
	client(&u4, 0, 10, 0);
	put16(b + L3 + 6, 0x0010);
	fix_ip4(b + L3);
	out("pass_ip_frag-offset", MAGLEV_REASON_PASS_IP_FRAG);
	client(&f4, 0, 10, 0);
	memcpy(tmp, b, n);
	memcpy(b + L3 + 24, tmp + L3 + 20, n - L3 - 20);
	memset(b + L3 + 20, 1, 4);
	n += 4;
	b[L3] = 0x46;
	put16(b + L3 + 2, (uint16_t)(n - L3));
	fix_ip4(b + L3);
	out("tx_forward-ip-options-nop", MAGLEV_REASON_TX_FORWARD);
	b[L3 + 9] = 1; /* ICMP with options: the slow path */
	fix_ip4(b + L3);
	out("pass_ip_options-icmp", MAGLEV_REASON_PASS_IP_OPTIONS);
	client(&f4, 0, 10, 0);
	b[L3 + 9] = 47;
	fix_ip4(b + L3);
	out("pass_l4_proto-gre", MAGLEV_REASON_PASS_L4_PROTO);

	client(&f4, 0, 0, 0);
	n = L3 + 20 + 19;
	put16(b + L3 + 2, 39);
	fix_ip4(b + L3);
	out("drop_l4_trunc-tcp", MAGLEV_REASON_DROP_L4_TRUNC);
	client(&f4, 0, 10, 0);
	b[L3 + 20 + 12] = 4 << 4;
	out("drop_l4_bad-doff-below-5", MAGLEV_REASON_DROP_L4_BAD);
	client(&f4, 0, 10, 0);
	b[L3 + 20 + 12] = 15 << 4;
	out("drop_l4_bad-doff-beyond", MAGLEV_REASON_DROP_L4_BAD);
	client(&u4, 0, 0, 0);
	n = L3 + 20 + 7;
	put16(b + L3 + 2, 27);
	fix_ip4(b + L3);
	out("drop_l4_trunc-udp", MAGLEV_REASON_DROP_L4_TRUNC);
	client(&u4, 0, 10, 0);
	put16(b + L3 + 20 + 4, 7);
	out("drop_l4_bad-udp-len-below-8", MAGLEV_REASON_DROP_L4_BAD);
	client(&u4, 0, 10, 0);
	put16(b + L3 + 20 + 4, 19);
	out("drop_l4_bad-udp-len-beyond", MAGLEV_REASON_DROP_L4_BAD);

	client(&f6, 0, 0, 0);
	n = L3 + 39;
	out("drop_l3_trunc-v6", MAGLEV_REASON_DROP_L3_TRUNC);
	client(&f6, 0, 0, 0);
	b[L3] = (b[L3] & 0x0f) | 0x40;
	out("drop_l3_bad-v6-version", MAGLEV_REASON_DROP_L3_BAD);
	client(&f6, 0, 10, 0);
	put16(b + L3 + 4, (uint16_t)(n - L3 - 40 + 1));
	out("drop_l3_bad-v6-plen-beyond", MAGLEV_REASON_DROP_L3_BAD);
	client(&f6, 0, 0, 0);
	n = L3 + 40 + 12;
	put16(b + L3 + 4, 12);
	out("drop_l4_trunc-v6-tcp", MAGLEV_REASON_DROP_L4_TRUNC);
	client(&u6, 0, 4, 0);
	put16(b + L3 + 40 + 4, 13);
	out("drop_l4_bad-v6-udp-len", MAGLEV_REASON_DROP_L4_BAD);
	{
		const uint8_t hbh[] = {0}, rd[] = {43, 60}, fr[] = {44}, dfr[] = {60, 44},
			      chain[] = {60, 60, 60, 60, 60};
		const size_t l8[] = {8, 8, 8, 8, 8}, lrd[] = {24, 16};

		client(&f6, 0, 10, 0);
		insert_ext(hbh, l8, 1);
		out("tx_forward-v6-hop-by-hop", MAGLEV_REASON_TX_FORWARD);
		client(&u6, 0, 10, 0);
		insert_ext(rd, lrd, 2);
		out("tx_forward-v6-routing-dstopts", MAGLEV_REASON_TX_FORWARD);
		b[L3 + 40 + 3] = 1; /* segments left: not the final destination */
		out("pass_ipv6_ext-routing-segments-left", MAGLEV_REASON_PASS_IPV6_EXT);
		client(&f6, 0, 10, 0);
		insert_ext(chain, l8, 5);
		out("pass_ipv6_ext-long-chain", MAGLEV_REASON_PASS_IPV6_EXT);
		client(&f6, 0, 10, 0);
		insert_ext(fr, l8, 1);
		out("pass_ipv6_frag-fragment", MAGLEV_REASON_PASS_IPV6_FRAG);
		client(&f6, 0, 10, 0);
		insert_ext(dfr, l8, 2);
		out("pass_ipv6_frag-after-dstopts", MAGLEV_REASON_PASS_IPV6_FRAG);
		client(&f6, 0, 10, 0);
		insert_ext(chain, l8, 1);
		b[L3 + 40 + 1] = 20;
		out("drop_l3_bad-v6-ext-length", MAGLEV_REASON_DROP_L3_BAD);
	}
	client(&f6, 0, 0, 0);
	b[L3 + 6] = 0;
	n = L3 + 40 + 4;
	put16(b + L3 + 4, 4);
	out("drop_l3_trunc-v6-ext", MAGLEV_REASON_DROP_L3_TRUNC);
	client(&f6, 0, 10, 0);
	b[L3 + 6] = 59;
	out("pass_l4_proto-v6-no-next-header", MAGLEV_REASON_PASS_L4_PROTO);
}

static void drop_shapes(void)
{
	struct client_opts co = {.ttl = 1, .payload = 10};
	struct flow f;

	f = aim(VIP4_TCP80, 2);
	n = build_client(b, &f, &co);
	out("drop_ttl-v4", MAGLEV_REASON_DROP_TTL);
	f = aim(VIP6_UDPANY, 3);
	n = build_client(b, &f, &co);
	out("drop_ttl-v6", MAGLEV_REASON_DROP_TTL);
	f = to_vip(VIP6_NOTABLE);
	client(&f, 0, 10, 0x02);
	out("drop_no_table", MAGLEV_REASON_DROP_NO_TABLE);
	f = aim(VIP4_UDPANY, 6);
	client(&f, 0, 10, 0);
	out("drop_no_backend-down-v4", MAGLEV_REASON_DROP_NO_BACKEND);
	f = aim(VIP6_UDP4500, 6);
	client(&f, 1, 10, 0);
	out("drop_no_backend-down-v6", MAGLEV_REASON_DROP_NO_BACKEND);
}

int fz_gen_seeds(fz_emit_fn fn)
{
	emit = fn;
	failures = 0;
	forwards();
	icmp_shapes();
	parse_shapes();
	drop_shapes();
	return failures ? -1 : 0;
}
