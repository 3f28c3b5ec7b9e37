// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach, pin, adopt: the library pins maps and bpf_links, a reopened
 * datapath adopts the maps (connection table included) and updates the
 * pinned link in place, and close() leaves forwarding attached. Runs on a
 * veth pair in a network namespace of its own.
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>
#include "fixture.h"

FIXTURE(attach)
{
	char ns[64], pin[128];
	int ifindex, ifindex2;
};

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

FIXTURE_SETUP(attach)
{
	char path[128];
	int fd;

	snprintf(self->ns, sizeof(self->ns), "mgxdp-attach-%d", getpid());
	snprintf(self->pin, sizeof(self->pin), "/sys/fs/bpf/maglev-test-%d", getpid());
	ASSERT_EQ(0, sh("ip netns add %s", self->ns));
	ASSERT_EQ(0, sh("ip -n %s link add va type veth peer name vb && ip -n %s link set va up && "
			"ip -n %s link set vb up",
			self->ns, self->ns, self->ns));
	snprintf(path, sizeof(path), "/run/netns/%s", self->ns);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setns(fd, CLONE_NEWNET));
	close(fd);
	self->ifindex = (int)if_nametoindex("va");
	self->ifindex2 = (int)if_nametoindex("vb");
	ASSERT_LT(0, self->ifindex);
	ASSERT_LT(0, self->ifindex2);
}

FIXTURE_TEARDOWN(attach)
{
	sh("rm -rf %s", self->pin);
	sh("ip netns del %s 2>/dev/null", self->ns);
}

static uint32_t attached_id(int ifindex, int generic)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return (uint32_t)-1;
	return generic ? q.skb_prog_id : q.drv_prog_id;
}

static uint32_t prog_id(int fd)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

static int send_syn(int prog, const struct flow *f, uint8_t flags, uint8_t *dst)
{
	struct client_opts co = {.tcp_flags = flags};
	struct run_result r;
	uint8_t in[256];
	size_t n = build_client(in, f, &co);

	if (run_prog(prog, in, n, &r) || r.action != XDP_TX)
		return -1;
	outer_dst(&r, 14, dst);
	return 0;
}

TEST_F(attach, pin_adopt_and_update_link)
{
	struct maglev_dp_opts o = {.pin_dir = self->pin, .conn_table_size = 4096};
	static uint32_t table[MAGLEV_TABLE_SIZE], back[MAGLEV_TABLE_SIZE];
	struct maglev_dp *dp = NULL, *dp2 = NULL;
	uint8_t be1[16], be2[16], dst[16];
	struct maglev_flow_key k;
	struct maglev_vip_stats vs;
	struct maglev_conn c;
	uint32_t id1, id2, i;
	char err[256] = "";
	struct flow f = {.family = P_AF4, .sport = 1234, .dport = 443, .proto = IPPROTO_TCP};
	int ret;

	v4addr(f.src, 198, 51, 100, 9);
	v4addr(f.dst, 203, 0, 113, 1);
	v4addr(be1, 192, 0, 2, 1);
	v4addr(be2, 192, 0, 2, 2);
	ret = maglev_dp_open(&dp, &o, err, sizeof(err));
	if (ret)
		TH_LOG("%s", err);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, add_backend(dp, 1, be1, P_AF4));
	ASSERT_EQ(0, add_backend(dp, 2, be2, P_AF4));
	ASSERT_EQ(0, add_vip(dp, f.dst, P_AF4, 443, IPPROTO_TCP, 9, 0, 0));
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		table[i] = 1 + (i & 1);
	ASSERT_EQ(0, maglev_dp_table_swap(dp, 9, table));
	ASSERT_EQ(0, send_syn(maglev_dp_prog_fd(dp), &f, 0x02, dst));
	ret = maglev_dp_attach(dp, self->ifindex, false, err, sizeof(err));
	if (ret)
		TH_LOG("%s", err);
	ASSERT_EQ(0, ret);
	id1 = prog_id(maglev_dp_prog_fd(dp));
	ASSERT_EQ(id1, attached_id(self->ifindex, 0));
	ASSERT_EQ(0, maglev_dp_attach(dp, self->ifindex2, true, err, sizeof(err)));
	ASSERT_EQ(id1, attached_id(self->ifindex2, 1));
	maglev_dp_close(dp);
	/* Closed: the pinned link keeps the program attached. */
	ASSERT_EQ(id1, attached_id(self->ifindex, 0));

	ret = maglev_dp_open(&dp2, &o, err, sizeof(err));
	if (ret)
		TH_LOG("%s", err);
	ASSERT_EQ(0, ret);
	/* Adopted: connection entry, table, counters, backends. */
	flow_key(&k, &f);
	ASSERT_EQ(0, maglev_dp_conn_lookup(dp2, &k, &c));
	ASSERT_EQ(0, memcmp(dst, c.backend_idx == 1 ? be1 : be2, 4));
	ASSERT_EQ(0, maglev_dp_table_read(dp2, 9, back));
	ASSERT_EQ(0, memcmp(table, back, sizeof(table)));
	ASSERT_EQ(0, maglev_dp_vip_stats(dp2, 9, &vs));
	ASSERT_EQ(1, vs.packets);
	/* The flow stays on its backend through the new program even after
	 * the table moves everything to the other backend.
	 */
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		table[i] = 3 - c.backend_idx;
	ASSERT_EQ(0, maglev_dp_table_swap(dp2, 9, table));
	ASSERT_EQ(0, send_syn(maglev_dp_prog_fd(dp2), &f, 0x10, dst));
	ASSERT_EQ(0, memcmp(dst, c.backend_idx == 1 ? be1 : be2, 4));

	/* Re-attach updates the pinned link to the new program in place. */
	ASSERT_EQ(0, maglev_dp_attach(dp2, self->ifindex, false, err, sizeof(err)));
	id2 = prog_id(maglev_dp_prog_fd(dp2));
	ASSERT_NE(id1, id2);
	ASSERT_EQ(id2, attached_id(self->ifindex, 0));
	ASSERT_EQ(0, maglev_dp_detach(dp2, self->ifindex));
	ASSERT_EQ(0, attached_id(self->ifindex, 0));
	ASSERT_EQ(0, maglev_dp_detach(dp2, self->ifindex2));
	ASSERT_EQ(0, attached_id(self->ifindex2, 1));
	maglev_dp_close(dp2);
}

/* A process killed between a VIP write and its address-map writes leaves
 * the filter and the exact address map off; reopening recounts them from the
 * VIP map (and an older pin set without the exact map gets a full one).
 */
TEST_F(attach, reopen_recounts_vip_address_maps)
{
	struct maglev_dp_opts o = {.pin_dir = self->pin, .conn_table_size = 4096};
	struct maglev_vip_addr zero = {}, va;
	struct maglev_vip_key k, a = {};
	struct maglev_dp *dp = NULL;
	uint8_t be[16], dst[16];
	char err[256] = "";
	uint32_t slot, n;
	struct flow f = {.family = P_AF4, .sport = 1234, .dport = 443, .proto = IPPROTO_TCP};

	v4addr(f.src, 198, 51, 100, 9);
	v4addr(f.dst, 203, 0, 113, 1);
	v4addr(be, 192, 0, 2, 1);
	ASSERT_EQ(0, maglev_dp_open(&dp, &o, err, sizeof(err)));
	ASSERT_EQ(0, add_backend(dp, 1, be, P_AF4));
	ASSERT_EQ(0, add_vip(dp, f.dst, P_AF4, 443, IPPROTO_TCP, 9, 0, 0));
	ASSERT_EQ(0, fill_table(dp, 9, 1));
	ASSERT_EQ(0, send_syn(maglev_dp_prog_fd(dp), &f, 0x02, dst));
	/* Simulate the cut-short change: both address maps lose the VIP. */
	vip_key(&k, f.dst, P_AF4, 443, IPPROTO_TCP);
	slot = maglev_vip_filter_slot(k.addr, k.family);
	memcpy(a.addr, k.addr, sizeof(a.addr));
	a.family = k.family;
	ASSERT_EQ(0, bpf_map_update_elem(maglev_dp_map_fd(dp, "maglev_vaddrs"), &slot, &zero, 0));
	ASSERT_EQ(0, bpf_map_delete_elem(maglev_dp_map_fd(dp, "maglev_vipaddrs"), &a));
	ASSERT_EQ(-1, send_syn(maglev_dp_prog_fd(dp), &f, 0x02, dst)); /* passed up */
	maglev_dp_close(dp);

	dp = NULL;
	ASSERT_EQ(0, maglev_dp_open(&dp, &o, err, sizeof(err)));
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(dp, "maglev_vaddrs"), &slot, &va));
	ASSERT_EQ(1, va.tcp_ports);
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(dp, "maglev_vipaddrs"), &a, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, send_syn(maglev_dp_prog_fd(dp), &f, 0x02, dst));
	ASSERT_EQ(0, memcmp(dst, be, 4));
	/* Deleting it now leaves no count behind (no wrap to 65535). */
	ASSERT_EQ(0, maglev_dp_vip_del(dp, &k));
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(dp, "maglev_vaddrs"), &slot, &va));
	ASSERT_EQ(0, memcmp(&va, &zero, sizeof(va)));
	ASSERT_NE(0, bpf_map_lookup_elem(maglev_dp_map_fd(dp, "maglev_vipaddrs"), &a, &n));
	maglev_dp_close(dp);
}

TEST_F(attach, unpinned_links_go_with_close)
{
	struct maglev_dp_opts o = {.pin_dir = ""};
	struct maglev_dp *dp = NULL;
	char err[256] = "";

	ASSERT_EQ(0, maglev_dp_open(&dp, &o, err, sizeof(err)));
	ASSERT_EQ(0, maglev_dp_attach(dp, self->ifindex, false, err, sizeof(err)));
	ASSERT_EQ(prog_id(maglev_dp_prog_fd(dp)), attached_id(self->ifindex, 0));
	ASSERT_EQ(-EINVAL, maglev_dp_attach(dp, 0, false, err, sizeof(err)));
	ASSERT_NE(0, err[0]);
	maglev_dp_close(dp);
	ASSERT_EQ(0, attached_id(self->ifindex, 0));
}

TEST_F(attach, vip_and_backend_validation)
{
	struct maglev_dp_opts o = {.pin_dir = ""};
	struct maglev_vip_info info = {.vip_id = 1};
	struct maglev_backend b = {.family = 7};
	struct maglev_dp *dp = NULL;
	struct maglev_vip_key k;
	uint8_t a[16];
	char err[256];

	ASSERT_EQ(0, maglev_dp_open(&dp, &o, err, sizeof(err)));
	v4addr(a, 203, 0, 113, 1);
	vip_key(&k, a, P_AF4, 80, 47);
	ASSERT_EQ(-EINVAL, maglev_dp_vip_set(dp, &k, &info)); /* protocol */
	vip_key(&k, a, P_AF4, 80, IPPROTO_TCP);
	k.addr[2] = 1;
	ASSERT_EQ(-EINVAL, maglev_dp_vip_set(dp, &k, &info)); /* IPv4 with junk */
	vip_key(&k, a, P_AF4, 80, IPPROTO_TCP);
	info.vip_id = MAGLEV_MAX_VIPS;
	ASSERT_EQ(-EINVAL, maglev_dp_vip_set(dp, &k, &info));
	info.vip_id = 1;
	info.encap = 9;
	ASSERT_EQ(-EINVAL, maglev_dp_vip_set(dp, &k, &info));
	ASSERT_EQ(-ENOENT, maglev_dp_vip_del(dp, &k));
	ASSERT_EQ(-EINVAL, maglev_dp_backend_set(dp, 1, &b));
	b.family = P_AF4;
	ASSERT_EQ(-EINVAL, maglev_dp_backend_set(dp, 0, &b));
	ASSERT_EQ(-EINVAL, maglev_dp_backend_set(dp, MAGLEV_MAX_BACKENDS, &b));
	ASSERT_STREQ("drop_ttl", maglev_dp_reason_name(MAGLEV_REASON_DROP_TTL));
	ASSERT_STREQ("conn_hit", maglev_dp_counter_name(MAGLEV_CTR_CONN_HIT));
	maglev_dp_close(dp);
}

TEST_HARNESS_MAIN
