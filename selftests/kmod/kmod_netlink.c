// SPDX-License-Identifier: GPL-2.0-only
/*
 * The slow-path module's generic netlink interface, inside the 6.1 VM:
 * round trips, table staging rules, rejection of garbage and out-of-range
 * requests (right errno, no state change), privilege checks, the VIP limit,
 * and a differential test: for 10,000 random flows the module's pick
 * (LOOKUP runs the hook's code) equals the userspace reference computed
 * with include/maglev_hash.h over the same table.
 *
 * Every test runs in a fresh network namespace of its own (configuration
 * is per namespace), so nothing leaks between tests or into the host.
 */
#include <sys/syscall.h>
#include <linux/capability.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "kselftest_harness.h"
#include "kmod_util.h"

#define VIP4 "198.51.100.10"
#define VIP6 "2001:db8:100::10"

static struct maglev_vip_key vip_key(int family, const char *addr, uint16_t port, uint8_t proto)
{
	struct maglev_vip_key k = {.family = family, .proto = proto, .port = htons(port)};

	inet_pton(family == MAGLEV_AF_INET ? AF_INET : AF_INET6, addr, k.addr);
	return k;
}

static struct maglev_backend backend(int family, const char *addr)
{
	struct maglev_backend b = {.family = family};

	inet_pton(family == MAGLEV_AF_INET ? AF_INET : AF_INET6, addr, b.addr);
	return b;
}

/* Everything a client can read back: compared before and after bad requests. */
struct snapshot {
	struct slowpath_config cfg;
	int nvips;
	struct slowpath_vip_state vips[8];
	struct maglev_backend be[4];
	int be_err[4];
	struct slowpath_lookup pick;
	int pick_err;
};

static void take_snapshot(struct slowpath_nl *nl, struct snapshot *s)
{
	struct maglev_flow_key f = {.family = MAGLEV_AF_INET, .proto = IPPROTO_UDP};
	int i;

	memset(s, 0, sizeof(*s));
	slowpath_nl_config_get(nl, &s->cfg);
	s->nvips = slowpath_nl_vip_list(nl, s->vips, 8);
	for (i = 0; i < 4; i++)
		s->be_err[i] = slowpath_nl_backend_get(nl, i + 1, &s->be[i]);
	inet_pton(AF_INET, "198.51.100.200", f.src);
	inet_pton(AF_INET, VIP4, f.dst);
	f.sport = htons(40000);
	f.dport = htons(53);
	s->pick_err = slowpath_nl_lookup(nl, &f, &s->pick);
}

FIXTURE(nl)
{
	struct slowpath_nl *nl;
	char buf[65536];
};

FIXTURE_SETUP(nl)
{
	int err;

	self->nl = NULL;
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	err = slowpath_nl_open(&self->nl);
	/* _exit(255) is the harness's skip: 6.1's would run the body after a
	 * SKIP in setup that only returns.
	 */
	if (err == -ENOENT)
		SKIP(_exit(255), "maglev genetlink family not registered (module not loaded)");
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(nl)
{
	slowpath_nl_close(self->nl);
}

/* A request built by hand, for the malformed cases the library never sends. */
static struct nlmsghdr *raw(FIXTURE_DATA(nl) * self, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(self->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = slowpath_nl_family_id(self->nl);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MAGLEV_GENL_VERSION;
	return nlh;
}

static void put_key(struct nlmsghdr *nlh, const struct maglev_vip_key *k)
{
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, k->family);
	mnl_attr_put(nlh, MAGLEV_A_ADDR, k->family == MAGLEV_AF_INET ? 4 : 16, k->addr);
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, k->port);
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, k->proto);
}

TEST_F(nl, config_roundtrip)
{
	struct slowpath_config in = {.seed = {0x0123456789abcdefULL, 0xfedcba9876543210ULL}};
	struct slowpath_config out;

	ASSERT_EQ(0, slowpath_nl_config_get(self->nl, &out));
	EXPECT_EQ(MAGLEV_DEFAULT_SEED_K0, out.seed.k0);
	EXPECT_EQ(MAGLEV_DEFAULT_SEED_K1, out.seed.k1);
	inet_pton(AF_INET, "203.0.113.1", &in.src4);
	inet_pton(AF_INET6, "2001:db8:2::1", in.src6);
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &in));
	ASSERT_EQ(0, slowpath_nl_config_get(self->nl, &out));
	/* No prefix length given: the whole address. */
	in.src4_plen = 32;
	in.src6_plen = 128;
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
	/* Source prefixes (per-flow outer sources). */
	inet_pton(AF_INET, "203.0.113.64", &in.src4);
	in.src4_plen = 26;
	in.src6_plen = 100;
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &in));
	ASSERT_EQ(0, slowpath_nl_config_get(self->nl, &out));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
}

TEST_F(nl, vip_backend_roundtrip)
{
	struct maglev_vip_key k4 = vip_key(MAGLEV_AF_INET, VIP4, 80, IPPROTO_TCP);
	struct maglev_vip_key k6 = vip_key(MAGLEV_AF_INET6, VIP6, 0, IPPROTO_UDP);
	struct maglev_vip_info gue = {.encap = MAGLEV_ENCAP_GUE, .gue_port = htons(6080)};
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct maglev_backend b4 = backend(MAGLEV_AF_INET, "203.0.113.10");
	struct maglev_backend b6 = backend(MAGLEV_AF_INET6, "2001:db8:2:1::2");
	struct slowpath_vip_state v[4];
	struct maglev_backend got;

	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k4, &ipip));
	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k6, &gue));
	ASSERT_EQ(2, slowpath_nl_vip_list(self->nl, v, 4));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->nl, &k6, &v[0]));
	EXPECT_EQ(0, memcmp(&k6, &v[0].key, sizeof(k6)));
	EXPECT_EQ(MAGLEV_ENCAP_GUE, v[0].encap);
	EXPECT_EQ(htons(6080), v[0].gue_port);
	EXPECT_EQ(0, v[0].has_table);
	/* Update in place: same key, new encapsulation. */
	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k6, &ipip));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->nl, &k6, &v[0]));
	EXPECT_EQ(MAGLEV_ENCAP_IPIP, v[0].encap);
	ASSERT_EQ(2, slowpath_nl_vip_list(self->nl, v, 4));

	ASSERT_EQ(0, slowpath_nl_backend_set(self->nl, 7, &b4));
	ASSERT_EQ(0, slowpath_nl_backend_set(self->nl, MAGLEV_GENL_BACKEND_MAX, &b6));
	ASSERT_EQ(0, slowpath_nl_backend_get(self->nl, 7, &got));
	EXPECT_EQ(MAGLEV_AF_INET, got.family);
	EXPECT_EQ(0, memcmp(b4.addr, got.addr, 16));
	ASSERT_EQ(0, slowpath_nl_backend_get(self->nl, MAGLEV_GENL_BACKEND_MAX, &got));
	EXPECT_EQ(0, memcmp(b6.addr, got.addr, 16));
	EXPECT_EQ(-ENOENT, slowpath_nl_backend_get(self->nl, 8, &got));
	ASSERT_EQ(0, slowpath_nl_backend_del(self->nl, 7));
	EXPECT_EQ(-ENOENT, slowpath_nl_backend_get(self->nl, 7, &got));

	ASSERT_EQ(0, slowpath_nl_vip_del(self->nl, &k4));
	EXPECT_EQ(-ENOENT, slowpath_nl_vip_get(self->nl, &k4, &v[0]));
	ASSERT_EQ(1, slowpath_nl_vip_list(self->nl, v, 4));
}

/* Begin/chunk/commit: every misuse is refused and the live table stays. */
TEST_F(nl, table_staging_rules)
{
	struct maglev_vip_key k = vip_key(MAGLEV_AF_INET, VIP4, 53, IPPROTO_UDP);
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct maglev_vip_key other = vip_key(MAGLEV_AF_INET, VIP4, 54, IPPROTO_UDP);
	uint32_t t1[251], t2[251], chunk[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	struct slowpath_vip_state v;
	struct nlmsghdr *nlh;
	int i;

	for (i = 0; i < 251; i++) {
		t1[i] = 1;
		t2[i] = 2;
	}
	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
	/* No table yet: nothing to commit or fill. */
	nlh = raw(self, MAGLEV_CMD_TABLE_COMMIT);
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 1);
	EXPECT_EQ(-ENOENT, slowpath_nl_request_raw(self->nl, nlh));
	/* A table for a VIP that does not exist. */
	EXPECT_EQ(-ENOENT, slowpath_nl_table_push(self->nl, &other, 1, t1, 251));

	ASSERT_EQ(0, slowpath_nl_table_push(self->nl, &k, 10, t1, 251));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->nl, &k, &v));
	EXPECT_EQ(1, v.has_table);
	EXPECT_EQ(10, v.table_gen);
	EXPECT_EQ(251, v.table_size);

	/* Stage generation 11, then misuse it. */
	nlh = raw(self, MAGLEV_CMD_TABLE_BEGIN);
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 11);
	mnl_attr_put_u32(nlh, MAGLEV_A_TABLE_SIZE, 251);
	ASSERT_EQ(0, slowpath_nl_request_raw(self->nl, nlh));

	nlh = raw(self, MAGLEV_CMD_TABLE_CHUNK); /* wrong generation */
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 12);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 0);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(chunk), chunk);
	EXPECT_EQ(-ESTALE, slowpath_nl_request_raw(self->nl, nlh));

	nlh = raw(self, MAGLEV_CMD_TABLE_CHUNK); /* not the next slot */
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 11);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 8);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(chunk), chunk);
	EXPECT_EQ(-EINVAL, slowpath_nl_request_raw(self->nl, nlh));

	for (i = 0; i < 31; i++) { /* 248 of 251 slots */
		nlh = raw(self, MAGLEV_CMD_TABLE_CHUNK);
		put_key(nlh, &k);
		mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 11);
		mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, i * 8);
		mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(chunk), chunk);
		ASSERT_EQ(0, slowpath_nl_request_raw(self->nl, nlh));
	}
	nlh = raw(self, MAGLEV_CMD_TABLE_CHUNK); /* a slot already filled */
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 11);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 240);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(chunk), chunk);
	EXPECT_EQ(-EINVAL, slowpath_nl_request_raw(self->nl, nlh));

	nlh = raw(self, MAGLEV_CMD_TABLE_CHUNK); /* past the end */
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 11);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 248);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(chunk), chunk);
	EXPECT_EQ(-ERANGE, slowpath_nl_request_raw(self->nl, nlh));

	nlh = raw(self, MAGLEV_CMD_TABLE_COMMIT); /* incomplete */
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 11);
	EXPECT_EQ(-EINVAL, slowpath_nl_request_raw(self->nl, nlh));
	EXPECT_NE(NULL, strstr(slowpath_nl_errmsg(self->nl), "incomplete"));

	nlh = raw(self, MAGLEV_CMD_TABLE_COMMIT); /* wrong generation */
	put_key(nlh, &k);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 10);
	EXPECT_EQ(-ESTALE, slowpath_nl_request_raw(self->nl, nlh));

	/* None of that touched the live table. */
	ASSERT_EQ(0, slowpath_nl_vip_get(self->nl, &k, &v));
	EXPECT_EQ(10, v.table_gen);

	/* A full push of generation 12 replaces it. */
	ASSERT_EQ(0, slowpath_nl_table_push(self->nl, &k, 12, t2, 251));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->nl, &k, &v));
	EXPECT_EQ(12, v.table_gen);
}

struct bad_request {
	const char *name;
	int expect;
	void (*build)(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh);
	uint8_t cmd;
};

static void b4_put(struct nlmsghdr *nlh, uint32_t idx, uint8_t family, int alen)
{
	static const uint8_t addr[16] = {203, 0, 113, 10};

	mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, idx);
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, family);
	mnl_attr_put(nlh, MAGLEV_A_ADDR, alen, addr);
}

static void bad_idx0(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	b4_put(nlh, 0, MAGLEV_AF_INET, 4);
}

static void bad_idx_big(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	b4_put(nlh, MAGLEV_GENL_BACKEND_MAX + 1, MAGLEV_AF_INET, 4);
}

static void bad_idx_u16(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	mnl_attr_put_u16(nlh, MAGLEV_A_BACKEND_IDX, 3);
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, MAGLEV_AF_INET);
	mnl_attr_put_u32(nlh, MAGLEV_A_ADDR, 0x0a7100cb);
}

static void bad_no_addr(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, 3);
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, MAGLEV_AF_INET);
}

static void bad_family(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	b4_put(nlh, 3, 3, 4);
}

static void bad_addr_family(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	b4_put(nlh, 3, MAGLEV_AF_INET, 16);
}

static void bad_addr_len(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	b4_put(nlh, 3, MAGLEV_AF_INET, 5);
}

static void vip_put(struct nlmsghdr *nlh, uint8_t proto)
{
	struct maglev_vip_key k = vip_key(MAGLEV_AF_INET, "198.51.100.99", 80, proto);

	put_key(nlh, &k);
}

static void bad_proto(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_ICMP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
}

static void bad_encap(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, 2);
}

static void bad_gue_noport(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_GUE);
}

static void bad_gue_port0(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_GUE);
	mnl_attr_put_u16(nlh, MAGLEV_A_GUE_PORT, 0);
}

static void bad_ipip_port(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
	mnl_attr_put_u16(nlh, MAGLEV_A_GUE_PORT, htons(6080));
}

static void bad_unknown_attr(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
	mnl_attr_put_u32(nlh, MAGLEV_A_MAX + 1, 1);
}

static void bad_reply_attr(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
	mnl_attr_put_u64(nlh, MAGLEV_A_TABLE_GEN, 1);
}

static void bad_truncated_attr(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	struct nlattr *a;

	vip_put(nlh, IPPROTO_TCP);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
	a->nla_len = 200; /* claims more than the message holds */
}

static void bad_reserved(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	g->reserved = 1;
	vip_put(nlh, IPPROTO_TCP);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
}

static void bad_short(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	nlh->nlmsg_len = sizeof(*nlh) + 2; /* half a genetlink header */
}

static void bad_vip_del_missing(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	vip_put(nlh, IPPROTO_UDP);
}

static void bad_backend_del_missing(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, 4);
}

static void existing_vip(struct nlmsghdr *nlh)
{
	struct maglev_vip_key k = vip_key(MAGLEV_AF_INET, VIP4, 0, IPPROTO_UDP);

	put_key(nlh, &k);
}

static void bad_size0(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	existing_vip(nlh);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 99);
	mnl_attr_put_u32(nlh, MAGLEV_A_TABLE_SIZE, 0);
}

static void bad_size_big(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	existing_vip(nlh);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 99);
	mnl_attr_put_u32(nlh, MAGLEV_A_TABLE_SIZE, MAGLEV_GENL_TABLE_MAX + 1);
}

static void bad_entries_len(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	static const uint8_t six[6] = {1};

	existing_vip(nlh);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 1);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 0);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(six), six);
}

static void bad_entry_value(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	uint32_t e[2] = {1, MAGLEV_GENL_BACKEND_MAX + 1};

	existing_vip(nlh);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 1);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 0);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(e), e);
}

static void bad_entries_big(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	static uint32_t e[MAGLEV_GENL_CHUNK_MAX + 1];

	existing_vip(nlh);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, 1);
	mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, 0);
	mnl_attr_put(nlh, MAGLEV_A_ENTRIES, sizeof(e), e);
}

static void bad_seed_missing(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K0, 1);
}

static void bad_src4_len(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	static const uint8_t three[3] = {203, 0, 113};

	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K0, 1);
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K1, 2);
	mnl_attr_put(nlh, MAGLEV_A_SRC4, sizeof(three), three);
}

static void bad_src4_plen(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	static const uint8_t a[4] = {203, 0, 113, 64};

	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K0, 1);
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K1, 2);
	mnl_attr_put(nlh, MAGLEV_A_SRC4, sizeof(a), a);
	mnl_attr_put_u8(nlh, MAGLEV_A_SRC4_PLEN, 33);
}

static void bad_src6_plen0(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	static const uint8_t a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 5};

	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K0, 1);
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K1, 2);
	mnl_attr_put(nlh, MAGLEV_A_SRC6, sizeof(a), a);
	mnl_attr_put_u8(nlh, MAGLEV_A_SRC6_PLEN, 0);
}

static void bad_plen_no_src(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K0, 1);
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K1, 2);
	mnl_attr_put_u8(nlh, MAGLEV_A_SRC4_PLEN, 24);
}

static void bad_lookup_addr(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
	static const uint8_t a16[16] = {0x20, 0x01, 0x0d, 0xb8};

	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, MAGLEV_AF_INET);
	mnl_attr_put(nlh, MAGLEV_A_SADDR, 16, a16);
	mnl_attr_put(nlh, MAGLEV_A_ADDR, 4, a16);
	mnl_attr_put_u16(nlh, MAGLEV_A_SPORT, htons(1));
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, htons(53));
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, IPPROTO_UDP);
}

static void nothing(FIXTURE_DATA(nl) * self, struct nlmsghdr *nlh)
{
}

static const struct bad_request bad_requests[] = {
	{"unknown command", -EOPNOTSUPP, nothing, 200},
	{"backend index 0", -ERANGE, bad_idx0, MAGLEV_CMD_BACKEND_SET},
	{"backend index too big", -ERANGE, bad_idx_big, MAGLEV_CMD_BACKEND_SET},
	{"backend index as u16", -EINVAL, bad_idx_u16, MAGLEV_CMD_BACKEND_SET},
	{"backend without address", -EINVAL, bad_no_addr, MAGLEV_CMD_BACKEND_SET},
	{"backend family 3", -EINVAL, bad_family, MAGLEV_CMD_BACKEND_SET},
	{"IPv4 backend, 16-byte address", -EINVAL, bad_addr_family, MAGLEV_CMD_BACKEND_SET},
	{"5-byte address", -EINVAL, bad_addr_len, MAGLEV_CMD_BACKEND_SET},
	{"VIP protocol ICMP", -EINVAL, bad_proto, MAGLEV_CMD_VIP_SET},
	{"VIP encap 2", -ERANGE, bad_encap, MAGLEV_CMD_VIP_SET},
	{"GUE VIP without port", -EINVAL, bad_gue_noport, MAGLEV_CMD_VIP_SET},
	{"GUE port 0", -ERANGE, bad_gue_port0, MAGLEV_CMD_VIP_SET},
	{"IPIP VIP with GUE port", -EINVAL, bad_ipip_port, MAGLEV_CMD_VIP_SET},
	{"unknown attribute", -EINVAL, bad_unknown_attr, MAGLEV_CMD_VIP_SET},
	{"reply-only attribute", -EINVAL, bad_reply_attr, MAGLEV_CMD_VIP_SET},
	{"truncated attribute", -EINVAL, bad_truncated_attr, MAGLEV_CMD_VIP_SET},
	{"reserved header field", -EINVAL, bad_reserved, MAGLEV_CMD_VIP_SET},
	{"short genetlink header", -EINVAL, bad_short, MAGLEV_CMD_VIP_SET},
	{"delete missing VIP", -ENOENT, bad_vip_del_missing, MAGLEV_CMD_VIP_DEL},
	{"delete missing backend", -ENOENT, bad_backend_del_missing, MAGLEV_CMD_BACKEND_DEL},
	{"table size 0", -ERANGE, bad_size0, MAGLEV_CMD_TABLE_BEGIN},
	{"table size too big", -ERANGE, bad_size_big, MAGLEV_CMD_TABLE_BEGIN},
	{"entries of 6 bytes", -EINVAL, bad_entries_len, MAGLEV_CMD_TABLE_CHUNK},
	{"entry out of range", -ERANGE, bad_entry_value, MAGLEV_CMD_TABLE_CHUNK},
	{"chunk too big", -ERANGE, bad_entries_big, MAGLEV_CMD_TABLE_CHUNK},
	{"seed half missing", -EINVAL, bad_seed_missing, MAGLEV_CMD_CONFIG_SET},
	{"3-byte IPv4 source", -ERANGE, bad_src4_len, MAGLEV_CMD_CONFIG_SET},
	{"IPv4 source prefix /33", -ERANGE, bad_src4_plen, MAGLEV_CMD_CONFIG_SET},
	{"IPv6 source prefix /0", -ERANGE, bad_src6_plen0, MAGLEV_CMD_CONFIG_SET},
	{"prefix length without source", -EINVAL, bad_plen_no_src, MAGLEV_CMD_CONFIG_SET},
	{"lookup, address length vs family", -EINVAL, bad_lookup_addr, MAGLEV_CMD_LOOKUP},
};

TEST_F(nl, garbage_rejected_without_state_change)
{
	struct maglev_vip_key k = vip_key(MAGLEV_AF_INET, VIP4, 0, IPPROTO_UDP);
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct slowpath_config cfg = {.seed = {11, 22}};
	struct maglev_backend b = backend(MAGLEV_AF_INET, "203.0.113.10");
	struct snapshot before, after;
	uint32_t table[251];
	size_t i;

	/* Some state to (not) disturb: a seed, a VIP with a table, a backend. */
	for (i = 0; i < 251; i++)
		table[i] = 1 + i % 3;
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &cfg));
	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
	ASSERT_EQ(0, slowpath_nl_backend_set(self->nl, 1, &b));
	ASSERT_EQ(0, slowpath_nl_table_push(self->nl, &k, 5, table, 251));
	take_snapshot(self->nl, &before);
	ASSERT_EQ(1, before.nvips);
	ASSERT_EQ(0, before.pick_err);

	for (i = 0; i < sizeof(bad_requests) / sizeof(bad_requests[0]); i++) {
		const struct bad_request *r = &bad_requests[i];
		struct nlmsghdr *nlh = raw(self, r->cmd);
		int err;

		r->build(self, nlh);
		err = slowpath_nl_request_raw(self->nl, nlh);
		EXPECT_EQ(r->expect, err)
		{
			TH_LOG("%s: got %d (%s), want %d", r->name, err,
			       slowpath_nl_errmsg(self->nl), r->expect);
		}
		take_snapshot(self->nl, &after);
		EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)))
		{
			TH_LOG("%s changed the module's state", r->name);
		}
	}
}

/* Without CAP_NET_ADMIN: reads work, every change is refused. */
TEST_F(nl, unprivileged_rejected)
{
	struct maglev_vip_key k = vip_key(MAGLEV_AF_INET, VIP4, 0, IPPROTO_UDP);
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct maglev_backend b = backend(MAGLEV_AF_INET, "203.0.113.10");
	struct slowpath_config cfg = {.seed = {1, 2}};
	struct slowpath_vip_state v[2];
	struct slowpath_stats st;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct caps[2];
	uint32_t table[251] = {0};

	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
	/* Drop CAP_NET_ADMIN from the effective set of this test process. */
	ASSERT_EQ(0, syscall(SYS_capget, &hdr, caps));
	caps[0].effective &= ~(1U << CAP_NET_ADMIN);
	ASSERT_EQ(0, syscall(SYS_capset, &hdr, caps));

	EXPECT_EQ(-EPERM, slowpath_nl_vip_set(self->nl, &k, &ipip));
	EXPECT_EQ(-EPERM, slowpath_nl_vip_del(self->nl, &k));
	EXPECT_EQ(-EPERM, slowpath_nl_backend_set(self->nl, 1, &b));
	EXPECT_EQ(-EPERM, slowpath_nl_config_set(self->nl, &cfg));
	EXPECT_EQ(-EPERM, slowpath_nl_config_get(self->nl, &cfg));
	EXPECT_EQ(-EPERM, slowpath_nl_table_push(self->nl, &k, 1, table, 251));
	EXPECT_EQ(1, slowpath_nl_vip_list(self->nl, v, 2));
	EXPECT_EQ(0, slowpath_nl_stats(self->nl, &st));
}

TEST_F(nl, vip_limit)
{
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct maglev_vip_key k;
	int i;

	for (i = 0; i < MAGLEV_GENL_MAX_VIPS; i++) {
		k = vip_key(MAGLEV_AF_INET, VIP4, 1000 + i, IPPROTO_TCP);
		ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
	}
	k = vip_key(MAGLEV_AF_INET, VIP4, 999, IPPROTO_TCP);
	EXPECT_EQ(-ENOSPC, slowpath_nl_vip_set(self->nl, &k, &ipip));
	EXPECT_EQ(MAGLEV_GENL_MAX_VIPS, slowpath_nl_vip_list(self->nl, NULL, 0));
	/* Updating an existing VIP at the limit still works. */
	k = vip_key(MAGLEV_AF_INET, VIP4, 1000, IPPROTO_TCP);
	EXPECT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
	EXPECT_EQ(0, slowpath_nl_vip_del(self->nl, &k));
	k = vip_key(MAGLEV_AF_INET, VIP4, 999, IPPROTO_TCP);
	EXPECT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
}

/*
 * Differential: random seed, six VIPs (both families, TCP and UDP, exact
 * port and all-ports), random tables of three sizes, 10,000 random flows.
 */
TEST_F_TIMEOUT(nl, lookup_matches_userspace_10000_flows, 120)
{
	static const uint32_t sizes[] = {65537, 251, 4093};
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct maglev_vip_key keys[6];
	struct slowpath_config cfg = {};
	uint32_t *tables[6], size[6];
	uint64_t rs = kmod_seed_from_env();
	int i, v, mismatches = 0;

	TH_LOG("MAGLEV_TEST_SEED=0x%llx", (unsigned long long)rs);
	cfg.seed.k0 = kmod_rand(&rs);
	cfg.seed.k1 = kmod_rand(&rs);
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &cfg));
	keys[0] = vip_key(MAGLEV_AF_INET, "198.51.100.10", 80, IPPROTO_TCP);
	keys[1] = vip_key(MAGLEV_AF_INET, "198.51.100.10", 0, IPPROTO_UDP);
	keys[2] = vip_key(MAGLEV_AF_INET, "198.51.100.11", 443, IPPROTO_TCP);
	keys[3] = vip_key(MAGLEV_AF_INET6, "2001:db8:100::10", 80, IPPROTO_TCP);
	keys[4] = vip_key(MAGLEV_AF_INET6, "2001:db8:100::10", 0, IPPROTO_UDP);
	keys[5] = vip_key(MAGLEV_AF_INET6, "2001:db8:100::11", 443, IPPROTO_TCP);
	for (v = 0; v < 6; v++) {
		size[v] = sizes[v % 3];
		tables[v] = malloc(size[v] * sizeof(uint32_t));
		ASSERT_NE(NULL, tables[v]);
		for (i = 0; i < (int)size[v]; i++)
			tables[v][i] = 1 + kmod_rand(&rs) % MAGLEV_GENL_BACKEND_MAX;
		ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &keys[v], &ipip));
		ASSERT_EQ(0,
			  slowpath_nl_table_push(self->nl, &keys[v], 100 + v, tables[v], size[v]));
	}

	for (i = 0; i < 10000; i++) {
		struct maglev_flow_key f = {};
		struct slowpath_lookup got;
		uint64_t r = kmod_rand(&rs);
		uint32_t want;
		int j;

		v = r % 6;
		f.family = keys[v].family;
		f.proto = keys[v].proto;
		memcpy(f.dst, keys[v].addr, sizeof(f.dst));
		/* Clients from 198.51.100.128/25 or 2001:db8:c::/64, random ports. */
		if (f.family == MAGLEV_AF_INET) {
			f.src[0] = htonl(0xc6336480 | (kmod_rand(&rs) & 0x7f));
		} else {
			f.src[0] = htonl(0x20010db8);
			f.src[1] = htonl(0x000c0000);
			for (j = 2; j < 4; j++)
				f.src[j] = (uint32_t)kmod_rand(&rs);
		}
		f.sport = (uint16_t)kmod_rand(&rs);
		f.dport = keys[v].port ? keys[v].port : (uint16_t)kmod_rand(&rs);
		ASSERT_EQ(0, slowpath_nl_lookup(self->nl, &f, &got))
		{
			TH_LOG("lookup failed: %s", slowpath_nl_errmsg(self->nl));
		}
		want = kmod_expected_pick(&cfg.seed, &f, tables[v], size[v]);
		if (got.backend_idx != want || got.table_gen != (uint64_t)(100 + v)) {
			if (mismatches++ < 5)
				TH_LOG("flow %d (VIP %d): module picked %u gen %llu, userspace %u",
				       i, v, got.backend_idx, (unsigned long long)got.table_gen,
				       want);
		}
	}
	EXPECT_EQ(0, mismatches);
	for (v = 0; v < 6; v++)
		free(tables[v]);
}

/* Configuration belongs to the namespace it was made in. */
TEST_F(nl, namespaces_isolated)
{
	struct maglev_vip_key k = vip_key(MAGLEV_AF_INET6, VIP6, 0, IPPROTO_UDP);
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct slowpath_nl *other;

	ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &k, &ipip));
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, slowpath_nl_open(&other));
	EXPECT_EQ(0, slowpath_nl_vip_list(other, NULL, 0));
	EXPECT_EQ(1, slowpath_nl_vip_list(self->nl, NULL, 0));
	slowpath_nl_close(other);
}

TEST_HARNESS_MAIN
