// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the slow-path client library (userspace/lib/slowpath_nl.c) puts on
 * the wire, on the host, without the module: this program defines
 * mnl_socket_sendto() and mnl_socket_recvfrom() (as the netlink fuzzer's
 * capture does), records every request and answers as the kernel would:
 * the family id for CTRL_CMD_GETFAMILY, an ACK for anything else, a reply
 * for LOOKUP. Checked: a table push with previous owners carries them in
 * every chunk beside the owners, same offsets and lengths; one without
 * carries none; LOOKUP's PREV_IDX is read, and absent means none; the
 * bounded-load marks go out as OVERCAP, bit i % 32 of host-order word
 * i / 32 for backend index i, up to the highest marked one (none: no
 * attribute), and marks the module refuses are refused unsent.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "kselftest_harness.h"
#include "slowpath_nl.h"

#define FAKE_FAMILY 0x77
#define MAX_MSGS    16

static struct {
	unsigned int n;
	uint8_t *msg[MAX_MSGS];
	size_t reply_len;
	uint8_t reply[8192];
	int lookup_prev; /* LOOKUP replies carry PREV_IDX */
} g;

static void put_ack(const struct nlmsghdr *req, uint32_t portid)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(g.reply + g.reply_len);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = portid;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = 0;
	e->msg = *req;
	g.reply_len += nlh->nlmsg_len;
}

static struct nlmsghdr *put_reply(const struct nlmsghdr *req, uint32_t portid, uint16_t type,
				  uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(g.reply + g.reply_len);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = portid;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = 1;
	return nlh;
}

ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *buf, size_t len)
{
	const struct nlmsghdr *req = buf;
	const struct genlmsghdr *gh = mnl_nlmsg_get_payload(req);
	uint32_t portid = mnl_socket_get_portid(nl);
	struct nlmsghdr *r;

	if (g.n < MAX_MSGS) {
		g.msg[g.n] = malloc(len);
		if (g.msg[g.n])
			memcpy(g.msg[g.n++], buf, len);
	}
	g.reply_len = 0;
	if (req->nlmsg_type == GENL_ID_CTRL) {
		r = put_reply(req, portid, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
		mnl_attr_put_u16(r, CTRL_ATTR_FAMILY_ID, FAKE_FAMILY);
		g.reply_len += r->nlmsg_len;
	} else if (gh->cmd == MAGLEV_CMD_LOOKUP) {
		r = put_reply(req, portid, FAKE_FAMILY, MAGLEV_CMD_LOOKUP);
		mnl_attr_put_u32(r, MAGLEV_A_BACKEND_IDX, 3);
		mnl_attr_put_u32(r, MAGLEV_A_SLOT, 1234);
		mnl_attr_put_u64(r, MAGLEV_A_TABLE_GEN, 9);
		if (g.lookup_prev)
			mnl_attr_put_u32(r, MAGLEV_A_PREV_IDX, 7);
		g.reply_len += r->nlmsg_len;
	}
	put_ack(req, portid);
	return (ssize_t)len;
}

ssize_t mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf, size_t size)
{
	size_t n = g.reply_len < size ? g.reply_len : size;

	memcpy(buf, g.reply, n);
	g.reply_len = 0;
	return (ssize_t)n;
}

static void reset(void)
{
	while (g.n)
		free(g.msg[--g.n]);
}

static const struct nlattr *attr_of(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh,
			  sizeof(struct genlmsghdr)) if (mnl_attr_get_type(a) == type) return a;
	return NULL;
}

static uint8_t cmd_of(unsigned int i)
{
	return ((const struct genlmsghdr *)mnl_nlmsg_get_payload((const struct nlmsghdr *)g.msg[i]))
		->cmd;
}

FIXTURE(enc)
{
	struct slowpath_nl *nl;
	struct maglev_vip_key key;
};

FIXTURE_SETUP(enc)
{
	ASSERT_EQ(0, slowpath_nl_open(&self->nl));
	ASSERT_EQ(FAKE_FAMILY, slowpath_nl_family_id(self->nl));
	reset();
	memset(&self->key, 0, sizeof(self->key));
	self->key.family = MAGLEV_AF_INET;
	self->key.proto = IPPROTO_TCP;
	self->key.addr[0] = htonl(0xc633640c);
}

FIXTURE_TEARDOWN(enc)
{
	slowpath_nl_close(self->nl);
	reset();
}

/* 20,000 slots: chunks of 8192, 8192 and 3616, each with both arrays. */
static void push_case(struct __test_metadata *_metadata, FIXTURE_DATA(enc) * self, int with_prev)
{
	static uint32_t own[20000], prev[20000];
	const uint32_t sizes[3] = {8192, 8192, 3616};
	uint32_t i, off = 0;

	for (i = 0; i < 20000; i++) {
		own[i] = 1 + i % 5;
		prev[i] = i % 3 ? 0 : 1 + (i + 2) % 5;
	}
	ASSERT_EQ(0, slowpath_nl_table_push_prev(self->nl, &self->key, 42, own,
						 with_prev ? prev : NULL, 20000));
	ASSERT_EQ(5, g.n);
	EXPECT_EQ(MAGLEV_CMD_TABLE_BEGIN, cmd_of(0));
	EXPECT_EQ(MAGLEV_CMD_TABLE_COMMIT, cmd_of(4));
	EXPECT_EQ(NULL, attr_of((const struct nlmsghdr *)g.msg[0], MAGLEV_A_PREV_ENTRIES));
	for (i = 1; i <= 3; i++) {
		const struct nlmsghdr *m = (const struct nlmsghdr *)g.msg[i];
		const struct nlattr *e = attr_of(m, MAGLEV_A_ENTRIES);
		const struct nlattr *p = attr_of(m, MAGLEV_A_PREV_ENTRIES);
		const struct nlattr *o = attr_of(m, MAGLEV_A_OFFSET);

		EXPECT_EQ(MAGLEV_CMD_TABLE_CHUNK, cmd_of(i));
		ASSERT_NE(NULL, e);
		ASSERT_NE(NULL, o);
		EXPECT_EQ(off, mnl_attr_get_u32(o));
		ASSERT_EQ(sizes[i - 1] * 4, mnl_attr_get_payload_len(e));
		EXPECT_EQ(0, memcmp(own + off, mnl_attr_get_payload(e), sizes[i - 1] * 4));
		if (!with_prev) {
			EXPECT_EQ(NULL, p);
		} else {
			ASSERT_NE(NULL, p);
			ASSERT_EQ(sizes[i - 1] * 4, mnl_attr_get_payload_len(p));
			EXPECT_EQ(0, memcmp(prev + off, mnl_attr_get_payload(p), sizes[i - 1] * 4));
		}
		off += sizes[i - 1];
	}
}

TEST_F(enc, table_push_carries_prev_in_every_chunk)
{
	push_case(_metadata, self, 1);
}

TEST_F(enc, table_push_without_prev_sends_none)
{
	push_case(_metadata, self, 0);
}

TEST_F(enc, lookup_reads_prev_idx)
{
	struct maglev_flow_key f = {.family = MAGLEV_AF_INET, .proto = IPPROTO_TCP};
	struct slowpath_lookup out;

	g.lookup_prev = 1;
	ASSERT_EQ(0, slowpath_nl_lookup(self->nl, &f, &out));
	EXPECT_EQ(3, out.backend_idx);
	EXPECT_EQ(1234, out.slot);
	EXPECT_EQ(9, out.table_gen);
	EXPECT_EQ(7, out.prev_idx);
	/* A module from before second chance: no PREV_IDX, none. */
	g.lookup_prev = 0;
	out.prev_idx = 99;
	ASSERT_EQ(0, slowpath_nl_lookup(self->nl, &f, &out));
	EXPECT_EQ(0, out.prev_idx);
}

/* The bitmap the module decodes: only the given indices set. */
static void expect_marks(struct __test_metadata *_metadata, const struct nlattr *a,
			 const uint32_t *idx, unsigned int n)
{
	uint32_t want[MAGLEV_GENL_OVERCAP_MAX / 4] = {0}, nw = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		want[idx[i] / 32] |= 1U << (idx[i] % 32);
		if (idx[i] / 32 + 1 > nw)
			nw = idx[i] / 32 + 1;
	}
	ASSERT_NE(NULL, a);
	ASSERT_EQ(nw * 4, mnl_attr_get_payload_len(a));
	EXPECT_EQ(0, memcmp(want, mnl_attr_get_payload(a), nw * 4));
}

TEST_F(enc, overcap_marks_as_bitmap_words)
{
	static uint8_t marked[MAGLEV_MAX_BACKENDS];
	const uint32_t set1[] = {1, 31, 32, 33, 1000}, set2[] = {MAGLEV_GENL_BACKEND_MAX};
	unsigned int i;

	for (i = 0; i < sizeof(set1) / sizeof(set1[0]); i++)
		marked[set1[i]] = 1;
	ASSERT_EQ(0, slowpath_nl_overcap_set(self->nl, marked, MAGLEV_MAX_BACKENDS));
	ASSERT_EQ(1, g.n);
	EXPECT_EQ(MAGLEV_CMD_OVERCAP_SET, cmd_of(0));
	expect_marks(_metadata, attr_of((const struct nlmsghdr *)g.msg[0], MAGLEV_A_OVERCAP), set1,
		     5);

	/* The highest index: the whole 8 KiB bitmap. */
	memset(marked, 0, sizeof(marked));
	marked[MAGLEV_GENL_BACKEND_MAX] = 1;
	ASSERT_EQ(0, slowpath_nl_overcap_set(self->nl, marked, MAGLEV_MAX_BACKENDS));
	ASSERT_EQ(2, g.n);
	expect_marks(_metadata, attr_of((const struct nlmsghdr *)g.msg[1], MAGLEV_A_OVERCAP), set2,
		     1);
	EXPECT_EQ(MAGLEV_GENL_OVERCAP_MAX,
		  mnl_attr_get_payload_len(
			  attr_of((const struct nlmsghdr *)g.msg[1], MAGLEV_A_OVERCAP)));

	/* None marked: the command without the attribute (clears all). */
	memset(marked, 0, sizeof(marked));
	ASSERT_EQ(0, slowpath_nl_overcap_set(self->nl, marked, MAGLEV_MAX_BACKENDS));
	ASSERT_EQ(3, g.n);
	EXPECT_EQ(MAGLEV_CMD_OVERCAP_SET, cmd_of(2));
	EXPECT_EQ(NULL, attr_of((const struct nlmsghdr *)g.msg[2], MAGLEV_A_OVERCAP));

	/* Index 0 ("no backend") or more indices than exist: nothing sent. */
	marked[0] = 1;
	EXPECT_EQ(-EINVAL, slowpath_nl_overcap_set(self->nl, marked, MAGLEV_MAX_BACKENDS));
	marked[0] = 0;
	EXPECT_EQ(-EINVAL, slowpath_nl_overcap_set(self->nl, marked, MAGLEV_MAX_BACKENDS + 1));
	EXPECT_EQ(3, g.n);
	EXPECT_NE(NULL, strstr(slowpath_nl_errmsg(self->nl), "over-cap"));
}

TEST_HARNESS_MAIN
