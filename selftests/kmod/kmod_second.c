// SPDX-License-Identifier: GPL-2.0-only
/*
 * Second chance in the slow-path module, inside the 6.1 VM, on the
 * topology of topo.sh. The module gets tables whose slots have previous
 * owners (MAGLEV_A_PREV_ENTRIES); the backends' eth0 is read with AF_PACKET
 * sockets, so the outer packet is seen as the module sent it.
 *
 * A TCP packet that is no SYN, to a GUE VIP, whose slot has a previous
 * owner, goes to the current owner carrying the previous owner in GUE: the
 * UDP payload (GUE header, the option, the inner packet with its TTL
 * decremented) is compared byte for byte with what include/maglev_gue.h
 * says, the same layout the XDP program writes. A SYN, a slot without a
 * previous owner, a UDP packet and an IPIP VIP carry nothing; a table pushed
 * again without previous owners (the window's end) stops the carrying. A
 * chunk whose previous owners do not match its entries is refused.
 *
 * Issue 31 item 2: with the slot's owner marked over cap, a TCP packet that
 * is no SYN still goes to that owner (carrying the previous owner); only a
 * SYN goes to the probe's backend.
 *
 * Issue 31 item 4: the backends' kernel GUE receivers (fou) take a carried
 * packet and hand its inner packet, unchanged, to their tunnel device.
 *
 * Issue 14 item 10: a fourth backend, mlk-d, runs only the project's decap
 * program on its eth0 (no tunnel device, no fou): a 3,000-byte UDP datagram
 * sent in fragments as large as the client link allows reaches a real UDP
 * socket on the VIP there whole, over GUE (IPv4 and IPv6) and IPIP. The
 * module re-fragments the reassembled datagram before encapsulating it; an
 * outer packet fragmented by the stack would never reach that socket.
 */
#include <poll.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "kselftest_harness.h"
#include "kmod_topo.h"
#include "maglev_bounded.h"
#include "maglev_gue.h"

#define TABLE_SIZE MAGLEV_TABLE_SIZE

struct sc_vip {
	int family;
	const char *addr;
	uint8_t proto;
	uint8_t encap;
	uint32_t base; /* backend indices base+1..base+3 */
};

static const struct sc_vip vips[] = {
	{MAGLEV_AF_INET, "198.51.100.12", IPPROTO_TCP, MAGLEV_ENCAP_GUE, 0},
	{MAGLEV_AF_INET6, "2001:db8:100::12", IPPROTO_TCP, MAGLEV_ENCAP_GUE, 10},
	{MAGLEV_AF_INET, "198.51.100.10", IPPROTO_TCP, MAGLEV_ENCAP_IPIP, 0},
	{MAGLEV_AF_INET, "198.51.100.12", IPPROTO_UDP, MAGLEV_ENCAP_GUE, 0},
};

#define NVIPS ((int)(sizeof(vips) / sizeof(vips[0])))

static struct maglev_seed g_seed;
static uint32_t g_owner[TABLE_SIZE], g_prev[TABLE_SIZE];
static uint64_t g_rand;

static struct maglev_vip_key vip_key_of(int v)
{
	return kmod_vip_key(vips[v].family, vips[v].addr, vips[v].proto);
}

/* Owners cycle over the three backends; every other slot has a previous
 * owner (the next backend), the rest none.
 */
static int push_tables(struct slowpath_nl *nl, uint64_t gen, int with_prev)
{
	int v, err = 0;

	for (v = 0; v < NVIPS && !err; v++) {
		struct maglev_vip_key key = vip_key_of(v);
		static uint32_t own[TABLE_SIZE], prv[TABLE_SIZE];
		uint32_t i;

		for (i = 0; i < TABLE_SIZE; i++) {
			own[i] = vips[v].base + g_owner[i];
			prv[i] = g_prev[i] ? vips[v].base + g_prev[i] : 0;
		}
		err = slowpath_nl_table_push_prev(nl, &key, gen, own, with_prev ? prv : NULL,
						  TABLE_SIZE);
	}
	return err;
}

/* VIPs served only by mlk-d (backend 4 / 14): GUE over IPv4 and IPv6, IPIP. */
static const struct sc_vip dvips[] = {
	{MAGLEV_AF_INET, "198.51.100.13", IPPROTO_UDP, MAGLEV_ENCAP_GUE, 0},
	{MAGLEV_AF_INET6, "2001:db8:100::13", IPPROTO_UDP, MAGLEV_ENCAP_GUE, 10},
	{MAGLEV_AF_INET, "198.51.100.14", IPPROTO_UDP, MAGLEV_ENCAP_IPIP, 0},
};

#define NDVIPS ((int)(sizeof(dvips) / sizeof(dvips[0])))

static struct maglev_vip_key dvip_key_of(int v)
{
	return kmod_vip_key(dvips[v].family, dvips[v].addr, dvips[v].proto);
}

/* mlk-d behind lb4 of the balancer: addresses, the VIPs on lo, and the
 * decap program in native XDP mode on eth0. Nothing else decapsulates.
 */
static int decap_only_setup(struct slowpath_nl *nl)
{
	static const char *const cmds =
		"ip netns add mlk-d && "
		"ip -n mlk-lb link add lb4 type veth peer name eth0 netns mlk-d && "
		"ip -n mlk-lb -b - <<EOF\n"
		"link set lb4 up\n"
		"addr add 203.0.113.33/29 dev lb4\n"
		"addr add 2001:db8:2:4::1/64 dev lb4 nodad\n"
		"EOF\n"
		"ip -n mlk-d -b - <<EOF\n"
		"link set lo up\n"
		"link set eth0 up\n"
		"addr add 203.0.113.34/29 dev eth0\n"
		"addr add 2001:db8:2:4::2/64 dev eth0 nodad\n"
		"addr add 198.51.100.13/32 dev lo\n"
		"addr add 198.51.100.14/32 dev lo\n"
		"addr add 2001:db8:100::13/128 dev lo nodad\n"
		"link set dev eth0 xdpdrv obj build/bpf/maglev_decap.bpf.o sec xdp\n"
		"EOF\n";
	static uint32_t own[TABLE_SIZE];
	struct maglev_backend b4 = {.family = MAGLEV_AF_INET};
	struct maglev_backend b6 = {.family = MAGLEV_AF_INET6};
	int v, err;
	uint32_t i;

	if (system(cmds)) {
		fprintf(stderr, "# cannot set up the decap-only backend mlk-d\n");
		return -EIO;
	}
	if (kmod_setns("mlk-lb"))
		return -errno;
	kmod_backend_addr(4, (uint8_t *)b4.addr);
	kmod_backend_addr(14, (uint8_t *)b6.addr);
	err = slowpath_nl_backend_set(nl, 4, &b4) ?: slowpath_nl_backend_set(nl, 14, &b6);
	for (v = 0; v < NDVIPS && !err; v++) {
		struct maglev_vip_info info = {.encap = dvips[v].encap};
		struct maglev_vip_key key = dvip_key_of(v);

		if (info.encap == MAGLEV_ENCAP_GUE)
			info.gue_port = htons(KMOD_GUE_PORT);
		for (i = 0; i < TABLE_SIZE; i++)
			own[i] = dvips[v].base + 4;
		err = slowpath_nl_vip_set(nl, &key, &info)
			      ?: slowpath_nl_table_push(nl, &key, 1, own, TABLE_SIZE);
	}
	return err;
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
	for (i = 0; i < TABLE_SIZE; i++) {
		g_owner[i] = 1 + i % 3;
		g_prev[i] = i % 2 ? 1 + (i + 1) % 3 : 0;
	}
	for (v = 0; v < NVIPS && !err; v++) {
		struct maglev_vip_info info = {.encap = vips[v].encap};
		struct maglev_vip_key key = vip_key_of(v);

		if (info.encap == MAGLEV_ENCAP_GUE)
			info.gue_port = htons(KMOD_GUE_PORT);
		err = slowpath_nl_vip_set(nl, &key, &info);
	}
	if (!err)
		err = push_tables(nl, 1, 1);
	if (!err)
		err = decap_only_setup(nl);
	if (err)
		fprintf(stderr, "# configuring the module: %s\n", slowpath_nl_errmsg(nl));
	slowpath_nl_close(nl);
	return err;
}

struct sc_ctx {
	struct slowpath_nl *nl;
	int client;
	int cap[KMOD_NBACKENDS]; /* AF_PACKET on each backend's eth0 */
	struct slowpath_stats before;
	struct kmod_frame frames[4];
	uint8_t rx[2048];
};

static int ctx_open(struct sc_ctx *c)
{
	int k;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < KMOD_NBACKENDS; k++) {
		struct sockaddr_ll sll = {.sll_family = AF_PACKET,
					  .sll_protocol = htons(ETH_P_ALL)};
		char ns[16];

		snprintf(ns, sizeof(ns), "mlk-b%d", k + 1);
		if (kmod_setns(ns))
			return -1;
		c->cap[k] = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
				   htons(ETH_P_ALL));
		sll.sll_ifindex = (int)if_nametoindex("eth0");
		if (c->cap[k] < 0 || !sll.sll_ifindex ||
		    bind(c->cap[k], (struct sockaddr *)&sll, sizeof(sll)))
			return -1;
	}
	c->client = kmod_client_socket();
	if (c->client < 0 || kmod_setns("mlk-lb") || slowpath_nl_open(&c->nl))
		return -1;
	return slowpath_nl_stats(c->nl, &c->before);
}

static void ctx_close(struct sc_ctx *c)
{
	int k;

	for (k = 0; k < KMOD_NBACKENDS; k++)
		close(c->cap[k]);
	close(c->client);
	slowpath_nl_close(c->nl);
}

/* One encapsulated frame (outer IP carrying UDP to the GUE port, IPIP or
 * IPv6) from any backend's eth0, into c->rx; its backend, or -1 after
 * timeout_ms. Frames passed over (a backend's own reply, neighbour
 * discovery) leave c->rx as it was: a caller may still read the last one.
 */
static int capture(struct sc_ctx *c, int timeout_ms, size_t *len)
{
	static uint8_t buf[sizeof(c->rx)];
	struct pollfd p[KMOD_NBACKENDS];
	int k;

	for (;;) {
		for (k = 0; k < KMOD_NBACKENDS; k++) {
			p[k].fd = c->cap[k];
			p[k].events = POLLIN;
		}
		if (poll(p, KMOD_NBACKENDS, timeout_ms) <= 0)
			return -1;
		for (k = 0; k < KMOD_NBACKENDS; k++) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			ssize_t got;
			int v6, l4;
			uint8_t proto;

			if (!(p[k].revents & POLLIN))
				continue;
			got = recvfrom(c->cap[k], buf, sizeof(buf), 0, (struct sockaddr *)&from,
				       &fl);
			/* Only what arrives: not the backend's own replies. */
			if (got < 14 + 40 || from.sll_pkttype == PACKET_OUTGOING)
				continue;
			v6 = buf[12] == 0x86 && buf[13] == 0xdd;
			if (!v6 && !(buf[12] == 0x08 && buf[13] == 0x00))
				continue;
			proto = v6 ? buf[14 + 6] : buf[14 + 9];
			l4 = 14 + (v6 ? 40 : 20);
			if (proto == IPPROTO_IPIP || proto == IPPROTO_IPV6 ||
			    (proto == IPPROTO_UDP && buf[l4 + 2] == KMOD_GUE_PORT >> 8 &&
			     buf[l4 + 3] == (KMOD_GUE_PORT & 0xff))) {
				memcpy(c->rx, buf, (size_t)got);
				*len = (size_t)got;
				return k;
			}
		}
	}
}

/* A TCP segment of flow k (flags as in byte 13) with plen bytes of
 * payload, checksummed.
 */
static size_t tcp_segment_len(const struct maglev_flow_key *k, uint8_t flags, size_t plen,
			      uint8_t *out)
{
	size_t len = 20 + plen, i;
	uint16_t l = htons((uint16_t)len), c;
	uint32_t sum = 0;

	memset(out, 0, 20);
	memcpy(out, &k->sport, 2);
	memcpy(out + 2, &k->dport, 2);
	out[4] = 0x11; /* sequence and acknowledgement numbers: any */
	out[8] = 0x22;
	out[12] = 5 << 4;
	out[13] = flags;
	out[14] = 0xff;
	for (i = 20; i < len; i++)
		out[i] = (uint8_t)kmod_rand(&g_rand);
	if (k->family == MAGLEV_AF_INET) {
		sum = kmod_csum_add(sum, k->src, 4);
		sum = kmod_csum_add(sum, k->dst, 4);
		sum += IPPROTO_TCP;
		sum = kmod_csum_add(sum, &l, 2);
	} else {
		uint32_t l32 = htonl((uint32_t)len);
		uint8_t tail[4] = {0, 0, 0, IPPROTO_TCP};

		sum = kmod_csum_add(sum, k->src, 32);
		sum = kmod_csum_add(sum, &l32, 4);
		sum = kmod_csum_add(sum, tail, 4);
	}
	c = kmod_csum_fold(kmod_csum_add(sum, out, len));
	memcpy(out + 16, &c, 2);
	return len;
}

static size_t tcp_segment(const struct maglev_flow_key *k, uint8_t flags, uint8_t *out)
{
	return tcp_segment_len(k, flags, 32, out);
}

/* A random client flow toward VIP v whose slot has (want_prev) or has
 * not a previous owner; its slot's owner and previous owner indices.
 */
static void pick_flow(int v, int want_prev, struct maglev_flow_key *f, uint32_t *own, uint32_t *prv)
{
	struct maglev_vip_key key = vip_key_of(v);

	do {
		kmod_client_flow(&key, &g_rand, f);
		*own = vips[v].base + kmod_expected_pick(&g_seed, f, g_owner, TABLE_SIZE);
		*prv = kmod_expected_pick(&g_seed, f, g_prev, TABLE_SIZE);
	} while (!*prv != !want_prev);
	if (*prv)
		*prv += vips[v].base;
}

/*
 * Send one packet of flow f (TCP with flags, or UDP) and check the frame
 * the owner's backend receives: outer destination, the UDP ports, then
 * every byte after the UDP header: the GUE header, the previous owner's
 * option when carry says so, the inner packet with TTL / hop limit 63.
 */
static void expect_encap(struct __test_metadata *_metadata, struct sc_ctx *c, int v,
			 const struct maglev_flow_key *f, uint8_t flags, uint32_t own,
			 uint32_t carry)
{
	int v6 = f->family == MAGLEV_AF_INET6, outer6 = own > 10, gue;
	static uint8_t l4[128], want[512];
	struct kmod_shape whole = {};
	uint8_t be[16], *inner;
	size_t l4len, ilen, wlen = 0, len, off;
	uint32_t fold;
	int n, k;

	gue = vips[v].encap == MAGLEV_ENCAP_GUE;
	if (f->proto == IPPROTO_TCP) {
		l4len = tcp_segment(f, flags, l4);
	} else {
		uint8_t payload[32] = {1, 2, 3};

		l4len = kmod_udp(f, payload, sizeof(payload), l4);
	}
	n = kmod_build_ip(f, f->proto, l4, l4len, &whole, 0x4242, c->frames);
	ASSERT_EQ(1, n);
	inner = c->frames[0].b + 14;
	ilen = c->frames[0].len - 14;

	if (gue) {
		struct maglev_gue_hdr gh = {
			.ver_c_hlen = carry ? MAGLEV_GUE_PREV_WORDS : 0,
			.proto = v6 ? IPPROTO_IPV6 : IPPROTO_IPIP,
		};

		memcpy(want, &gh, sizeof(gh));
		wlen = sizeof(gh);
		if (carry) {
			struct maglev_gue_prev gp = {
				.type = MAGLEV_GUE_PREV_TYPE,
				.family = carry > 10 ? MAGLEV_AF_INET6 : MAGLEV_AF_INET,
			};

			kmod_backend_addr(carry, (uint8_t *)gp.addr);
			memcpy(want + wlen, &gp, sizeof(gp));
			wlen += sizeof(gp);
		}
	}
	memcpy(want + wlen, inner, ilen);
	if (v6) {
		want[wlen + 7]--;
	} else {
		uint16_t ck;

		want[wlen + 8]--;
		memset(want + wlen + 10, 0, 2);
		ck = kmod_csum_fold(kmod_csum_add(0, want + wlen, 20));
		memcpy(want + wlen + 10, &ck, 2);
	}
	wlen += ilen;

	ASSERT_EQ(0, kmod_send_frames(c->client, c->frames, NULL, 1));
	k = capture(c, 3000, &len);
	ASSERT_EQ((int)((own - 1) % 10), k)
	{
		TH_LOG("the packet reached backend %d, its slot's owner is %u", k + 1, own);
	}
	kmod_backend_addr(own, be);
	EXPECT_EQ(0, outer6 ? memcmp(c->rx + 14 + 24, be, 16) : memcmp(c->rx + 14 + 16, be, 4));
	off = 14 + (outer6 ? 40 : 20);
	if (gue) {
		fold = maglev_outer_fold(f->src, f->sport, f->dport);
		EXPECT_EQ(MAGLEV_GUE_SPORT(fold), (c->rx[off] << 8) | c->rx[off + 1]);
		off += 8;
	}
	ASSERT_EQ(wlen, len - off);
	EXPECT_EQ(0, memcmp(want, c->rx + off, wlen))
	{
		size_t i;

		for (i = 0; i < wlen; i++)
			if (want[i] != c->rx[off + i])
				break;
		TH_LOG("first difference at byte %zu after the UDP header: %02x, want %02x", i,
		       c->rx[off + i], want[i]);
	}
	EXPECT_EQ(-1, capture(c, 50, &len)); /* exactly one */
}

static uint64_t carried(struct sc_ctx *c)
{
	struct slowpath_stats now;

	if (slowpath_nl_stats(c->nl, &now))
		return ~0ULL;
	return now.cnt[MAGLEV_STAT_SC_CARRIED] - c->before.cnt[MAGLEV_STAT_SC_CARRIED];
}

FIXTURE(sc)
{
	struct sc_ctx c;
};

FIXTURE_SETUP(sc)
{
	g_rand ^= (uint64_t)getpid() << 20;
	ASSERT_EQ(0, ctx_open(&self->c));
}

FIXTURE_TEARDOWN(sc)
{
	static const uint8_t none[MAGLEV_MAX_BACKENDS];

	/* The next test starts without over-cap marks. */
	if (self->c.nl)
		slowpath_nl_overcap_set(self->c.nl, none, MAGLEV_MAX_BACKENDS);
	ctx_close(&self->c);
}

/* ACKs of flows with a previous owner carry it; a SYN of the same flow and
 * a flow whose slot has none do not. LOOKUP reports the previous owner.
 */
static void carry_case(struct __test_metadata *_metadata, struct sc_ctx *c, int v)
{
	struct maglev_flow_key f;
	struct slowpath_lookup lk;
	uint32_t own, prv;
	int i;

	for (i = 0; i < 3; i++) {
		pick_flow(v, 1, &f, &own, &prv);
		ASSERT_EQ(0, slowpath_nl_lookup(c->nl, &f, &lk));
		EXPECT_EQ(own, lk.backend_idx);
		EXPECT_EQ(prv, lk.prev_idx);
		expect_encap(_metadata, c, v, &f, 0x10, own, prv); /* ACK */
		expect_encap(_metadata, c, v, &f, 0x18, own, prv); /* PSH ACK */
		expect_encap(_metadata, c, v, &f, 0x02, own, 0);   /* SYN */
		expect_encap(_metadata, c, v, &f, 0x12, own, prv); /* SYN ACK: no SYN */
	}
	pick_flow(v, 0, &f, &own, &prv);
	expect_encap(_metadata, c, v, &f, 0x10, own, 0);
	EXPECT_EQ(9, carried(c));
}

TEST_F(sc, gue_v4_carries_previous_owner)
{
	carry_case(_metadata, &self->c, 0);
}

TEST_F(sc, gue_v6_carries_previous_owner)
{
	carry_case(_metadata, &self->c, 1);
}

/*
 * Issue 31 item 4: the backends here decapsulate with the kernel's own GUE
 * receiver (`ip fou add port P gue`, then the ipip / ip6tnl devices t4 and
 * t6). A carried ACK must pass it: the inner packet, byte for byte as it
 * left the balancer inside GUE, arrives on the owner's tunnel device (read
 * there with AF_PACKET). Before, GUE flags 0x0001 made fou read the
 * option's first word as private flags, and it dropped every such packet
 * (validate_gue_flags).
 */
TEST_F(sc, fou_receiver_takes_carried)
{
	struct sc_ctx *c = &self->c;
	int v;

	for (v = 0; v < 2; v++) {
		struct sockaddr_ll sll = {.sll_family = AF_PACKET,
					  .sll_protocol = htons(ETH_P_ALL)};
		int v6 = vips[v].family == MAGLEV_AF_INET6, fd;
		struct pollfd p = {.events = POLLIN};
		static uint8_t sent[2048], got[2048];
		size_t off = 14 + (v6 ? 40 : 20) + 8 + 4 + sizeof(struct maglev_gue_prev), ilen;
		struct maglev_flow_key f;
		uint32_t own, prv;
		ssize_t n;
		char ns[16];

		pick_flow(v, 1, &f, &own, &prv);
		snprintf(ns, sizeof(ns), "mlk-b%u", (own - 1) % 10 + 1);
		ASSERT_EQ(0, kmod_setns(ns));
		fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
		ASSERT_LE(0, fd);
		sll.sll_ifindex = (int)if_nametoindex(v6 ? "t6" : "t4");
		ASSERT_NE(0, sll.sll_ifindex);
		ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sll, sizeof(sll)));
		ASSERT_EQ(0, kmod_setns("mlk-lb"));
		expect_encap(_metadata, c, v, &f, 0x10, own, prv);
		/* The inner packet as the owner's eth0 saw it inside GUE. */
		ilen = v6 ? 40 + (size_t)(c->rx[off + 4] << 8 | c->rx[off + 5])
			  : (size_t)(c->rx[off + 2] << 8 | c->rx[off + 3]);
		ASSERT_LE(off + ilen, sizeof(sent));
		memcpy(sent, c->rx + off, ilen);
		p.fd = fd;
		EXPECT_EQ(1, poll(&p, 1, 3000))
		{
			TH_LOG("VIP %s: the carried ACK never left %s's fou/GUE receiver",
			       vips[v].addr, ns);
		}
		n = recv(fd, got, sizeof(got), MSG_DONTWAIT);
		EXPECT_EQ((ssize_t)ilen, n);
		if (n == (ssize_t)ilen)
			EXPECT_EQ(0, memcmp(sent, got, ilen));
		close(fd);
	}
	EXPECT_EQ(2, carried(c));
}

/* IPIP has no room for it; UDP has no connection a backend could claim. */
TEST_F(sc, ipip_and_udp_never_carry)
{
	struct maglev_flow_key f;
	uint32_t own, prv;

	pick_flow(2, 1, &f, &own, &prv);
	expect_encap(_metadata, &self->c, 2, &f, 0x10, own, 0);
	pick_flow(3, 1, &f, &own, &prv);
	expect_encap(_metadata, &self->c, 3, &f, 0, own, 0);
	EXPECT_EQ(0, carried(&self->c));
}

/* include/maglev_bounded.h's mark test: only backend *ctx is marked. */
static int marked_one(const void *ctx, __u32 idx)
{
	return idx == *(const uint32_t *)ctx;
}

/*
 * Issue 31 item 2: VIP 0's flow whose slot's owner is marked over cap. Its
 * ACKs (no SYN: the module cannot know whether that owner holds the
 * connection, and a probe's backend would reset it) go to the owner,
 * carrying the previous owner; its SYN goes to the first unmarked backend
 * of its probe sequence and carries nothing. Before, the ACKs went to the
 * probe's backend too.
 */
TEST_F(sc, marked_owner_keeps_non_syn)
{
	static uint8_t marks[MAGLEV_MAX_BACKENDS];
	struct maglev_flow_key f;
	uint32_t own, prv, probe;
	uint64_t h;

	pick_flow(0, 1, &f, &own, &prv);
	h = maglev_flow_hash_v4(&g_seed, f.src[0], f.dst[0], f.sport, f.dport, f.proto);
	probe = maglev_bounded_probe(&g_seed, h, g_owner, TABLE_SIZE, marked_one, &own);
	ASSERT_NE(0, probe);
	ASSERT_NE(own, probe);
	memset(marks, 0, sizeof(marks));
	marks[own] = 1;
	ASSERT_EQ(0, slowpath_nl_overcap_set(self->c.nl, marks, MAGLEV_MAX_BACKENDS));
	expect_encap(_metadata, &self->c, 0, &f, 0x10, own, prv); /* ACK */
	expect_encap(_metadata, &self->c, 0, &f, 0x11, own, prv); /* FIN ACK */
	expect_encap(_metadata, &self->c, 0, &f, 0x04, own, prv); /* RST */
	expect_encap(_metadata, &self->c, 0, &f, 0x02, probe, 0); /* SYN */
}

/* The window's end: maglevd pushes the table again without previous
 * owners; the same flow then carries nothing. Restored afterwards.
 */
TEST_F(sc, table_without_prev_stops_carrying)
{
	struct maglev_flow_key f;
	struct slowpath_lookup lk;
	uint32_t own, prv;

	pick_flow(0, 1, &f, &own, &prv);
	expect_encap(_metadata, &self->c, 0, &f, 0x10, own, prv);
	ASSERT_EQ(0, push_tables(self->c.nl, 2, 0));
	ASSERT_EQ(0, slowpath_nl_lookup(self->c.nl, &f, &lk));
	EXPECT_EQ(0, lk.prev_idx);
	expect_encap(_metadata, &self->c, 0, &f, 0x10, own, 0);
	ASSERT_EQ(0, push_tables(self->c.nl, 3, 1));
	expect_encap(_metadata, &self->c, 0, &f, 0x10, own, prv);
	EXPECT_EQ(2, carried(&self->c));
}

/*
 * Issue 31 item 3: a whole IPv4 TCP segment without DF, 1,500 bytes, on a
 * slot with a previous owner, does not fit the 1,500-byte route with the
 * outer headers: the module cuts it (maglev_refragment). No fragment may
 * carry the previous owner: the backend cannot look up a socket for a
 * fragment, so it would send each on and the segment would be lost. The
 * owner's backend gets the fragments as plain GUE, and together they hold
 * the segment byte for byte.
 */
TEST_F(sc, cut_segment_carries_nothing)
{
	static uint8_t l4[1500], got[1500];
	struct sc_ctx *c = &self->c;
	struct kmod_shape whole = {};
	struct maglev_flow_key f;
	size_t l4len, len, off, filled = 0;
	uint32_t own, prv;
	int n, k, frames = 0;

	pick_flow(0, 1, &f, &own, &prv);
	l4len = tcp_segment_len(&f, 0x10, 1460, l4);
	n = kmod_build_ip(&f, IPPROTO_TCP, l4, l4len, &whole, 0x4343, c->frames);
	ASSERT_EQ(1, n);
	ASSERT_EQ(14 + 1500, c->frames[0].len);
	ASSERT_EQ(0, kmod_send_frames(c->client, c->frames, NULL, 1));
	while ((k = capture(c, frames ? 200 : 3000, &len)) >= 0) {
		uint8_t *g, *ip;
		size_t flen, foff;

		ASSERT_EQ((int)(own - 1), k);
		off = 14 + 20 + 8; /* IPv4 outer, UDP */
		g = c->rx + off;
		EXPECT_EQ(0, g[0]) /* hlen 0: no optional fields */
		{
			TH_LOG("fragment %d carries %d words of options", frames, g[0] & 0x1f);
		}
		EXPECT_EQ(0, g[2] | g[3]);
		ip = g + 4;
		ASSERT_EQ(0x45, ip[0]);
		flen = (size_t)((ip[2] << 8 | ip[3]) - 20);
		foff = (size_t)(((ip[6] & 0x1f) << 8 | ip[7]) * 8);
		ASSERT_LE(foff + flen, sizeof(got));
		ASSERT_EQ(len, off + 4 + 20 + flen);
		memcpy(got + foff, ip + 20, flen);
		filled += flen;
		frames++;
	}
	EXPECT_LE(2, frames);
	ASSERT_EQ(l4len, filled);
	EXPECT_EQ(0, memcmp(l4, got, l4len));
	EXPECT_EQ(0, carried(c));
}

/* Previous owners of another length than the entries, or out of range:
 * refused with a reason, and the live table stays.
 */
TEST_F(sc, chunk_prev_mismatch_refused)
{
	struct maglev_vip_key key = vip_key_of(0);
	static char buf[4096];
	uint32_t ents[8] = {1, 2, 3, 1, 2, 3, 1, 2}, prev[8] = {2, 3, 1, 0, 0, 0, 0, 0};
	struct slowpath_vip_state st0, st1;
	const uint8_t cmds[3] = {MAGLEV_CMD_TABLE_BEGIN, MAGLEV_CMD_TABLE_CHUNK,
				 MAGLEV_CMD_TABLE_CHUNK};
	const int want[3] = {0, -EINVAL, -ERANGE};
	int i;

	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st0));
	for (i = 0; i < 3; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct genlmsghdr *g;

		nlh->nlmsg_type = slowpath_nl_family_id(self->c.nl);
		nlh->nlmsg_flags = NLM_F_REQUEST;
		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		g->cmd = cmds[i];
		g->version = MAGLEV_GENL_VERSION;
		mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, key.family);
		mnl_attr_put(nlh, MAGLEV_A_ADDR, 4, key.addr);
		mnl_attr_put_u16(nlh, MAGLEV_A_PORT, key.port);
		mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, key.proto);
		mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 77);
		if (i == 0) {
			mnl_attr_put_u32(nlh, MAGLEV_A_TABLE_SIZE, 8);
		} else {
			mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 0);
			mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(ents), ents);
			if (i == 2)
				prev[1] = MAGLEV_GENL_BACKEND_MAX + 1;
			mnl_attr_put(nlh, MAGLEV_A_PREV_ENTRIES, i == 1 ? 16 : sizeof(prev), prev);
		}
		EXPECT_EQ(want[i], slowpath_nl_request_raw(self->c.nl, nlh))
		{
			TH_LOG("request %d: %s", i, slowpath_nl_errmsg(self->c.nl));
		}
	}
	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st1));
	EXPECT_EQ(st0.table_gen, st1.table_gen);
	EXPECT_EQ(st0.table_size, st1.table_size);
}

/*
 * 3,000 bytes of UDP in fragments of 1,480 (IPv4) or 1,448 (IPv6) payload
 * bytes: the client link's largest. Reassembled and encapsulated whole, the
 * outer packet would exceed the balancer's 1,500-byte link and leave in
 * outer fragments, which the decap program passes to a stack with no tunnel.
 */
TEST(decap_only_backend_gets_3000_byte_datagram)
{
	static uint8_t payload[3000], got[4000];
	static struct kmod_frame fr[KMOD_MAX_FRAGS];
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(KMOD_VIP_PORT)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(KMOD_VIP_PORT)};
	struct slowpath_stats st0, st1;
	struct slowpath_nl *nl;
	int fd4, fd6, client, v, one = 1;
	size_t i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)kmod_rand(&g_rand);
	ASSERT_EQ(0, kmod_setns("mlk-d"));
	fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd4);
	ASSERT_LE(0, fd6);
	setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	ASSERT_EQ(0, bind(fd4, (struct sockaddr *)&a4, sizeof(a4)));
	ASSERT_EQ(0, bind(fd6, (struct sockaddr *)&a6, sizeof(a6)));
	client = kmod_client_socket();
	ASSERT_LE(0, client);
	ASSERT_EQ(0, kmod_setns("mlk-lb"));
	ASSERT_EQ(0, slowpath_nl_open(&nl));
	ASSERT_EQ(0, slowpath_nl_stats(nl, &st0));
	for (v = 0; v < NDVIPS; v++) {
		int v6 = dvips[v].family == MAGLEV_AF_INET6, fd = v6 ? fd6 : fd4;
		struct kmod_shape frag = {.frag = v6 ? 1448 : 1480};
		struct maglev_vip_key key = dvip_key_of(v);
		struct maglev_flow_key f = {.family = key.family, .proto = IPPROTO_UDP};
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n;
		int nf;

		memcpy(f.dst, key.addr, sizeof(f.dst));
		if (v6) {
			f.src[0] = htonl(0x20010db8);
			f.src[1] = htonl(0x000c0000);
			f.src[3] = htonl(0x100 + v);
		} else {
			f.src[0] = htonl(0xc6336490 + v); /* 198.51.100.144 + v */
		}
		f.sport = htons(40000 + v);
		f.dport = htons(KMOD_VIP_PORT);
		nf = kmod_build(&f, payload, sizeof(payload), &frag, 0x7700 + v, fr);
		ASSERT_EQ(3, nf);
		ASSERT_EQ(0, kmod_send_frames(client, fr, NULL, nf));
		ASSERT_EQ(1, poll(&p, 1, 3000))
		{
			TH_LOG("VIP %s (%s): the datagram never reached the decap-only backend",
			       dvips[v].addr, dvips[v].encap == MAGLEV_ENCAP_GUE ? "GUE" : "IPIP");
		}
		n = recvfrom(fd, got, sizeof(got), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		ASSERT_EQ((ssize_t)sizeof(payload), n);
		EXPECT_EQ(0, memcmp(payload, got, sizeof(payload)));
		EXPECT_EQ(0, v6 ? memcmp(&((struct sockaddr_in6 *)&from)->sin6_addr, f.src, 16)
				: memcmp(&((struct sockaddr_in *)&from)->sin_addr, f.src, 4));
	}
	ASSERT_EQ(0, slowpath_nl_stats(nl, &st1));
	EXPECT_EQ(NDVIPS, st1.cnt[MAGLEV_STAT_FORWARDED] - st0.cnt[MAGLEV_STAT_FORWARDED]);
	EXPECT_EQ(0, st1.cnt[MAGLEV_STAT_SC_CARRIED] - st0.cnt[MAGLEV_STAT_SC_CARRIED]);
	slowpath_nl_close(nl);
	close(client);
	close(fd4);
	close(fd6);
}

int main(int argc, char **argv)
{
	kmod_extra_netns = "mlk-d";
	return kmod_topology_main(argc, argv, setup);
}
