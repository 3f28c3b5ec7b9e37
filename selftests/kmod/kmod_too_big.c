// SPDX-License-Identifier: GPL-2.0-only
/*
 * Issue 31 item 5, inside the 6.1 VM on topo.sh's topology: a packet that
 * does not fit the route to its backend once encapsulated, and that may not
 * be cut (IPv4 with DF, IPv6 that came whole), is answered as the XDP
 * program answers such packets: ICMP "fragmentation needed" / "packet too
 * big" to the client with the MTU left after the outer headers, and not
 * forwarded. The XDP program passes exactly those with IPv4 options or
 * IPv6 extension headers to the module (its quote of header + 8 bytes
 * would not reach their ports), so those are what is sent here: 1,500
 * bytes with a record-route option and DF to an IPIP VIP (outer IPv4: 20
 * bytes, MTU 1,480), 1,500 bytes with a destination-options header to a
 * GUE VIP over IPv6 (40 + 8 + 4 bytes, MTU 1,448). Before, the module sent
 * them whole, the stack fragmented the outer packet, no ICMP was sent, and
 * the datagram reached the backend's socket only because its tunnel
 * devices reassemble the outer packet. A datagram of exactly that MTU
 * still arrives, and without DF the IPv4 one is still cut and arrives.
 */
#include <poll.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "kselftest_harness.h"
#include "kmod_topo.h"

#define TABLE_SIZE MAGLEV_TABLE_SIZE

struct tb_vip {
	int family;
	const char *addr;
	uint8_t encap;
	uint32_t backend; /* every slot's owner */
	unsigned int mtu; /* what the client must be told: 1,500 less the outer headers */
};

static const struct tb_vip vips[] = {
	{MAGLEV_AF_INET, "198.51.100.10", MAGLEV_ENCAP_IPIP, 1, 1500 - 20},
	{MAGLEV_AF_INET6, "2001:db8:100::11", MAGLEV_ENCAP_GUE, 12, 1500 - 40 - 8 - 4},
};

#define NVIPS ((int)(sizeof(vips) / sizeof(vips[0])))

static struct maglev_seed g_seed;
static uint64_t g_rand;

static struct maglev_vip_key vip_key_of(int v)
{
	return kmod_vip_key(vips[v].family, vips[v].addr, IPPROTO_UDP);
}

/* The balancer's way back to the clients (198.51.100.128/25,
 * 2001:db8:c::/64) through mlk-c's c0, with static neighbours, so its
 * ICMP reaches c0.
 */
static const char *const return_path =
	"ip -n mlk-c addr add 2001:db8:1::2/64 dev c0 nodad && "
	"ip -n mlk-lb -b - <<EOF\n"
	"neigh replace 192.0.2.2 lladdr 02:00:00:00:00:01 dev l0 nud permanent\n"
	"neigh replace 2001:db8:1::2 lladdr 02:00:00:00:00:01 dev l0 nud permanent\n"
	"route add 198.51.100.128/25 via 192.0.2.2 dev l0\n"
	"route add 2001:db8:c::/64 via 2001:db8:1::2 dev l0\n"
	"EOF\n";

static int setup(void)
{
	static uint32_t own[TABLE_SIZE];
	struct slowpath_nl *nl = NULL;
	int v, err;
	uint32_t i;

	err = kmod_lb_setup(&nl, &g_seed, &g_rand, &kmod_topology_up);
	for (v = 0; v < NVIPS && !err; v++) {
		struct maglev_vip_info info = {.encap = vips[v].encap};
		struct maglev_vip_key key = vip_key_of(v);

		if (info.encap == MAGLEV_ENCAP_GUE)
			info.gue_port = htons(KMOD_GUE_PORT);
		for (i = 0; i < TABLE_SIZE; i++)
			own[i] = vips[v].backend;
		err = slowpath_nl_vip_set(nl, &key, &info)
			      ?: slowpath_nl_table_push(nl, &key, 1, own, TABLE_SIZE);
	}
	if (err)
		fprintf(stderr, "# configuring the module: %s\n", slowpath_nl_errmsg(nl));
	slowpath_nl_close(nl);
	if (!err && system(return_path)) {
		fprintf(stderr, "# cannot set up the route back to the clients\n");
		err = -EIO;
	}
	return err;
}

FIXTURE(tb)
{
	struct slowpath_nl *nl;
	int client, watch; /* mlk-c's c0: sending, and every frame arriving */
	int fds[KMOD_NBACKENDS][2];
	struct kmod_frame fr[KMOD_MAX_FRAGS];
	uint8_t rx[2048];
};

FIXTURE_SETUP(tb)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	int k;

	for (k = 0; k < KMOD_NBACKENDS; k++)
		ASSERT_EQ(0, kmod_backend_sockets(k, self->fds[k]));
	self->client = kmod_client_socket();
	ASSERT_LE(0, self->client);
	self->watch = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
	sll.sll_ifindex = (int)if_nametoindex("c0");
	ASSERT_LE(0, self->watch);
	ASSERT_EQ(0, bind(self->watch, (struct sockaddr *)&sll, sizeof(sll)));
	ASSERT_EQ(0, kmod_setns("mlk-lb"));
	ASSERT_EQ(0, slowpath_nl_open(&self->nl));
}

FIXTURE_TEARDOWN(tb)
{
	int k;

	for (k = 0; k < KMOD_NBACKENDS; k++) {
		close(self->fds[k][0]);
		close(self->fds[k][1]);
	}
	close(self->watch);
	close(self->client);
	slowpath_nl_close(self->nl);
}

/* A new random client flow toward VIP v. */
static void flow_of(int v, struct maglev_flow_key *f)
{
	struct maglev_vip_key key = vip_key_of(v);

	kmod_client_flow(&key, &g_rand, f);
}

/*
 * Build one whole datagram of flow f, ip_len bytes of IP packet (with
 * IPv4 options / an IPv6 destination-options header), DF set on IPv4 when
 * df says so. Returns its frame count (1).
 */
static int build(FIXTURE_DATA(tb) * self, const struct maglev_flow_key *f, size_t ip_len, int df)
{
	static uint8_t payload[1600];
	int v6 = f->family == MAGLEV_AF_INET6, n;
	struct kmod_shape s = {.ip_options = !v6, .dst_opts = v6};
	size_t i, plen = ip_len - (v6 ? 40 + 8 : 28) - 8;
	uint8_t *ip;

	for (i = 0; i < plen; i++)
		payload[i] = (uint8_t)kmod_rand(&g_rand);
	n = kmod_build(f, payload, plen, &s, (uint32_t)kmod_rand(&g_rand), self->fr);
	if (n != 1 || self->fr[0].len != 14 + ip_len)
		return -1;
	ip = self->fr[0].b + 14;
	if (!v6 && df) {
		uint16_t c;

		ip[6] |= 0x40;
		memset(ip + 10, 0, 2);
		c = kmod_csum_fold(kmod_csum_add(0, ip, 28));
		memcpy(ip + 10, &c, 2);
	}
	return n;
}

/* The ICMP error c0 receives within timeout_ms, about flow f: its next-hop
 * MTU, or -1 if none came.
 */
static long icmp_mtu(FIXTURE_DATA(tb) * self, const struct maglev_flow_key *f, int timeout_ms)
{
	int v6 = f->family == MAGLEV_AF_INET6;
	struct pollfd p = {.fd = self->watch, .events = POLLIN};
	uint8_t *ip, *ic, *q;

	while (poll(&p, 1, timeout_ms) == 1) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t got = recvfrom(self->watch, self->rx, sizeof(self->rx), 0,
				       (struct sockaddr *)&from, &fl);

		if (got < 14 + 20 + 8 + 20 || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		ip = self->rx + 14;
		if (!v6 && self->rx[12] == 0x08 && self->rx[13] == 0x00 && ip[9] == IPPROTO_ICMP) {
			ic = ip + (ip[0] & 0xf) * 4;
			q = ic + 8;
			if (ic[0] == 3 && ic[1] == 4 && !memcmp(q + 12, f->src, 4) &&
			    !memcmp(q + 16, f->dst, 4))
				return ic[6] << 8 | ic[7];
		} else if (v6 && self->rx[12] == 0x86 && self->rx[13] == 0xdd &&
			   ip[6] == IPPROTO_ICMPV6) {
			ic = ip + 40;
			q = ic + 8;
			if (got >= 14 + 40 + 8 + 40 && ic[0] == 2 && !memcmp(q + 8, f->src, 16) &&
			    !memcmp(q + 24, f->dst, 16))
				return (long)ic[4] << 24 | ic[5] << 16 | ic[6] << 8 | ic[7];
		}
	}
	return -1;
}

static uint64_t stat_of(FIXTURE_DATA(tb) * self, int what)
{
	struct slowpath_stats st;

	return slowpath_nl_stats(self->nl, &st) ? ~0ULL : st.cnt[what];
}

/* Datagrams of VIP v: one of ip_len bytes (df on IPv4) must draw an ICMP
 * error with the VIP's MTU and reach no backend; one 8 bytes shorter, or
 * without DF, arrives (at the VIP's backend).
 */
static void too_big_case(struct __test_metadata *_metadata, FIXTURE_DATA(tb) * self, int v)
{
	static struct kmod_rx rx;
	struct maglev_flow_key f;
	uint64_t tb0 = stat_of(self, MAGLEV_STAT_TOO_BIG);
	uint64_t fw0 = stat_of(self, MAGLEV_STAT_FORWARDED);
	int v6 = vips[v].family == MAGLEV_AF_INET6;

	flow_of(v, &f);
	ASSERT_EQ(1, build(self, &f, 1500, 1));
	ASSERT_EQ(0, kmod_send_frames(self->client, self->fr, NULL, 1));
	EXPECT_EQ((long)vips[v].mtu, icmp_mtu(self, &f, 3000))
	{
		TH_LOG("VIP %s: no %s with MTU %u for a 1,500-byte packet with %s", vips[v].addr,
		       v6 ? "packet too big" : "fragmentation needed", vips[v].mtu,
		       v6 ? "a destination-options header" : "IPv4 options and DF");
	}
	EXPECT_EQ(-1, kmod_recv_any(self->fds, 200, &rx))
	{
		TH_LOG("the too-big datagram reached backend %d", rx.backend + 1);
	}
	EXPECT_EQ(tb0 + 1, stat_of(self, MAGLEV_STAT_TOO_BIG));
	EXPECT_EQ(fw0, stat_of(self, MAGLEV_STAT_FORWARDED));

	/* The largest that fits: exactly the MTU told. */
	flow_of(v, &f);
	ASSERT_EQ(1, build(self, &f, vips[v].mtu, 1));
	ASSERT_EQ(0, kmod_send_frames(self->client, self->fr, NULL, 1));
	ASSERT_EQ(0, kmod_recv_any(self->fds, 3000, &rx));
	EXPECT_EQ((int)((vips[v].backend - 1) % 10), rx.backend);
	EXPECT_EQ(-1, icmp_mtu(self, &f, 50));
	if (v6)
		return;
	/* IPv4 without DF: cut, and arrives whole. */
	flow_of(v, &f);
	ASSERT_EQ(1, build(self, &f, 1500, 0));
	ASSERT_EQ(0, kmod_send_frames(self->client, self->fr, NULL, 1));
	ASSERT_EQ(0, kmod_recv_any(self->fds, 3000, &rx));
	EXPECT_EQ(1500 - 28 - 8, rx.len);
	EXPECT_EQ(-1, icmp_mtu(self, &f, 50));
}

TEST_F(tb, ipv4_options_df_answered)
{
	too_big_case(_metadata, self, 0);
}

TEST_F(tb, ipv6_dstopts_answered)
{
	too_big_case(_metadata, self, 1);
}

int main(int argc, char **argv)
{
	return kmod_topology_main(argc, argv, setup);
}
