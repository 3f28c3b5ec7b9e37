// SPDX-License-Identifier: GPL-2.0-only
/*
 * Issue 31 item 4 from the XDP side, on the 6.1 kernel (the VM: this host
 * has no fou): the XDP balancer's own second-chance frames, made with
 * BPF_PROG_TEST_RUN, are sent into a backend namespace that decapsulates
 * with the kernel's GUE receiver alone (`ip fou add port 6080 gue`, an ipip
 * and an ip6tnl device; no maglev_decap). Over IPv4 and over IPv6, whose
 * UDP checksum XDP leaves 0 (RFC 6935): the inner packet must arrive on the
 * backend's tunnel device byte for byte as XDP sent it inside GUE. With the
 * first encoding (GUE flags 0x0001) fou dropped both.
 */
#include <poll.h>
#include <sched.h>
#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include "fixture.h"
#include "kmod_util.h"
#include "maglev_second.h"

static const char *const topo_down = "ip netns del mxf-lb 2>/dev/null; "
				     "ip netns del mxf-b 2>/dev/null; true";

/* mxf-lb's xa ==veth== eth0 of mxf-b (MAC_NEXTHOP, so XDP's frames are
 * for it); mxf-b: 192.0.2.1 and 2001:db8:b::1, fou on 6080 for both
 * families, t4 (ipip) and t6 (ip6tnl) take what fou hands on.
 */
static const char *const topo_up =
	"modprobe -a veth ipip ip6_tunnel fou fou6 && "
	"ip netns add mxf-lb && ip netns add mxf-b && "
	"ip -n mxf-lb link add xa type veth peer name eth0 netns mxf-b "
	"address 02:00:5e:00:00:03 && "
	"ip -n mxf-lb link set xa up && "
	"ip -n mxf-b -b - <<EOF\n"
	"link set lo up\n"
	"link set eth0 up\n"
	"addr add 192.0.2.1/24 dev eth0\n"
	"addr add 2001:db8:b::1/64 dev eth0 nodad\n"
	"link add t4 type ipip local 192.0.2.1 remote any\n"
	"link add t6 type ip6tnl mode any local 2001:db8:b::1 remote any\n"
	"link set t4 up\n"
	"link set t6 up\n"
	"fou add port 6080 gue\n"
	"EOF\n"
	"ip -6 -n mxf-b fou add port 6080 gue";

FIXTURE(xf)
{
	struct maglev_dp *dp;
	int prog, tx, t4, t6;
	struct flow f4;
};

/* An AF_PACKET socket on dev in the current namespace. */
static int packet_socket(const char *dev)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));

	sll.sll_ifindex = (int)if_nametoindex(dev);
	if (fd < 0 || !sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* VIP f4.dst:80 (GUE, second chance): owner backend 1 (192.0.2.1),
 * previously 2 (192.0.2.2); :82 the same over IPv6 (backends 3 and 4).
 */
FIXTURE_SETUP(xf)
{
	static uint32_t owner[MAGLEV_TABLE_SIZE], prev[MAGLEV_TABLE_SIZE];
	struct maglev_vip_info info = {.encap = MAGLEV_ENCAP_GUE,
				       .flags = MAGLEV_VIP_F_SECOND_CHANCE,
				       .gue_port = htons(6080)};
	static const uint16_t ports[2] = {80, 82};
	struct maglev_vip_key k;
	struct flow f6;
	uint8_t a[16];
	uint32_t i, v;

	self->dp = NULL;
	self->tx = self->t4 = self->t6 = -1;
	ASSERT_EQ(0, system(topo_down));
	ASSERT_EQ(0, system(topo_up));
	ASSERT_EQ(0, kmod_setns("mxf-b"));
	self->t4 = packet_socket("t4");
	self->t6 = packet_socket("t6");
	ASSERT_LE(0, self->t4);
	ASSERT_LE(0, self->t6);
	ASSERT_EQ(0, kmod_setns("mxf-lb"));
	self->tx = packet_socket("xa");
	ASSERT_LE(0, self->tx);

	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
	client_flows(&self->f4, &f6);
	for (v = 0; v < 2; v++) {
		info.vip_id = v;
		vip_key(&k, self->f4.dst, P_AF4, ports[v], IPPROTO_TCP);
		ASSERT_EQ(0, maglev_dp_vip_set(self->dp, &k, &info));
		for (i = 0; i < 2; i++) {
			if (v)
				v6addr(a, 0xb, i + 1);
			else
				v4addr(a, 192, 0, 2, (uint8_t)(i + 1));
			ASSERT_EQ(0, add_backend(self->dp, 2 * v + i + 1, a, v ? P_AF6 : P_AF4));
		}
		for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
			owner[i] = 2 * v + 1;
			prev[i] = 2 * v + 2;
		}
		ASSERT_EQ(0, maglev_dp_table_swap_prev(self->dp, v, owner, prev));
	}
}

FIXTURE_TEARDOWN(xf)
{
	if (self->dp)
		maglev_dp_close(self->dp);
	close(self->tx);
	close(self->t4);
	close(self->t6);
	if (system(topo_down))
		fprintf(stderr, "# ip netns del failed\n");
}

/* An ACK of f4 to port dport: XDP carries the previous owner; its frame
 * goes to mxf-b, whose tunnel device fd must hand on the inner packet.
 */
static void carried_reaches(struct __test_metadata *_metadata, FIXTURE_DATA(xf) * self,
			    uint16_t dport, int outer6, int fd)
{
	struct client_opts co = {.payload = 20, .tcp_flags = 0x10};
	size_t off = 14 + (outer6 ? 40 : 20) + 8 + 4, ilen;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct flow f = self->f4;
	static uint8_t in[256], got[2048];
	struct run_result r;
	ssize_t n;

	f.dport = dport;
	ASSERT_EQ(0, run_prog(self->prog, in, build_client(in, &f, &co), &r));
	ASSERT_EQ(XDP_TX, r.action);
	ASSERT_EQ(MAGLEV_GUE_PREV_WORDS, r.out[off - 4] & 0x1f); /* carried */
	EXPECT_EQ(0, get16(r.out + off - 12 + 6));		 /* UDP checksum 0 */
	off += sizeof(struct maglev_gue_prev);
	ilen = r.len - off;
	ASSERT_EQ((ssize_t)r.len, send(self->tx, r.out, r.len, 0));
	/* The first packet the device receives (not its own: t6 sends MLD). */
	do {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);

		n = -1;
		if (poll(&p, 1, 3000) != 1)
			break;
		n = recvfrom(fd, got, sizeof(got), 0, (struct sockaddr *)&from, &fl);
		if (from.sll_pkttype == PACKET_OUTGOING)
			n = 0;
	} while (!n);
	EXPECT_LT(0, n)
	{
		TH_LOG("outer IPv%d: fou/GUE handed nothing on to %s", outer6 ? 6 : 4,
		       outer6 ? "t6" : "t4");
	}
	ASSERT_EQ((ssize_t)ilen, n);
	EXPECT_EQ(0, memcmp(r.out + off, got, ilen));
}

TEST_F(xf, xdp_carried_v4_taken_by_fou)
{
	carried_reaches(_metadata, self, 80, 0, self->t4);
}

TEST_F(xf, xdp_carried_v6_taken_by_fou)
{
	carried_reaches(_metadata, self, 82, 1, self->t6);
}

TEST_HARNESS_MAIN
