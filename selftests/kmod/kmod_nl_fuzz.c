// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bounded randomized input for the slow-path module's generic netlink family,
 * inside the 6.1 VM: every command with random attribute sets (valid types at
 * random lengths, boundary values, unknown, reply-only and nested attributes,
 * duplicates), malformed netlink and genetlink headers, byte-level mutations
 * of requests captured from the real client (userspace/lib/slowpath_nl.c),
 * and random table staging sequences checked against a model.
 *
 * Oracle: the kernel log shows no BUG/WARNING/Oops; every well-formed
 * request is answered (ACK, error or end of dump) within a receive timeout;
 * after every request that was refused, and every accepted read, the state a
 * client can read back (configuration, every VIP and backend, and lookups
 * over the baseline tables) is unchanged; the staging test predicts every
 * errno and every live table slot; at the end of each test the namespace is
 * reset and its known-good configuration looks up every table slot as the
 * userspace reference computes it.
 *
 * MAGLEV_NL_FUZZ_SEED replays a run (each test derives its own stream from
 * it), MAGLEV_NL_FUZZ_N sets the messages per test. Each test runs in a
 * network namespace of its own.
 */
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "kselftest_harness.h"
#include "kmod_util.h"

#define FZ_DEFAULT_N	  3000	/* messages per test: about 30 s in all in the TCG VM */
#define FZ_BUF		  65536 /* the largest request: a 32 KiB chunk and 30 more attributes */
#define FZ_SMALL	  512
#define FZ_RBUF		  (256 * 1024)
#define FZ_RECV_TIMEOUT_S 10
#define FZ_MAX_VIPS	  64
#define FZ_MAX_BES	  64
#define FZ_RESYNC_CHANGES 16
#define FZ_RESYNC_OBJECTS 16
#define FZ_CAPTURE_MAX	  64
#define FZ_NO_REPLY	  1 /* sentinel result: the kernel rightly sent nothing */
#define FZ_TIMEOUT	  2 /* sentinel result: no answer within the timeout */
#define FZ_NCMD		  256
#define FZ_PROBES	  3
#define FZ_STAGE_MAX_SIZE 31

static uint64_t g_seed;
static unsigned int g_n;

/* ---- Requests captured from the real client -------------------------- */

/*
 * slowpath_nl.c sends through mnl_socket_sendto(); this definition in the
 * test executable takes precedence over libmnl's, so the exact bytes the
 * client builds can be kept as a mutation corpus while they are sent.
 */
static struct {
	int on;
	unsigned int n;
	size_t len[FZ_CAPTURE_MAX];
	uint8_t *msg[FZ_CAPTURE_MAX];
} g_cap;

ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *buf, size_t len)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	const struct nlmsghdr *nlh = buf;

	if (g_cap.on && g_cap.n < FZ_CAPTURE_MAX && nlh->nlmsg_type >= NLMSG_MIN_TYPE &&
	    nlh->nlmsg_type != GENL_ID_CTRL) {
		g_cap.msg[g_cap.n] = malloc(len);
		if (g_cap.msg[g_cap.n]) {
			memcpy(g_cap.msg[g_cap.n], buf, len);
			g_cap.len[g_cap.n++] = len;
		}
	}
	return sendto(mnl_socket_get_fd(nl), buf, len, 0, (struct sockaddr *)&to, sizeof(to));
}

/* ---- Raw socket with a receive timeout -------------------------------- */

struct fz_sock {
	int fd;
	uint32_t seq;
	uint16_t family;
	char err[256];
	uint8_t *rbuf;
};

static int fz_open(struct fz_sock *s, uint16_t family)
{
	struct timeval tv = {.tv_sec = FZ_RECV_TIMEOUT_S};
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int one = 1, rcvbuf = 4 << 20;

	memset(s, 0, sizeof(*s));
	s->family = family;
	s->seq = 1;
	s->rbuf = malloc(FZ_RBUF);
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0 || !s->rbuf || bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

static void fz_close(struct fz_sock *s)
{
	if (s->fd > 0)
		close(s->fd);
	free(s->rbuf);
	s->rbuf = NULL;
	s->fd = -1;
}

static int fz_send(struct fz_sock *s, const void *buf, size_t len)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};

	if (sendto(s->fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

static void fz_extack(struct fz_sock *s, const struct nlmsghdr *nlh, int err)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e), plen = mnl_nlmsg_get_payload_len(nlh);
	const struct nlattr *attr;
	const void *tlvs;

	snprintf(s->err, sizeof(s->err), "%s", strerror(-err));
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if (off >= plen)
		return;
	tlvs = (const char *)e + off;
	mnl_attr_for_each_payload(tlvs, plen - off)
	{
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    !mnl_attr_validate(attr, MNL_TYPE_NUL_STRING))
			snprintf(s->err, sizeof(s->err), "%s (%s)", mnl_attr_get_str(attr),
				 strerror(-err));
	}
}

typedef int (*fz_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Read until the answer that ends request seq: its ACK or error (returned as
 * 0 / -errno) or the end of its dump. Data messages of seq go to cb. Anything
 * else is stale and skipped. FZ_TIMEOUT if nothing ends it in time.
 */
static int fz_wait(struct fz_sock *s, uint32_t seq, fz_cb cb, void *data)
{
	for (;;) {
		ssize_t got = recv(s->fd, s->rbuf, FZ_RBUF, 0);
		int n = (int)got;

		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? FZ_TIMEOUT : -errno;
		for (struct nlmsghdr *m = (struct nlmsghdr *)s->rbuf; mnl_nlmsg_ok(m, n);
		     m = mnl_nlmsg_next(m, &n)) {
			if (m->nlmsg_seq != seq)
				continue;
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);

				s->err[0] = '\0';
				if (e->error)
					fz_extack(s, m, e->error);
				return e->error;
			}
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb && cb(m, data) < 0)
				return -EPROTO;
		}
	}
}

/* A well-formed request: the family's header; ACK asked for unless a dump. */
static struct nlmsghdr *fz_msg(void *buf, size_t size, uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	memset(buf, 0, size); /* libmnl leaves attribute padding as it finds it */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MAGLEV_GENL_VERSION;
	return nlh;
}

static int fz_request(struct fz_sock *s, struct nlmsghdr *nlh, fz_cb cb, void *data)
{
	int err;

	nlh->nlmsg_seq = ++s->seq;
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	err = fz_send(s, nlh, nlh->nlmsg_len);
	return err ? err : fz_wait(s, s->seq, cb, data);
}

/* ---- Snapshots of everything a client can read back -------------------- */

struct fz_vip {
	struct maglev_vip_key key;
	uint8_t encap;
	uint16_t gue_port;
	uint8_t has_table;
	uint64_t gen;
	uint32_t size;
	uint64_t packets, bytes, drops;
};

struct fz_be {
	uint32_t idx;
	uint8_t family;
	uint32_t addr[4];
};

struct fz_snap {
	uint64_t k0, k1;
	uint32_t src4, src6[4];
	uint8_t src4_plen, src6_plen;
	int nvips, nbes;
	struct fz_vip vips[FZ_MAX_VIPS];
	struct fz_be bes[FZ_MAX_BES];
	int look_err[FZ_PROBES];
	struct slowpath_lookup look[FZ_PROBES];
};

struct fz_attrs {
	const struct nlattr *tb[MAGLEV_A_MAX + 1];
};

static int fz_attr_cb(const struct nlattr *attr, void *data)
{
	struct fz_attrs *a = data;
	int type = mnl_attr_get_type(attr);

	if (type > 0 && type <= MAGLEV_A_MAX)
		a->tb[type] = attr;
	return MNL_CB_OK;
}

static void fz_parse(const struct nlmsghdr *nlh, struct fz_attrs *a)
{
	memset(a, 0, sizeof(*a));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), fz_attr_cb, a);
}

static uint64_t fz_u64(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 8 ? mnl_attr_get_u64(a) : 0;
}

static uint32_t fz_u32(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 4 ? mnl_attr_get_u32(a) : 0;
}

static uint16_t fz_u16(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 2 ? mnl_attr_get_u16(a) : 0;
}

static uint8_t fz_u8(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 1 ? mnl_attr_get_u8(a) : 0;
}

static void fz_addr(const struct nlattr *a, void *out, size_t max)
{
	size_t len = a ? mnl_attr_get_payload_len(a) : 0;

	memcpy(out, mnl_attr_get_payload(a), len < max ? len : max);
}

static int fz_config_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fz_snap *s = data;
	struct fz_attrs a;

	fz_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_SEED_K0] || !a.tb[MAGLEV_A_SEED_K1])
		return -EPROTO;
	s->k0 = fz_u64(a.tb[MAGLEV_A_SEED_K0]);
	s->k1 = fz_u64(a.tb[MAGLEV_A_SEED_K1]);
	if (a.tb[MAGLEV_A_SRC4])
		fz_addr(a.tb[MAGLEV_A_SRC4], &s->src4, 4);
	if (a.tb[MAGLEV_A_SRC6])
		fz_addr(a.tb[MAGLEV_A_SRC6], s->src6, 16);
	s->src4_plen = fz_u8(a.tb[MAGLEV_A_SRC4_PLEN]);
	s->src6_plen = fz_u8(a.tb[MAGLEV_A_SRC6_PLEN]);
	return 0;
}

static int fz_vip_parse(const struct nlmsghdr *nlh, struct fz_vip *v)
{
	struct fz_attrs a;

	fz_parse(nlh, &a);
	memset(v, 0, sizeof(*v));
	if (!a.tb[MAGLEV_A_FAMILY] || !a.tb[MAGLEV_A_ADDR] || !a.tb[MAGLEV_A_PROTO] ||
	    !a.tb[MAGLEV_A_ENCAP])
		return -EPROTO;
	v->key.family = fz_u8(a.tb[MAGLEV_A_FAMILY]);
	fz_addr(a.tb[MAGLEV_A_ADDR], v->key.addr, 16);
	v->key.port = fz_u16(a.tb[MAGLEV_A_PORT]);
	v->key.proto = fz_u8(a.tb[MAGLEV_A_PROTO]);
	v->encap = fz_u8(a.tb[MAGLEV_A_ENCAP]);
	v->gue_port = fz_u16(a.tb[MAGLEV_A_GUE_PORT]);
	v->has_table = a.tb[MAGLEV_A_TABLE_GEN] && a.tb[MAGLEV_A_TABLE_SIZE];
	v->gen = fz_u64(a.tb[MAGLEV_A_TABLE_GEN]);
	v->size = fz_u32(a.tb[MAGLEV_A_TABLE_SIZE]);
	v->packets = fz_u64(a.tb[MAGLEV_A_PACKETS]);
	v->bytes = fz_u64(a.tb[MAGLEV_A_BYTES]);
	v->drops = fz_u64(a.tb[MAGLEV_A_DROPS]);
	return 0;
}

static int fz_vips_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fz_snap *s = data;
	struct fz_vip v;

	if (fz_vip_parse(nlh, &v))
		return -EPROTO;
	if (s->nvips < FZ_MAX_VIPS)
		s->vips[s->nvips] = v;
	s->nvips++;
	return 0;
}

static int fz_bes_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fz_snap *s = data;
	struct fz_attrs a;
	struct fz_be b = {};

	fz_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_BACKEND_IDX] || !a.tb[MAGLEV_A_FAMILY] || !a.tb[MAGLEV_A_ADDR])
		return -EPROTO;
	b.idx = fz_u32(a.tb[MAGLEV_A_BACKEND_IDX]);
	b.family = fz_u8(a.tb[MAGLEV_A_FAMILY]);
	fz_addr(a.tb[MAGLEV_A_ADDR], b.addr, 16);
	if (s->nbes < FZ_MAX_BES)
		s->bes[s->nbes] = b;
	s->nbes++;
	return 0;
}

static int fz_lookup_cb(const struct nlmsghdr *nlh, void *data)
{
	struct slowpath_lookup *r = data;
	struct fz_attrs a;

	fz_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_BACKEND_IDX] || !a.tb[MAGLEV_A_SLOT] || !a.tb[MAGLEV_A_TABLE_GEN])
		return -EPROTO;
	r->backend_idx = fz_u32(a.tb[MAGLEV_A_BACKEND_IDX]);
	r->slot = fz_u32(a.tb[MAGLEV_A_SLOT]);
	r->table_gen = fz_u64(a.tb[MAGLEV_A_TABLE_GEN]);
	return 0;
}

static void fz_put_key(struct nlmsghdr *nlh, const struct maglev_vip_key *k)
{
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, k->family);
	mnl_attr_put(nlh, MAGLEV_A_ADDR, k->family == MAGLEV_AF_INET ? 4 : 16, k->addr);
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, k->port);
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, k->proto);
}

static int fz_lookup(struct fz_sock *s, const struct maglev_flow_key *f,
		     struct slowpath_lookup *out)
{
	uint8_t buf[FZ_SMALL];
	struct nlmsghdr *nlh = fz_msg(buf, sizeof(buf), s->family, MAGLEV_CMD_LOOKUP, 0);
	int alen = f->family == MAGLEV_AF_INET ? 4 : 16;

	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, f->family);
	mnl_attr_put(nlh, MAGLEV_A_SADDR, alen, f->src);
	mnl_attr_put(nlh, MAGLEV_A_ADDR, alen, f->dst);
	mnl_attr_put_u16(nlh, MAGLEV_A_SPORT, f->sport);
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, f->dport);
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, f->proto);
	memset(out, 0, sizeof(*out));
	return fz_request(s, nlh, fz_lookup_cb, out);
}

static int fz_vip_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct fz_vip *)a)->key, &((const struct fz_vip *)b)->key,
		      sizeof(struct maglev_vip_key));
}

/* ---- The known-good baseline ------------------------------------------ */

#define FZ_NBASE_VIPS 3
#define FZ_NBASE_BES  4

static const struct {
	int family;
	const char *addr;
	uint16_t port;
	uint8_t proto;
	uint8_t encap;
	uint16_t gue_port;
	uint32_t size; /* 0: no table */
	uint64_t gen;
} fz_base_vips[FZ_NBASE_VIPS] = {
	{MAGLEV_AF_INET, "198.51.100.10", 53, IPPROTO_UDP, MAGLEV_ENCAP_IPIP, 0, 13, 7},
	{MAGLEV_AF_INET6, "2001:db8:100::10", 0, IPPROTO_TCP, MAGLEV_ENCAP_GUE, 6080, 17, 9},
	{MAGLEV_AF_INET, "198.51.100.11", 80, IPPROTO_TCP, MAGLEV_ENCAP_IPIP, 0, 0, 0},
};

static const struct {
	uint32_t idx;
	int family;
	const char *addr;
} fz_base_bes[FZ_NBASE_BES] = {
	{1, MAGLEV_AF_INET, "203.0.113.1"},
	{2, MAGLEV_AF_INET, "203.0.113.2"},
	{3, MAGLEV_AF_INET6, "2001:db8:2::3"},
	{MAGLEV_GENL_BACKEND_MAX, MAGLEV_AF_INET, "203.0.113.255"},
};

static struct maglev_vip_key fz_key(int family, const char *addr, uint16_t port, uint8_t proto)
{
	struct maglev_vip_key k = {.family = family, .proto = proto, .port = htons(port)};

	inet_pton(family == MAGLEV_AF_INET ? AF_INET : AF_INET6, addr, k.addr);
	return k;
}

static struct maglev_vip_key fz_base_key(int i)
{
	return fz_key(fz_base_vips[i].family, fz_base_vips[i].addr, fz_base_vips[i].port,
		      fz_base_vips[i].proto);
}

/* A client flow toward a VIP (any port for an all-ports VIP). */
static struct maglev_flow_key fz_flow(const struct maglev_vip_key *k, uint64_t *rs)
{
	struct maglev_flow_key f = {.family = k->family, .proto = k->proto};

	memcpy(f.dst, k->addr, sizeof(f.dst));
	if (f.family == MAGLEV_AF_INET) {
		f.src[0] = htonl(0xc6336480 | (kmod_rand(rs) & 0x7f)); /* 198.51.100.128/25 */
	} else {
		f.src[0] = htonl(0x20010db8);
		f.src[1] = htonl(0x000c0000);
		f.src[2] = (uint32_t)kmod_rand(rs);
		f.src[3] = (uint32_t)kmod_rand(rs);
	}
	f.sport = (uint16_t)kmod_rand(rs);
	f.dport = k->port ? k->port : (uint16_t)kmod_rand(rs);
	return f;
}

/*
 * One flow per table slot: random flows toward the VIP until each slot of a
 * table of size (<= FZ_STAGE_MAX_SIZE) has one, under the given seed.
 */
static int fz_slot_flows(const struct maglev_seed *seed, const struct maglev_vip_key *k,
			 uint32_t size, uint64_t *rs, struct maglev_flow_key *flows)
{
	uint32_t ident[FZ_STAGE_MAX_SIZE], left = size, slot;
	uint8_t have[FZ_STAGE_MAX_SIZE] = {};
	int tries;

	/* The reference pick over the identity table is the slot. */
	for (slot = 0; slot < size; slot++)
		ident[slot] = slot;
	for (tries = 0; left && tries < 100000; tries++) {
		struct maglev_flow_key f = fz_flow(k, rs);

		slot = kmod_expected_pick(seed, &f, ident, size);
		if (!have[slot]) {
			have[slot] = 1;
			flows[slot] = f;
			left--;
		}
	}
	return left ? -1 : 0;
}

struct fz_base {
	struct maglev_seed seed;
	uint32_t tables[FZ_NBASE_VIPS][FZ_STAGE_MAX_SIZE];
	struct maglev_flow_key slot_flows[FZ_NBASE_VIPS][FZ_STAGE_MAX_SIZE];
	struct maglev_flow_key probes[FZ_PROBES];
};

/* The baseline, through the real client library. */
static int fz_base_apply(struct slowpath_nl *nl, const struct fz_base *b)
{
	struct slowpath_config cfg = {.seed = b->seed, .src6_plen = 112};
	int i, err;

	inet_pton(AF_INET, "192.0.2.1", &cfg.src4);
	inet_pton(AF_INET6, "2001:db8:5::", cfg.src6);
	err = slowpath_nl_config_set(nl, &cfg);
	for (i = 0; !err && i < FZ_NBASE_BES; i++) {
		struct maglev_backend be = {.family = fz_base_bes[i].family};

		inet_pton(be.family == MAGLEV_AF_INET ? AF_INET : AF_INET6, fz_base_bes[i].addr,
			  be.addr);
		err = slowpath_nl_backend_set(nl, fz_base_bes[i].idx, &be);
	}
	for (i = 0; !err && i < FZ_NBASE_VIPS; i++) {
		struct maglev_vip_key k = fz_base_key(i);
		struct maglev_vip_info info = {.encap = fz_base_vips[i].encap,
					       .gue_port = htons(fz_base_vips[i].gue_port)};

		err = slowpath_nl_vip_set(nl, &k, &info);
		if (!err && fz_base_vips[i].size)
			err = slowpath_nl_table_push(nl, &k, fz_base_vips[i].gen, b->tables[i],
						     fz_base_vips[i].size);
	}
	return err;
}

static int fz_snapshot(struct fz_sock *s, const struct fz_base *b, struct fz_snap *snap)
{
	uint8_t buf[FZ_SMALL];
	int err, i;

	memset(snap, 0, sizeof(*snap));
	err = fz_request(s, fz_msg(buf, sizeof(buf), s->family, MAGLEV_CMD_CONFIG_GET, 0),
			 fz_config_cb, snap);
	if (!err)
		err = fz_request(
			s, fz_msg(buf, sizeof(buf), s->family, MAGLEV_CMD_VIP_GET, NLM_F_DUMP),
			fz_vips_cb, snap);
	if (!err)
		err = fz_request(
			s, fz_msg(buf, sizeof(buf), s->family, MAGLEV_CMD_BACKEND_GET, NLM_F_DUMP),
			fz_bes_cb, snap);
	if (err)
		return err;
	qsort(snap->vips, snap->nvips < FZ_MAX_VIPS ? snap->nvips : FZ_MAX_VIPS,
	      sizeof(snap->vips[0]), fz_vip_cmp);
	for (i = 0; i < FZ_PROBES; i++) {
		snap->look_err[i] = fz_lookup(s, &b->probes[i], &snap->look[i]);
		if (snap->look_err[i] > 0)
			return snap->look_err[i];
	}
	return 0;
}

static void fz_snap_diff(const struct fz_snap *a, const struct fz_snap *b)
{
	int i;

	if (a->k0 != b->k0 || a->k1 != b->k1 || a->src4 != b->src4 ||
	    memcmp(a->src6, b->src6, 16) || a->src4_plen != b->src4_plen ||
	    a->src6_plen != b->src6_plen)
		fprintf(stderr, "#   configuration differs (seed %llx/%llx -> %llx/%llx)\n",
			(unsigned long long)a->k0, (unsigned long long)a->k1,
			(unsigned long long)b->k0, (unsigned long long)b->k1);
	if (a->nvips != b->nvips || memcmp(a->vips, b->vips, sizeof(a->vips)))
		fprintf(stderr, "#   VIPs differ: %d -> %d\n", a->nvips, b->nvips);
	if (a->nbes != b->nbes || memcmp(a->bes, b->bes, sizeof(a->bes)))
		fprintf(stderr, "#   backends differ: %d -> %d\n", a->nbes, b->nbes);
	for (i = 0; i < FZ_PROBES; i++)
		if (a->look_err[i] != b->look_err[i] ||
		    memcmp(&a->look[i], &b->look[i], sizeof(a->look[i])))
			fprintf(stderr, "#   lookup %d differs: %d/%u -> %d/%u\n", i,
				a->look_err[i], a->look[i].backend_idx, b->look_err[i],
				b->look[i].backend_idx);
}

/* Delete every VIP and backend (raw requests), then apply the baseline. */
static int fz_reset(struct fz_sock *s, struct slowpath_nl *nl, const struct fz_base *b)
{
	static struct fz_snap cur;
	uint8_t buf[FZ_SMALL];
	int err, i;

	err = fz_snapshot(s, b, &cur);
	if (err)
		return err;
	if (cur.nvips > FZ_MAX_VIPS || cur.nbes > FZ_MAX_BES)
		return -E2BIG; /* bounded by the resync rule; never expected */
	for (i = 0; i < cur.nvips; i++) {
		struct nlmsghdr *nlh = fz_msg(buf, sizeof(buf), s->family, MAGLEV_CMD_VIP_DEL, 0);

		fz_put_key(nlh, &cur.vips[i].key);
		err = fz_request(s, nlh, NULL, NULL);
		if (err)
			return err;
	}
	for (i = 0; i < cur.nbes; i++) {
		struct nlmsghdr *nlh =
			fz_msg(buf, sizeof(buf), s->family, MAGLEV_CMD_BACKEND_DEL, 0);

		mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, cur.bes[i].idx);
		err = fz_request(s, nlh, NULL, NULL);
		if (err)
			return err;
	}
	return fz_base_apply(nl, b);
}

/* Every slot of every baseline table looks up as the userspace pick. */
static int fz_check_base_lookups(struct fz_sock *s, const struct fz_base *b)
{
	int v, bad = 0;
	uint32_t slot;

	for (v = 0; v < FZ_NBASE_VIPS; v++) {
		for (slot = 0; slot < fz_base_vips[v].size; slot++) {
			const struct maglev_flow_key *f = &b->slot_flows[v][slot];
			struct slowpath_lookup got;
			uint32_t want =
				kmod_expected_pick(&b->seed, f, b->tables[v], fz_base_vips[v].size);
			int err = fz_lookup(s, f, &got);

			if (err || got.backend_idx != want || got.slot != slot ||
			    got.table_gen != fz_base_vips[v].gen) {
				if (bad++ < 5)
					fprintf(stderr,
						"# lookup VIP %d slot %u: err %d, backend %u slot "
						"%u gen %llu; want backend %u gen %llu\n",
						v, slot, err, got.backend_idx, got.slot,
						(unsigned long long)got.table_gen, want,
						(unsigned long long)fz_base_vips[v].gen);
			}
		}
	}
	return bad;
}

/* ---- Kernel log -------------------------------------------------------- */

static int fz_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Records since fd was last read that show a kernel bug; each is printed
 * with the records after it (the trace), at most 100000 records are read.
 */
static int fz_kmsg_bad(int fd)
{
	static const char *const bad[] = {
		"BUG:",	 "WARNING:",   "Oops",	     "general protection",  "KASAN",
		"UBSAN", "kernel BUG", "refcount_t", "list_del corruption", "Call Trace"};
	int found = 0, records = 0, context = 0;
	char rec[4096];
	ssize_t n;
	size_t i;

	while (records++ < 100000 &&
	       ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE))) {
		if (n < 0)
			continue;
		rec[n] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(rec, bad[i])) {
				found++;
				context = 60;
				break;
			}
		}
		if (context && context--)
			fprintf(stderr, "# kernel: %s", rec);
	}
	return found;
}

/* ---- Random requests ---------------------------------------------------- */

static const char *const fz_cmd_names[] = {
	[MAGLEV_CMD_UNSPEC] = "UNSPEC",		  [MAGLEV_CMD_CONFIG_SET] = "CONFIG_SET",
	[MAGLEV_CMD_CONFIG_GET] = "CONFIG_GET",	  [MAGLEV_CMD_VIP_SET] = "VIP_SET",
	[MAGLEV_CMD_VIP_DEL] = "VIP_DEL",	  [MAGLEV_CMD_VIP_GET] = "VIP_GET",
	[MAGLEV_CMD_BACKEND_SET] = "BACKEND_SET", [MAGLEV_CMD_BACKEND_DEL] = "BACKEND_DEL",
	[MAGLEV_CMD_BACKEND_GET] = "BACKEND_GET", [MAGLEV_CMD_TABLE_BEGIN] = "TABLE_BEGIN",
	[MAGLEV_CMD_TABLE_CHUNK] = "TABLE_CHUNK", [MAGLEV_CMD_TABLE_COMMIT] = "TABLE_COMMIT",
	[MAGLEV_CMD_LOOKUP] = "LOOKUP",		  [MAGLEV_CMD_STATS_GET] = "STATS_GET",
};

static int fz_cmd_changes(unsigned int cmd)
{
	switch (cmd) {
	case MAGLEV_CMD_CONFIG_SET:
	case MAGLEV_CMD_VIP_SET:
	case MAGLEV_CMD_VIP_DEL:
	case MAGLEV_CMD_BACKEND_SET:
	case MAGLEV_CMD_BACKEND_DEL:
	case MAGLEV_CMD_TABLE_BEGIN:
	case MAGLEV_CMD_TABLE_CHUNK:
	case MAGLEV_CMD_TABLE_COMMIT:
		return 1;
	}
	return 0;
}

/* Attributes a command reads: required ones first. */
static const struct {
	uint8_t nreq;
	uint8_t attrs[8];
} fz_cmd_attrs[] = {
	[MAGLEV_CMD_CONFIG_SET] = {2,
				   {MAGLEV_A_SEED_K0, MAGLEV_A_SEED_K1, MAGLEV_A_SRC4,
				    MAGLEV_A_SRC6, MAGLEV_A_SRC4_PLEN, MAGLEV_A_SRC6_PLEN}},
	[MAGLEV_CMD_VIP_SET] = {4,
				{MAGLEV_A_FAMILY, MAGLEV_A_ADDR, MAGLEV_A_PROTO, MAGLEV_A_ENCAP,
				 MAGLEV_A_PORT, MAGLEV_A_GUE_PORT}},
	[MAGLEV_CMD_VIP_DEL] = {3, {MAGLEV_A_FAMILY, MAGLEV_A_ADDR, MAGLEV_A_PROTO, MAGLEV_A_PORT}},
	[MAGLEV_CMD_VIP_GET] = {3, {MAGLEV_A_FAMILY, MAGLEV_A_ADDR, MAGLEV_A_PROTO, MAGLEV_A_PORT}},
	[MAGLEV_CMD_BACKEND_SET] = {3, {MAGLEV_A_BACKEND_IDX, MAGLEV_A_FAMILY, MAGLEV_A_ADDR}},
	[MAGLEV_CMD_BACKEND_DEL] = {1, {MAGLEV_A_BACKEND_IDX}},
	[MAGLEV_CMD_BACKEND_GET] = {1, {MAGLEV_A_BACKEND_IDX}},
	[MAGLEV_CMD_TABLE_BEGIN] = {5,
				    {MAGLEV_A_FAMILY, MAGLEV_A_ADDR, MAGLEV_A_PROTO, MAGLEV_A_GEN,
				     MAGLEV_A_TABLE_SIZE, MAGLEV_A_PORT}},
	[MAGLEV_CMD_TABLE_CHUNK] = {6,
				    {MAGLEV_A_FAMILY, MAGLEV_A_ADDR, MAGLEV_A_PROTO, MAGLEV_A_GEN,
				     MAGLEV_A_OFFSET, MAGLEV_A_ENTRIES, MAGLEV_A_PORT}},
	[MAGLEV_CMD_TABLE_COMMIT] = {4,
				     {MAGLEV_A_FAMILY, MAGLEV_A_ADDR, MAGLEV_A_PROTO, MAGLEV_A_GEN,
				      MAGLEV_A_PORT}},
	[MAGLEV_CMD_LOOKUP] = {6,
			       {MAGLEV_A_FAMILY, MAGLEV_A_SADDR, MAGLEV_A_ADDR, MAGLEV_A_SPORT,
				MAGLEV_A_PORT, MAGLEV_A_PROTO}},
};

/* Natural payload length of each attribute type (0: variable). */
static const uint8_t fz_attr_len[MAGLEV_A_MAX + 1] = {
	[MAGLEV_A_FAMILY] = 1,	    [MAGLEV_A_ADDR] = 0,    [MAGLEV_A_PORT] = 2,
	[MAGLEV_A_PROTO] = 1,	    [MAGLEV_A_ENCAP] = 1,   [MAGLEV_A_GUE_PORT] = 2,
	[MAGLEV_A_BACKEND_IDX] = 4, [MAGLEV_A_GEN] = 8,	    [MAGLEV_A_TABLE_SIZE] = 4,
	[MAGLEV_A_OFFSET] = 4,	    [MAGLEV_A_ENTRIES] = 0, [MAGLEV_A_SEED_K0] = 8,
	[MAGLEV_A_SEED_K1] = 8,	    [MAGLEV_A_SRC4] = 4,    [MAGLEV_A_SRC6] = 16,
	[MAGLEV_A_SADDR] = 0,	    [MAGLEV_A_SPORT] = 2,   [MAGLEV_A_TABLE_GEN] = 8,
	[MAGLEV_A_SLOT] = 4,	    [MAGLEV_A_PACKETS] = 8, [MAGLEV_A_BYTES] = 8,
	[MAGLEV_A_STATS] = 0,	    [MAGLEV_A_PAD] = 0,	    [MAGLEV_A_SRC4_PLEN] = 1,
	[MAGLEV_A_SRC6_PLEN] = 1,   [MAGLEV_A_DROPS] = 8,
};

struct fz_gen {
	uint64_t rs;
	struct maglev_vip_key key; /* the VIP this request is about */
	int valid;		   /* plausible values are also valid ones */
};

static uint64_t fz_r(struct fz_gen *g, uint64_t n)
{
	return n ? kmod_rand(&g->rs) % n : 0;
}

static int fz_pct(struct fz_gen *g, int pct)
{
	return (int)fz_r(g, 100) < pct;
}

static uint64_t fz_pick64(struct fz_gen *g, const uint64_t *v, size_t n)
{
	return v[fz_r(g, n)];
}

#define FZ_PICK(g, ...)                               \
	fz_pick64(g, (const uint64_t[]){__VA_ARGS__}, \
		  sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

static void fz_rand_bytes(struct fz_gen *g, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)kmod_rand(&g->rs);
}

/* The VIP a request names: mostly a baseline VIP, or one that does not exist. */
static void fz_pick_key(struct fz_gen *g)
{
	static const char *const others4[] = {"198.51.100.99", "203.0.113.77"};
	static const char *const others6[] = {"2001:db8:100::99", "2001:db8:ffff::1"};
	uint64_t r = fz_r(g, 10);

	if (r < 7) {
		g->key = fz_base_key((int)fz_r(g, FZ_NBASE_VIPS));
	} else if (r < 9) {
		int v6 = (int)fz_r(g, 2);

		g->key = fz_key(v6 ? MAGLEV_AF_INET6 : MAGLEV_AF_INET,
				v6 ? others6[fz_r(g, 2)] : others4[fz_r(g, 2)],
				(uint16_t)FZ_PICK(g, 0, 53, 80, 443, 65535),
				(uint8_t)FZ_PICK(g, IPPROTO_TCP, IPPROTO_UDP));
	} else {
		g->key.family = (uint8_t)FZ_PICK(g, MAGLEV_AF_INET, MAGLEV_AF_INET6);
		fz_rand_bytes(g, (uint8_t *)g->key.addr, sizeof(g->key.addr));
		if (g->key.family == MAGLEV_AF_INET)
			memset(&g->key.addr[1], 0, 12);
		g->key.port = (uint16_t)kmod_rand(&g->rs);
		g->key.proto = (uint8_t)FZ_PICK(g, IPPROTO_TCP, IPPROTO_UDP);
	}
}

/* A plausible value: what a client would send, aimed at the current key. */
static size_t fz_plausible(struct fz_gen *g, int type, uint8_t *p)
{
	int alen = g->key.family == MAGLEV_AF_INET ? 4 : 16;
	uint64_t v;
	size_t n, i;

	switch (type) {
	case MAGLEV_A_FAMILY:
		p[0] = g->valid || fz_pct(g, 90)
			       ? g->key.family
			       : (uint8_t)FZ_PICK(g, 0, 1, 3, MAGLEV_AF_INET, MAGLEV_AF_INET6, 255);
		return 1;
	case MAGLEV_A_ADDR:
		memcpy(p, g->key.addr, 16);
		return g->valid || fz_pct(g, 90) ? alen : (size_t)(20 - alen);
	case MAGLEV_A_SADDR:
		fz_rand_bytes(g, p, 16);
		return g->valid || fz_pct(g, 90) ? alen : (size_t)(20 - alen);
	case MAGLEV_A_PORT:
		v = g->valid || fz_pct(g, 80) ? g->key.port : (uint16_t)kmod_rand(&g->rs);
		memcpy(p, &(uint16_t){(uint16_t)v}, 2);
		return 2;
	case MAGLEV_A_PROTO:
		p[0] = g->valid || fz_pct(g, 85) ? g->key.proto
						 : (uint8_t)FZ_PICK(g, 0, 1, 6, 17, 58, 255);
		return 1;
	case MAGLEV_A_ENCAP:
		p[0] = g->valid ? (uint8_t)fz_r(g, 2) : (uint8_t)FZ_PICK(g, 0, 0, 1, 1, 2, 255);
		return 1;
	case MAGLEV_A_GUE_PORT:
		v = g->valid ? FZ_PICK(g, 6080, 1, 65535) : FZ_PICK(g, 6080, 6080, 1, 0, 65535);
		memcpy(p, &(uint16_t){htons((uint16_t)v)}, 2);
		return 2;
	case MAGLEV_A_BACKEND_IDX:
		v = FZ_PICK(g, 1, 2, 3, 4, 5, MAGLEV_GENL_BACKEND_MAX, 1 + fz_r(g, 65535));
		memcpy(p, &(uint32_t){(uint32_t)v}, 4);
		return 4;
	case MAGLEV_A_GEN:
	case MAGLEV_A_TABLE_GEN:
		v = FZ_PICK(g, 7, 9, 1, 1, 2, kmod_rand(&g->rs));
		memcpy(p, &v, 8);
		return 8;
	case MAGLEV_A_TABLE_SIZE:
		/* Small ones often, so that random chunks and commits complete some. */
		v = fz_pct(g, 97) ? FZ_PICK(g, 1, 1, 2, 13, 17, 1 + fz_r(g, 64))
				  : MAGLEV_GENL_TABLE_MAX; /* 4 MiB staged */
		memcpy(p, &(uint32_t){(uint32_t)v}, 4);
		return 4;
	case MAGLEV_A_OFFSET:
	case MAGLEV_A_SLOT:
		v = FZ_PICK(g, 0, 0, 0, 1, 8, 12, fz_r(g, 32));
		memcpy(p, &(uint32_t){(uint32_t)v}, 4);
		return 4;
	case MAGLEV_A_ENTRIES:
		n = fz_pct(g, 98) ? FZ_PICK(g, 1, 1, 2, 1 + fz_r(g, 17)) : MAGLEV_GENL_CHUNK_MAX;
		for (i = 0; i < n; i++) {
			uint32_t e = (uint32_t)FZ_PICK(g, 0, 1, 2, 3, 5, MAGLEV_GENL_BACKEND_MAX);

			memcpy(p + 4 * i, &e, 4);
		}
		return 4 * n;
	case MAGLEV_A_SEED_K0:
	case MAGLEV_A_SEED_K1:
	case MAGLEV_A_PACKETS:
	case MAGLEV_A_BYTES:
	case MAGLEV_A_DROPS:
		v = kmod_rand(&g->rs);
		memcpy(p, &v, 8);
		return 8;
	case MAGLEV_A_SRC4:
		memcpy(p, &(uint32_t){htonl((uint32_t)FZ_PICK(g, 0, 0xc0000201, 0xcb007100))}, 4);
		return 4;
	case MAGLEV_A_SRC6:
		memset(p, 0, 16);
		if (fz_pct(g, 80)) {
			p[0] = 0x20;
			p[1] = 0x01;
			p[2] = 0x0d;
			p[3] = 0xb8;
			p[15] = (uint8_t)fz_r(g, 4);
		}
		return 16;
	case MAGLEV_A_SPORT:
		memcpy(p, &(uint16_t){(uint16_t)kmod_rand(&g->rs)}, 2);
		return 2;
	case MAGLEV_A_SRC4_PLEN:
		p[0] = (uint8_t)FZ_PICK(g, 1, 24, 26, 32);
		return 1;
	case MAGLEV_A_SRC6_PLEN:
		p[0] = (uint8_t)FZ_PICK(g, 1, 64, 100, 128);
		return 1;
	default: /* STATS, PAD, unknown types */
		n = fz_r(g, 12);
		fz_rand_bytes(g, p, n);
		return n;
	}
}

/* A boundary value at the natural length: 0, max, max + 1, all ones. */
static size_t fz_boundary(struct fz_gen *g, int type, uint8_t *p)
{
	size_t len = type <= MAGLEV_A_MAX ? fz_attr_len[type] : 0;
	uint64_t v;

	switch (type) {
	case MAGLEV_A_BACKEND_IDX:
		v = FZ_PICK(g, 0, MAGLEV_GENL_BACKEND_MAX, MAGLEV_GENL_BACKEND_MAX + 1, 0xffffffff);
		break;
	case MAGLEV_A_TABLE_SIZE:
		v = FZ_PICK(g, 0, MAGLEV_GENL_TABLE_MAX + 1, 0xffffffff, 0x80000000);
		break;
	case MAGLEV_A_OFFSET:
		v = FZ_PICK(g, MAGLEV_GENL_TABLE_MAX - 1, MAGLEV_GENL_TABLE_MAX, 0xffffffff,
			    MAGLEV_GENL_CHUNK_MAX);
		break;
	case MAGLEV_A_ENTRIES: {
		/* One entry out of range, or a chunk one entry too long. */
		size_t n = fz_pct(g, 50) ? 1 + fz_r(g, 8) : MAGLEV_GENL_CHUNK_MAX + 1, i;
		uint32_t bad = (uint32_t)FZ_PICK(g, MAGLEV_GENL_BACKEND_MAX + 1, 0xffffffff);

		memset(p, 0, 4 * n);
		for (i = 0; i < n; i++)
			p[4 * i] = 1;
		if (n <= 8)
			memcpy(p + 4 * fz_r(g, n), &bad, 4);
		return 4 * n;
	}
	case MAGLEV_A_SRC4_PLEN:
		v = FZ_PICK(g, 0, 33, 255);
		break;
	case MAGLEV_A_SRC6_PLEN:
		v = FZ_PICK(g, 0, 129, 255);
		break;
	case MAGLEV_A_GUE_PORT:
		v = FZ_PICK(g, 0, 0xffff);
		break;
	default:
		v = FZ_PICK(g, 0, UINT64_MAX, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
			    0xffffffff, 0x100000000ULL);
		break;
	}
	if (!len)
		len = FZ_PICK(g, 4, 16);
	memset(p, 0, len);
	memcpy(p, &v, len < 8 ? len : 8); /* little endian: the low bytes */
	return len;
}

/* Random bytes at a random length: empty, short, exact, long. */
static size_t fz_lengthy(struct fz_gen *g, int type, uint8_t *p)
{
	size_t nat = type <= MAGLEV_A_MAX && fz_attr_len[type] ? fz_attr_len[type] : 16;
	size_t len;

	switch (fz_r(g, 5)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = nat > 1 ? 1 + fz_r(g, nat - 1) : 0;
		break;
	case 2:
		len = nat;
		break;
	case 3:
		len = nat + 1 + fz_r(g, 8);
		break;
	default:
		len = fz_r(g, 300);
		break;
	}
	fz_rand_bytes(g, p, len);
	return len;
}

/* Attributes only while they fit, with room left for header mutations. */
#define FZ_ROOM (FZ_BUF - 64)

static void fz_put_nest(struct fz_gen *g, struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr *nest = mnl_attr_nest_start_check(nlh, FZ_ROOM, type);
	int i, n = (int)fz_r(g, 4);
	uint8_t v[16];

	if (!nest)
		return;
	for (i = 0; i < n; i++) {
		size_t len = fz_r(g, 16);

		fz_rand_bytes(g, v, len);
		mnl_attr_put_check(nlh, FZ_ROOM, 1 + (uint16_t)fz_r(g, MAGLEV_A_MAX + 2), len, v);
	}
	mnl_attr_nest_end(nlh, nest);
}

/* One attribute of type t with a value of a randomly chosen class. */
static void fz_put_attr(struct fz_gen *g, struct nlmsghdr *nlh, int type, int plausible)
{
	static uint8_t v[MAGLEV_GENL_CHUNK_MAX * 4 + 8];
	uint64_t r = plausible ? 50 : fz_r(g, 100);
	uint16_t t = (uint16_t)type;
	size_t len;

	if (r < 4) { /* nested, where no attribute of the policy is */
		fz_put_nest(g, nlh, t | (fz_pct(g, 70) ? NLA_F_NESTED : 0));
		return;
	}
	if (r < 6)
		t |= NLA_F_NET_BYTEORDER;
	if (r < 70)
		len = fz_plausible(g, type, v);
	else if (r < 85)
		len = fz_boundary(g, type, v);
	else
		len = fz_lengthy(g, type, v);
	mnl_attr_put_check(nlh, FZ_ROOM, t, len, v);
}

static void fz_shuffle(struct fz_gen *g, int *a, int n)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int j = (int)fz_r(g, i + 1), t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

/*
 * A request for cmd. Four in ten are near-valid: the command's required
 * attributes with valid values, some optional ones, and at most one fault
 * (an attribute missing, or one at a boundary, a random length, nested,
 * unknown, reply-only or duplicated). The others draw every attribute from
 * every class and add random ones of the whole policy and beyond.
 */
static struct nlmsghdr *fz_random_request(struct fz_gen *g, void *buf, uint16_t family, uint8_t cmd)
{
	struct nlmsghdr *nlh = fz_msg(buf, FZ_BUF, family, cmd, 0);
	struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	int types[32], n = 0, i, t, fault = -1;
	unsigned int nattrs = 0, nreq = 0;

	fz_pick_key(g);
	g->valid = fz_pct(g, 40);
	if (cmd < sizeof(fz_cmd_attrs) / sizeof(fz_cmd_attrs[0])) {
		for (; nattrs < 8 && fz_cmd_attrs[cmd].attrs[nattrs]; nattrs++)
			;
		nreq = fz_cmd_attrs[cmd].nreq;
	}
	for (i = 0; i < (int)nattrs; i++)
		if (fz_pct(g, i < (int)nreq ? (g->valid ? 100 : 92) : 50))
			types[n++] = fz_cmd_attrs[cmd].attrs[i];
	if (g->valid && fz_pct(g, 50)) {
		switch (fz_r(g, 4)) {
		case 0: /* one attribute missing */
			if (n)
				types[fz_r(g, n)] = types[n - 1];
			n -= !!n;
			break;
		case 1: /* one attribute of another class */
			fault = (int)fz_r(g, n + 1);
			break;
		case 2: /* one attribute more: any type, known or not */
			types[n++] = (int)FZ_PICK(g, 1 + fz_r(g, MAGLEV_A_MAX), 0, MAGLEV_A_MAX + 1,
						  0x3fff);
			break;
		default: /* a duplicate */
			if (n) {
				types[n] = types[fz_r(g, n)];
				n++;
			}
			break;
		}
	}
	for (t = 1; !g->valid && t <= MAGLEV_A_MAX && n < 28; t++) /* reply-only included */
		if (fz_pct(g, 3))
			types[n++] = t;
	if (!g->valid && fz_pct(g, 5)) /* unknown: UNSPEC, just past the policy, far past it */
		types[n++] = (int)FZ_PICK(g, 0, MAGLEV_A_MAX + 1, MAGLEV_A_MAX + 2, 0x3fff, 1000);
	if (!g->valid && n && n < 30 && fz_pct(g, 10)) { /* a duplicate */
		types[n] = types[fz_r(g, n)];
		n++;
	}
	fz_shuffle(g, types, n);
	for (i = 0; i < n; i++)
		fz_put_attr(g, nlh, types[i], g->valid && i != fault);
	if (g->valid)
		return nlh;
	if (fz_pct(g, 5))
		gh->version = (uint8_t)FZ_PICK(g, 0, 2, 255);
	if (fz_pct(g, 3))
		gh->reserved = (uint16_t)(1 + fz_r(g, 0xffff));
	if ((cmd == MAGLEV_CMD_VIP_GET || cmd == MAGLEV_CMD_BACKEND_GET) && fz_pct(g, 20))
		nlh->nlmsg_flags |= NLM_F_DUMP;
	else if (fz_pct(g, 3))
		nlh->nlmsg_flags |= (uint16_t)FZ_PICK(g, NLM_F_DUMP, NLM_F_ECHO, NLM_F_ATOMIC,
						      NLM_F_REPLACE | NLM_F_CREATE, 0x4000);
	return nlh;
}

/* ---- The fuzz loop and its oracle -------------------------------------- */

struct fz_stats {
	unsigned int sent[FZ_NCMD], acked[FZ_NCMD], rejected[FZ_NCMD], silent[FZ_NCMD];
	unsigned int err_einval, err_erange, err_enoent, err_estale, err_eopnotsupp, err_enodata;
	unsigned int err_other;
	unsigned int checks, rejected_total, reads_total, changes, resyncs;
};

/*
 * The client's other requests, for the corpus: reads, and deletes of objects
 * that do not exist (refused, so the baseline stays).
 */
static void fz_capture_reads(struct slowpath_nl *nl, const struct fz_base *b)
{
	struct maglev_vip_key gone = fz_key(MAGLEV_AF_INET, "198.51.100.99", 80, IPPROTO_TCP);
	struct slowpath_vip_state vs;
	struct slowpath_lookup lk;
	struct slowpath_stats stats;
	struct slowpath_config cfg;
	struct maglev_backend be;

	slowpath_nl_vip_get(nl, &gone, &vs);
	slowpath_nl_vip_del(nl, &gone);
	slowpath_nl_vip_list(nl, &vs, 1);
	slowpath_nl_backend_get(nl, 1, &be);
	slowpath_nl_backend_del(nl, 4);
	slowpath_nl_lookup(nl, &b->probes[0], &lk);
	slowpath_nl_stats(nl, &stats);
	slowpath_nl_config_get(nl, &cfg);
}

/* FNV-1a: each test's PRNG stream from its name and the run's seed. */
static uint64_t fz_name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 0x100000001b3ULL;
	return h;
}

FIXTURE(fz)
{
	struct slowpath_nl *nl;
	struct fz_sock s;
	struct fz_base base;
	struct fz_snap ref, cur, base_snap;
	struct fz_gen g;
	struct fz_stats st;
	unsigned int changes_since_reset;
	struct timespec t0;
	int kmsg;
	uint8_t buf[FZ_BUF];
};

FIXTURE_SETUP(fz)
{
	int v, i;

	memset(&self->st, 0, sizeof(self->st));
	self->kmsg = fz_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, slowpath_nl_open(&self->nl));
	ASSERT_EQ(0, fz_open(&self->s, slowpath_nl_family_id(self->nl)));

	/* Each test its own stream, reproducible from the one seed. */
	self->g.rs = g_seed ^ fz_name_hash(_metadata->name);
	fprintf(stderr, "# MAGLEV_NL_FUZZ_SEED=0x%llx MAGLEV_NL_FUZZ_N=%u\n",
		(unsigned long long)g_seed, g_n);
	self->base.seed.k0 = kmod_rand(&self->g.rs);
	self->base.seed.k1 = kmod_rand(&self->g.rs);
	for (v = 0; v < FZ_NBASE_VIPS; v++) {
		struct maglev_vip_key k = fz_base_key(v);

		for (i = 0; i < (int)fz_base_vips[v].size; i++)
			self->base.tables[v][i] =
				fz_base_bes[kmod_rand(&self->g.rs) % FZ_NBASE_BES].idx;
		if (fz_base_vips[v].size)
			ASSERT_EQ(0, fz_slot_flows(&self->base.seed, &k, fz_base_vips[v].size,
						   &self->g.rs, self->base.slot_flows[v]));
	}
	for (i = 0; i < FZ_PROBES; i++) {
		struct maglev_vip_key k = fz_base_key(i % FZ_NBASE_VIPS);

		self->base.probes[i] = fz_flow(&k, &self->g.rs);
	}
	/* The baseline, capturing the client's requests as a corpus. */
	g_cap.on = 1;
	ASSERT_EQ(0, fz_base_apply(self->nl, &self->base));
	fz_capture_reads(self->nl, &self->base);
	g_cap.on = 0;
	ASSERT_LT(10, g_cap.n);
	ASSERT_EQ(0, fz_snapshot(&self->s, &self->base, &self->base_snap));
	ASSERT_EQ(FZ_NBASE_VIPS, self->base_snap.nvips);
	ASSERT_EQ(FZ_NBASE_BES, self->base_snap.nbes);
	memcpy(&self->ref, &self->base_snap, sizeof(self->ref));
	ASSERT_EQ(0, fz_check_base_lookups(&self->s, &self->base));
	clock_gettime(CLOCK_MONOTONIC, &self->t0);
}

static double fz_elapsed(FIXTURE_DATA(fz) * self)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - self->t0.tv_sec) + (t.tv_nsec - self->t0.tv_nsec) / 1e9;
}

FIXTURE_TEARDOWN(fz)
{
	unsigned int i;

	fz_close(&self->s);
	slowpath_nl_close(self->nl);
	if (self->kmsg >= 0)
		close(self->kmsg);
	for (i = 0; i < g_cap.n; i++)
		free(g_cap.msg[i]);
	g_cap.n = 0;
}

static void fz_count_err(struct fz_stats *st, int err)
{
	switch (err) {
	case -EINVAL:
		st->err_einval++;
		break;
	case -ERANGE:
		st->err_erange++;
		break;
	case -ENOENT:
		st->err_enoent++;
		break;
	case -ESTALE:
		st->err_estale++;
		break;
	case -EOPNOTSUPP:
		st->err_eopnotsupp++;
		break;
	case -ENODATA:
		st->err_enodata++;
		break;
	default:
		st->err_other++;
	}
}

static void fz_hexdump(const uint8_t *p, size_t len)
{
	size_t i;

	fprintf(stderr, "#   %zu bytes:", len);
	for (i = 0; i < len && i < 512; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n#     ", p[i]);
	fprintf(stderr, "%s\n", len > 512 ? " ..." : "");
}

static const char *fz_cmd_name(unsigned int cmd)
{
	return cmd <= MAGLEV_CMD_MAX ? fz_cmd_names[cmd] : "unknown";
}

/* Back to the baseline; the state must then read exactly as at the start. */
static int fz_resync(FIXTURE_DATA(fz) * self)
{
	int err = fz_reset(&self->s, self->nl, &self->base);

	if (!err)
		err = fz_snapshot(&self->s, &self->base, &self->cur);
	if (err) {
		fprintf(stderr, "# reset to the baseline failed: %d %s\n", err, self->s.err);
		return -1;
	}
	if (memcmp(&self->cur, &self->base_snap, sizeof(self->cur))) {
		fprintf(stderr, "# state after a reset differs from the baseline\n");
		fz_snap_diff(&self->base_snap, &self->cur);
		return -1;
	}
	memcpy(&self->ref, &self->cur, sizeof(self->ref));
	self->changes_since_reset = 0;
	self->st.resyncs++;
	return 0;
}

/* Reset when accepted changes piled up or took a baseline table away. */
static int fz_need_resync(FIXTURE_DATA(fz) * self)
{
	const struct fz_snap *c = &self->cur;
	int i, tables = 0;

	if (self->changes_since_reset >= FZ_RESYNC_CHANGES || c->nvips > FZ_RESYNC_OBJECTS ||
	    c->nbes > FZ_RESYNC_OBJECTS)
		return 1;
	for (i = 0; i < FZ_PROBES; i++)
		tables += c->look_err[i] == 0;
	return tables < 2;
}

/*
 * Send one fuzz datagram of len bytes and apply the oracle. Its netlink
 * header is well-formed (an answer is due) when nlmsg_len is at least a
 * header and no more than was sent; the datagram is then cut to nlmsg_len,
 * so no trailing bytes are read as a second message. A datagram without a
 * well-formed header is dropped by the kernel without an answer: a NOOP
 * request sent behind it must still be answered. Then the state is read
 * back: a refused request, a silently dropped one and an accepted read
 * must have changed nothing; after an accepted change the new state is the
 * reference. Returns 0, or -1 with the failure described.
 */
static int fz_one(FIXTURE_DATA(fz) * self, uint8_t *msg, size_t len, unsigned int idx)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)msg;
	int wellformed =
		len >= NLMSG_HDRLEN && nlh->nlmsg_len >= NLMSG_HDRLEN && nlh->nlmsg_len <= len;
	unsigned int cmd = 0;
	char why[sizeof(self->s.err)];
	int err, res;

	if (wellformed)
		len = nlh->nlmsg_len;
	if (len > NLMSG_HDRLEN && (!wellformed || nlh->nlmsg_len > NLMSG_HDRLEN))
		cmd = msg[NLMSG_HDRLEN];
	if (len >= NLMSG_HDRLEN) {
		nlh->nlmsg_seq = ++self->s.seq;
		nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	}
	self->st.sent[cmd]++;
	err = fz_send(&self->s, msg, len);
	if (wellformed) {
		res = err ? err : fz_wait(&self->s, nlh->nlmsg_seq, NULL, NULL);
		if (res > 0) {
			fprintf(stderr, "# message %u (%s): no ACK or error within %d s\n", idx,
				fz_cmd_name(cmd), FZ_RECV_TIMEOUT_S);
			fz_hexdump(msg, len);
			return -1;
		}
	} else {
		uint8_t noop[NLMSG_HDRLEN];
		struct nlmsghdr *n = mnl_nlmsg_put_header(noop);

		n->nlmsg_type = NLMSG_NOOP;
		n->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		n->nlmsg_seq = ++self->s.seq;
		err = fz_send(&self->s, noop, sizeof(noop));
		if (!err)
			err = fz_wait(&self->s, n->nlmsg_seq, NULL, NULL);
		if (err) {
			fprintf(stderr, "# message %u: the NOOP behind it got %d, not an ACK\n",
				idx, err);
			fz_hexdump(msg, len);
			return -1;
		}
		res = FZ_NO_REPLY;
		self->st.silent[cmd]++;
	}
	if (fz_kmsg_bad(self->kmsg)) {
		fprintf(stderr, "# message %u (%s) made the kernel log a bug\n", idx,
			fz_cmd_name(cmd));
		fz_hexdump(msg, len);
		return -1;
	}
	snprintf(why, sizeof(why), "%s", res == FZ_NO_REPLY ? "dropped" : self->s.err);
	if (res == 0) {
		self->st.acked[cmd]++;
	} else if (res < 0) {
		self->st.rejected[cmd]++;
		fz_count_err(&self->st, res);
	}

	err = fz_snapshot(&self->s, &self->base, &self->cur);
	if (err) {
		fprintf(stderr, "# message %u: reading the state back failed: %d %s\n", idx, err,
			self->s.err);
		return -1;
	}
	self->st.checks++;
	if (res == 0 && fz_cmd_changes(cmd)) {
		if (memcmp(&self->ref, &self->cur, sizeof(self->cur))) {
			self->st.changes++;
			self->changes_since_reset++;
		}
		memcpy(&self->ref, &self->cur, sizeof(self->ref));
		return fz_need_resync(self) ? fz_resync(self) : 0;
	}
	if (res == 0)
		self->st.reads_total++;
	else
		self->st.rejected_total++;
	if (memcmp(&self->ref, &self->cur, sizeof(self->cur))) {
		fprintf(stderr, "# message %u (%s, %s: %s) changed the module's state\n", idx,
			fz_cmd_name(cmd), res == 0 ? "accepted" : "refused",
			res == 0 ? "a read" : why);
		fz_snap_diff(&self->ref, &self->cur);
		fz_hexdump(msg, len);
		return -1;
	}
	return 0;
}

static void fz_report(FIXTURE_DATA(fz) * self, const char *what, unsigned int n)
{
	const struct fz_stats *st = &self->st;
	unsigned int c, unknown = 0, unknown_silent = 0;

	for (c = 0; c < FZ_NCMD; c++) {
		if (!st->sent[c])
			continue;
		if (c > MAGLEV_CMD_MAX || c == MAGLEV_CMD_UNSPEC) {
			unknown += st->sent[c];
			unknown_silent += st->silent[c];
			continue;
		}
		fprintf(stderr, "#   %-12s %5u sent, %5u accepted, %5u refused, %4u dropped\n",
			fz_cmd_names[c], st->sent[c], st->acked[c], st->rejected[c], st->silent[c]);
	}
	if (unknown)
		fprintf(stderr, "#   %-12s %5u sent (command 0 or > %d), %u dropped\n", "other",
			unknown, MAGLEV_CMD_MAX, unknown_silent);
	fprintf(stderr,
		"#   errors: EINVAL %u, ERANGE %u, ENOENT %u, ESTALE %u, EOPNOTSUPP %u, ENODATA "
		"%u, other %u\n",
		st->err_einval, st->err_erange, st->err_enoent, st->err_estale, st->err_eopnotsupp,
		st->err_enodata, st->err_other);
	fprintf(stderr,
		"# %s: %u random messages, none crashed, state unchanged by %u refused or "
		"dropped and %u accepted reads (%u snapshots); %u accepted changes, %u resets; "
		"%.1f s\n",
		what, n, st->rejected_total, st->reads_total, st->checks, st->changes, st->resyncs,
		fz_elapsed(self));
}

/* End of every test: baseline again, every slot looks up right, clean log. */
static int fz_finish(FIXTURE_DATA(fz) * self)
{
	int bad;

	if (fz_resync(self))
		return -1;
	bad = fz_check_base_lookups(&self->s, &self->base);
	if (bad) {
		fprintf(stderr, "# %d baseline lookups differ from the userspace pick\n", bad);
		return -1;
	}
	bad = fz_kmsg_bad(self->kmsg);
	if (bad) {
		fprintf(stderr, "# %d kernel log records show a kernel bug\n", bad);
		return -1;
	}
	return 0;
}

static int fz_run_random(FIXTURE_DATA(fz) * self, const uint8_t *cmds, unsigned int ncmds,
			 const char *what)
{
	unsigned int i;

	for (i = 0; i < g_n; i++) {
		uint8_t cmd = cmds[fz_r(&self->g, ncmds)];
		struct nlmsghdr *nlh = fz_random_request(&self->g, self->buf, self->s.family, cmd);

		if (fz_one(self, self->buf, nlh->nlmsg_len, i))
			return -1;
	}
	fz_report(self, what, g_n);
	return fz_finish(self);
}

TEST_F_TIMEOUT(fz, config_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_CONFIG_SET, MAGLEV_CMD_CONFIG_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "CONFIG_SET/GET"));
}

TEST_F_TIMEOUT(fz, vip_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_VIP_SET, MAGLEV_CMD_VIP_DEL, MAGLEV_CMD_VIP_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "VIP_SET/DEL/GET"));
}

TEST_F_TIMEOUT(fz, backend_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_BACKEND_SET, MAGLEV_CMD_BACKEND_DEL,
				       MAGLEV_CMD_BACKEND_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "BACKEND_SET/DEL/GET"));
}

TEST_F_TIMEOUT(fz, table_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_TABLE_BEGIN, MAGLEV_CMD_TABLE_CHUNK,
				       MAGLEV_CMD_TABLE_CHUNK, MAGLEV_CMD_TABLE_COMMIT};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "TABLE_BEGIN/CHUNK/COMMIT"));
}

TEST_F_TIMEOUT(fz, lookup_stats_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_LOOKUP, MAGLEV_CMD_LOOKUP, MAGLEV_CMD_STATS_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "LOOKUP/STATS_GET"));
}

/* ---- Malformed headers ------------------------------------------------- */

/* A random request for any command, known or not. */
static struct nlmsghdr *fz_any_request(FIXTURE_DATA(fz) * self)
{
	uint8_t cmd = fz_pct(&self->g, 80) ? (uint8_t)(1 + fz_r(&self->g, MAGLEV_CMD_MAX))
					   : (uint8_t)FZ_PICK(&self->g, 0, MAGLEV_CMD_MAX + 1,
							      MAGLEV_CMD_MAX + 2, 0x7f, 0x80, 0xff);

	return fz_random_request(&self->g, self->buf, self->s.family, cmd);
}

/*
 * Header-level garbage: no header at all, nlmsg_len beyond the datagram or
 * below a header, half a genetlink header, unknown commands, wrong versions,
 * reserved bits, odd flags, bytes left over after the attributes, and
 * attribute headers that lie about their length.
 */
static size_t fz_bad_header(FIXTURE_DATA(fz) * self)
{
	struct fz_gen *g = &self->g;
	struct nlmsghdr *nlh = fz_any_request(self);
	struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	size_t len = nlh->nlmsg_len, hdr = NLMSG_HDRLEN + GENL_HDRLEN;

	switch (fz_r(g, 10)) {
	case 0: /* shorter than a netlink header */
		len = fz_r(g, NLMSG_HDRLEN);
		fz_rand_bytes(g, self->buf, len);
		break;
	case 1: /* claims more than was sent */
		nlh->nlmsg_len = (uint32_t)(len + FZ_PICK(g, 1, 4, 100, 65536, 0x7fffffff,
							  0xffffffff - len));
		break;
	case 2: /* claims less than a netlink header */
		nlh->nlmsg_len = (uint32_t)fz_r(g, NLMSG_HDRLEN);
		break;
	case 3: /* part of the genetlink header */
		nlh->nlmsg_len = NLMSG_HDRLEN + (uint32_t)fz_r(g, GENL_HDRLEN);
		len = nlh->nlmsg_len;
		break;
	case 4: /* unknown command */
		gh->cmd = (uint8_t)FZ_PICK(g, 0, MAGLEV_CMD_MAX + 1, 0x40, 0xff,
					   MAGLEV_CMD_MAX + 1 + fz_r(g, 255 - MAGLEV_CMD_MAX));
		break;
	case 5: /* genetlink version and reserved field */
		gh->version = (uint8_t)kmod_rand(&g->rs);
		if (fz_pct(g, 50))
			gh->reserved = (uint16_t)kmod_rand(&g->rs);
		break;
	case 6: /* any flags */
		nlh->nlmsg_flags = (uint16_t)kmod_rand(&g->rs);
		break;
	case 7: /* 1-3 bytes after the last attribute, or a bare attribute header */
		len += fz_r(g, 4) + 1;
		fz_rand_bytes(g, self->buf + nlh->nlmsg_len, len - nlh->nlmsg_len);
		nlh->nlmsg_len = (uint32_t)len;
		break;
	case 8: /* an attribute header that lies about its length */
		if (len >= hdr + 4) {
			struct nlattr *a = (struct nlattr *)(self->buf + hdr);

			a->nla_len = (uint16_t)FZ_PICK(g, 0, 1, 3, 4, a->nla_len + 1,
						       a->nla_len + 4, len - hdr + 1, 0xffff);
		}
		break;
	default: /* random bytes after the genetlink header */
		len = hdr + fz_r(g, 200);
		fz_rand_bytes(g, self->buf + hdr, len - hdr);
		nlh->nlmsg_len = (uint32_t)len;
		break;
	}
	return len;
}

TEST_F_TIMEOUT(fz, malformed_headers, 600)
{
	unsigned int i;

	for (i = 0; i < g_n; i++) {
		size_t len = fz_bad_header(self);

		ASSERT_EQ(0, fz_one(self, self->buf, len, i));
	}
	fz_report(self, "headers", g_n);
	ASSERT_EQ(0, fz_finish(self));
}

/* ---- Mutations of the client's own requests ----------------------------- */

/* Offsets of the top-level attributes of a message (well-formed ones only). */
static int fz_attr_offsets(const uint8_t *msg, size_t len, size_t *off, int max)
{
	size_t o = NLMSG_HDRLEN + GENL_HDRLEN;
	int n = 0;

	while (n < max && o + 4 <= len) {
		const struct nlattr *a = (const struct nlattr *)(msg + o);

		if (a->nla_len < 4 || o + a->nla_len > len)
			break;
		off[n++] = o;
		o += (a->nla_len + 3) & ~3u;
	}
	return n;
}

static size_t fz_mutate(FIXTURE_DATA(fz) * self, size_t len)
{
	struct fz_gen *g = &self->g;
	uint8_t *m = self->buf;
	size_t lo = NLMSG_HDRLEN, off[64], k, n;
	int nattr = fz_attr_offsets(m, len, off, 64);
	struct nlattr *a = nattr ? (struct nlattr *)(m + off[fz_r(g, nattr)]) : NULL;

	switch (fz_r(g, 10)) {
	case 0: /* flip bits */
		for (k = 1 + fz_r(g, 4); k-- && len > lo;)
			m[lo + fz_r(g, len - lo)] ^= (uint8_t)(1u << fz_r(g, 8));
		break;
	case 1: /* interesting bytes */
		for (k = 1 + fz_r(g, 3); k-- && len > lo;)
			m[lo + fz_r(g, len - lo)] = (uint8_t)FZ_PICK(g, 0, 0xff, 0x7f, 0x80, 1);
		break;
	case 2: /* insert bytes */
		n = 1 + fz_r(g, 8);
		if (len + n < FZ_BUF && len > lo) {
			k = lo + fz_r(g, len - lo + 1);
			memmove(m + k + n, m + k, len - k);
			fz_rand_bytes(g, m + k, n);
			len += n;
		}
		break;
	case 3: /* delete bytes */
		n = 1 + fz_r(g, 8);
		if (len > lo + n) {
			k = lo + fz_r(g, len - lo - n + 1);
			memmove(m + k, m + k + n, len - k - n);
			len -= n;
		}
		break;
	case 4: /* truncate */
		if (len > lo)
			len = lo + fz_r(g, len - lo);
		break;
	case 5: /* an attribute's length or type */
		if (a) {
			if (fz_pct(g, 50))
				a->nla_len =
					(uint16_t)FZ_PICK(g, 0, 3, 4, 5, a->nla_len - 1,
							  a->nla_len + 1, a->nla_len + 8, 0xffff);
			else
				a->nla_type = (uint16_t)FZ_PICK(g, a->nla_type ^ NLA_F_NESTED,
								a->nla_type ^ NLA_F_NET_BYTEORDER,
								0, MAGLEV_A_MAX + 1,
								1 + fz_r(g, MAGLEV_A_MAX));
		}
		break;
	case 6: /* duplicate an attribute at the end */
		if (a && len + ((a->nla_len + 3) & ~3u) < FZ_BUF) {
			n = (a->nla_len + 3) & ~3u;
			memcpy(m + len, a, n);
			len += n;
		}
		break;
	case 7: /* attributes of another captured request appended */
		k = fz_r(g, g_cap.n);
		n = g_cap.len[k] - (NLMSG_HDRLEN + GENL_HDRLEN);
		if (len + n < FZ_BUF) {
			memcpy(m + len, g_cap.msg[k] + NLMSG_HDRLEN + GENL_HDRLEN, n);
			len += n;
		}
		break;
	case 8: /* a value word at its boundary */
		if (a && a->nla_len >= 8) {
			uint32_t v =
				(uint32_t)FZ_PICK(g, 0, 0xffffffff, MAGLEV_GENL_BACKEND_MAX + 1,
						  MAGLEV_GENL_TABLE_MAX, 0x80000000);

			memcpy((uint8_t *)a + 4, &v, 4);
		}
		break;
	default: /* the genetlink header */
		m[lo + fz_r(g, GENL_HDRLEN)] = (uint8_t)kmod_rand(&g->rs);
		break;
	}
	return len;
}

TEST_F_TIMEOUT(fz, client_request_mutations, 600)
{
	unsigned int i, k;

	fprintf(stderr, "# corpus: %u requests captured from slowpath_nl.c\n", g_cap.n);
	for (i = 0; i < g_n; i++) {
		unsigned int c = (unsigned int)fz_r(&self->g, g_cap.n);
		size_t len = g_cap.len[c];
		struct nlmsghdr *nlh = (struct nlmsghdr *)self->buf;

		memset(self->buf, 0, FZ_BUF);
		memcpy(self->buf, g_cap.msg[c], len);
		for (k = 1 + (unsigned int)fz_r(&self->g, 3); k--;)
			len = fz_mutate(self, len);
		nlh->nlmsg_type = self->s.family;
		nlh->nlmsg_len = (uint32_t)len;
		if (fz_pct(&self->g, 3))
			nlh->nlmsg_len += 1 + (uint32_t)fz_r(&self->g, 64); /* beyond: dropped */
		ASSERT_EQ(0, fz_one(self, self->buf, len, i));
	}
	fz_report(self, "client mutations", g_n);
	ASSERT_EQ(0, fz_finish(self));
}

/* ---- Table staging against a model -------------------------------------- */

#define FZ_MODEL_VIPS 4

struct fz_model_vip {
	struct maglev_vip_key key;
	int exists;
	int live;
	uint64_t live_gen;
	uint32_t live_size;
	uint32_t live_tab[FZ_STAGE_MAX_SIZE];
	int staged;
	uint64_t st_gen;
	uint32_t st_size, st_filled; /* contents kept only up to FZ_STAGE_MAX_SIZE */
	uint32_t st_tab[FZ_STAGE_MAX_SIZE];
};

struct fz_model_stats {
	unsigned int begin, chunk, commit, recreate, accepted, commits, slots;
};

/* The live table of one VIP as the module reports it and looks it up. */
static int fz_model_verify(FIXTURE_DATA(fz) * self, const struct fz_model_vip *mv,
			   struct fz_model_stats *ms)
{
	struct nlmsghdr *nlh = fz_msg(self->buf, FZ_BUF, self->s.family, MAGLEV_CMD_VIP_GET, 0);
	struct maglev_flow_key flows[FZ_STAGE_MAX_SIZE];
	struct slowpath_lookup got;
	struct fz_snap one = {};
	uint32_t slot;
	int err;

	fz_put_key(nlh, &mv->key);
	err = fz_request(&self->s, nlh, fz_vips_cb, &one);
	if (err != (mv->exists ? 0 : -ENOENT)) {
		fprintf(stderr, "# VIP_GET: %d (%s), the model says %s\n", err, self->s.err,
			mv->exists ? "exists" : "absent");
		return -1;
	}
	if (!mv->exists)
		return 0;
	if (one.vips[0].has_table != mv->live ||
	    (mv->live && (one.vips[0].gen != mv->live_gen || one.vips[0].size != mv->live_size))) {
		fprintf(stderr, "# VIP_GET: table %d gen %llu size %u; model %d gen %llu size %u\n",
			one.vips[0].has_table, (unsigned long long)one.vips[0].gen,
			one.vips[0].size, mv->live, (unsigned long long)mv->live_gen,
			mv->live_size);
		return -1;
	}
	if (!mv->live) {
		struct maglev_flow_key f = fz_flow(&mv->key, &self->g.rs);

		err = fz_lookup(&self->s, &f, &got);
		if (err != -ENODATA) {
			fprintf(stderr, "# LOOKUP on a VIP without a table: %d\n", err);
			return -1;
		}
		return 0;
	}
	if (fz_slot_flows(&self->base.seed, &mv->key, mv->live_size, &self->g.rs, flows))
		return -1;
	for (slot = 0; slot < mv->live_size; slot++) {
		err = fz_lookup(&self->s, &flows[slot], &got);
		ms->slots++;
		if (err || got.slot != slot || got.backend_idx != mv->live_tab[slot] ||
		    got.table_gen != mv->live_gen) {
			fprintf(stderr,
				"# LOOKUP slot %u: %d, backend %u slot %u gen %llu; model backend "
				"%u gen %llu\n",
				slot, err, got.backend_idx, got.slot,
				(unsigned long long)got.table_gen, mv->live_tab[slot],
				(unsigned long long)mv->live_gen);
			return -1;
		}
	}
	return 0;
}

/* One staging request (or a VIP delete / re-create) and the model's errno. */
static int fz_model_step(FIXTURE_DATA(fz) * self, struct fz_model_vip *mv, int nvips,
			 struct fz_model_stats *ms, unsigned int idx)
{
	static uint32_t ents[MAGLEV_GENL_CHUNK_MAX];
	struct fz_gen *g = &self->g;
	struct fz_model_vip *v = &mv[fz_r(g, nvips)];
	uint64_t r = fz_r(g, 100), gen;
	struct nlmsghdr *nlh;
	const char *op;
	int want, got, i;

	/* Chunks and commits mostly go where something is staged. */
	if (r >= 20 && r < 90 && fz_pct(g, 70)) {
		int staged[FZ_MODEL_VIPS], ns = 0;

		for (i = 0; i < nvips; i++)
			if (mv[i].staged)
				staged[ns++] = i;
		if (ns)
			v = &mv[staged[fz_r(g, ns)]];
	}
	gen = v->staged && fz_pct(g, 85) ? v->st_gen : FZ_PICK(g, 1, 2, 3, v->live_gen, UINT64_MAX);
	if (r < 20) {
		uint32_t size = fz_pct(g, 90) ? (uint32_t)FZ_PICK(g, 1, 2, 3, 5, 7, 13, 17, 31)
				: fz_pct(g, 50)
					? MAGLEV_GENL_TABLE_MAX
					: (uint32_t)FZ_PICK(g, 0, MAGLEV_GENL_TABLE_MAX + 1);

		op = "TABLE_BEGIN";
		ms->begin++;
		nlh = fz_msg(self->buf, FZ_BUF, self->s.family, MAGLEV_CMD_TABLE_BEGIN, 0);
		fz_put_key(nlh, &v->key);
		mnl_attr_put_u64(nlh, MAGLEV_A_GEN, gen);
		mnl_attr_put_u32(nlh, MAGLEV_A_TABLE_SIZE, size);
		if (!size || size > MAGLEV_GENL_TABLE_MAX) {
			want = -ERANGE;
		} else if (!v->exists) {
			want = -ENOENT;
		} else {
			want = 0;
			v->staged = 1;
			v->st_gen = gen;
			v->st_size = size;
			v->st_filled = 0;
			memset(v->st_tab, 0, sizeof(v->st_tab));
		}
	} else if (r < 70) {
		uint32_t left = v->staged ? v->st_size - v->st_filled : 0, off, n;
		int bad_entry = fz_pct(g, 4), bad_off = !bad_entry && fz_pct(g, 3);

		if (left && fz_pct(g, 70))
			n = 1 + (uint32_t)fz_r(g, left < MAGLEV_GENL_CHUNK_MAX ? left : 64);
		else if (left && fz_pct(g, 50))
			n = left + 1 + (uint32_t)fz_r(g, 3);
		else
			n = 1 + (uint32_t)fz_r(g, 8);
		if (n > MAGLEV_GENL_CHUNK_MAX)
			n = MAGLEV_GENL_CHUNK_MAX;
		off = v->staged && fz_pct(g, 75) ? v->st_filled
						 : (uint32_t)FZ_PICK(g, 0, v->st_filled + 1,
								     v->st_filled - !!v->st_filled,
								     v->st_size, fz_r(g, 40));
		if (bad_off)
			off = (uint32_t)FZ_PICK(g, MAGLEV_GENL_TABLE_MAX, 0xffffffff);
		for (i = 0; i < (int)n; i++)
			ents[i] = (uint32_t)FZ_PICK(g, 0, 1, 2, 3, 4, 5, MAGLEV_GENL_BACKEND_MAX);
		if (bad_entry)
			ents[fz_r(g, n)] =
				(uint32_t)FZ_PICK(g, MAGLEV_GENL_BACKEND_MAX + 1, 0xffffffff);
		op = "TABLE_CHUNK";
		ms->chunk++;
		nlh = fz_msg(self->buf, FZ_BUF, self->s.family, MAGLEV_CMD_TABLE_CHUNK, 0);
		fz_put_key(nlh, &v->key);
		mnl_attr_put_u64(nlh, MAGLEV_A_GEN, gen);
		mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, off);
		mnl_attr_put(nlh, MAGLEV_A_ENTRIES, n * 4, ents);
		if (bad_entry || off > MAGLEV_GENL_TABLE_MAX - 1) { /* the policy */
			want = -ERANGE;
		} else if (!v->exists || !v->staged) {
			want = -ENOENT;
		} else if (gen != v->st_gen) {
			want = -ESTALE;
		} else if (off != v->st_filled) {
			want = -EINVAL;
		} else if (n > v->st_size - off) {
			want = -ERANGE;
		} else {
			want = 0;
			if (v->st_size <= FZ_STAGE_MAX_SIZE)
				memcpy(&v->st_tab[off], ents, n * 4);
			v->st_filled += n;
		}
	} else if (r < 90) {
		op = "TABLE_COMMIT";
		ms->commit++;
		nlh = fz_msg(self->buf, FZ_BUF, self->s.family, MAGLEV_CMD_TABLE_COMMIT, 0);
		fz_put_key(nlh, &v->key);
		mnl_attr_put_u64(nlh, MAGLEV_A_GEN, gen);
		if (!v->exists || !v->staged) {
			want = -ENOENT;
		} else if (gen != v->st_gen) {
			want = -ESTALE;
		} else if (v->st_filled != v->st_size) {
			want = -EINVAL;
		} else {
			want = 0;
			v->live = 1;
			v->live_gen = v->st_gen;
			v->live_size = v->st_size;
			memcpy(v->live_tab, v->st_tab, sizeof(v->live_tab));
			v->staged = 0;
			ms->commits++;
		}
	} else if (r < 94) {
		/* Delete, or create without a table: staging starts over. */
		op = v->exists ? "VIP_DEL" : "VIP_SET";
		ms->recreate++;
		nlh = fz_msg(self->buf, FZ_BUF, self->s.family,
			     v->exists ? MAGLEV_CMD_VIP_DEL : MAGLEV_CMD_VIP_SET, 0);
		fz_put_key(nlh, &v->key);
		if (!v->exists)
			mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, MAGLEV_ENCAP_IPIP);
		want = 0;
		v->exists = !v->exists;
		v->live = 0;
		v->staged = 0;
	} else {
		return fz_model_verify(self, v, ms);
	}
	got = fz_request(&self->s, nlh, NULL, NULL);
	if (fz_kmsg_bad(self->kmsg)) {
		fprintf(stderr, "# request %u (%s) made the kernel log a bug\n", idx, op);
		fz_hexdump(self->buf, nlh->nlmsg_len);
		return -1;
	}
	if (got != want) {
		fprintf(stderr, "# request %u, %s: got %d (%s), the model says %d\n", idx, op, got,
			self->s.err, want);
		return -1;
	}
	ms->accepted += !got;
	if (!strcmp(op, "TABLE_COMMIT") && !got)
		return fz_model_verify(self, v, ms);
	return 0;
}

/*
 * Random BEGIN / CHUNK / COMMIT sequences over three existing VIPs (with and
 * without a live table) and one that comes and goes: chunks without a
 * begin, out of order, overlapping, past the end, with a stale generation,
 * commits of incomplete or missing tables, huge staged tables. Every errno
 * must be the model's, and after each commit every slot of the live table
 * must look up as the model holds it (a refused chunk wrote nothing).
 */
TEST_F_TIMEOUT(fz, staging_sequences_vs_model, 600)
{
	struct fz_model_vip mv[FZ_MODEL_VIPS] = {};
	struct fz_model_stats ms = {};
	unsigned int i;
	int v;

	for (v = 0; v < FZ_NBASE_VIPS; v++) {
		mv[v].key = fz_base_key(v);
		mv[v].exists = 1;
		mv[v].live = fz_base_vips[v].size != 0;
		mv[v].live_gen = fz_base_vips[v].gen;
		mv[v].live_size = fz_base_vips[v].size;
		memcpy(mv[v].live_tab, self->base.tables[v], sizeof(mv[v].live_tab));
	}
	mv[3].key = fz_key(MAGLEV_AF_INET6, "2001:db8:100::99", 443, IPPROTO_UDP);
	for (i = 0; i < g_n; i++) {
		ASSERT_EQ(0, fz_model_step(self, mv, FZ_MODEL_VIPS, &ms, i));
	}
	for (v = 0; v < FZ_MODEL_VIPS; v++) {
		ASSERT_EQ(0, fz_model_verify(self, &mv[v], &ms));
	}
	fprintf(stderr,
		"# staging: %u requests (TABLE_BEGIN %u, TABLE_CHUNK %u, TABLE_COMMIT %u, VIP "
		"delete/create %u), %u accepted, every errno as the model predicts; %u commits, "
		"%u table slots looked up as the model holds them; %.1f s\n",
		ms.begin + ms.chunk + ms.commit + ms.recreate, ms.begin, ms.chunk, ms.commit,
		ms.recreate, ms.accepted, ms.commits, ms.slots, fz_elapsed(self));
	ASSERT_EQ(0, fz_finish(self));
}

/*
 * Last: a fresh known-good configuration (random seed, IPv4 and IPv6 VIPs,
 * random tables of 251 and 4093 slots) picks, for 2000 random flows, the
 * backend the userspace reference computes.
 */
TEST_F_TIMEOUT(fz, known_good_lookup_after_fuzz, 600)
{
	static const uint32_t sizes[2] = {251, 4093};
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct slowpath_config cfg = {};
	struct maglev_vip_key keys[2];
	uint32_t *tables[2];
	int i, v, mismatches = 0;

	cfg.seed.k0 = kmod_rand(&self->g.rs);
	cfg.seed.k1 = kmod_rand(&self->g.rs);
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &cfg));
	keys[0] = fz_key(MAGLEV_AF_INET, "198.51.100.20", 0, IPPROTO_TCP);
	keys[1] = fz_key(MAGLEV_AF_INET6, "2001:db8:100::20", 443, IPPROTO_UDP);
	for (v = 0; v < 2; v++) {
		tables[v] = malloc(sizes[v] * sizeof(uint32_t));
		ASSERT_NE(NULL, tables[v]);
		for (i = 0; i < (int)sizes[v]; i++)
			tables[v][i] = 1 + kmod_rand(&self->g.rs) % MAGLEV_GENL_BACKEND_MAX;
		ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &keys[v], &ipip));
		ASSERT_EQ(0,
			  slowpath_nl_table_push(self->nl, &keys[v], 50 + v, tables[v], sizes[v]));
	}
	for (i = 0; i < 2000; i++) {
		struct maglev_flow_key f;
		struct slowpath_lookup got;
		uint32_t want;

		v = i % 2;
		f = fz_flow(&keys[v], &self->g.rs);
		ASSERT_EQ(0, fz_lookup(&self->s, &f, &got));
		want = kmod_expected_pick(&cfg.seed, &f, tables[v], sizes[v]);
		if (got.backend_idx != want || got.table_gen != (uint64_t)(50 + v))
			mismatches++;
	}
	fprintf(stderr,
		"# 2000 lookups on a fresh configuration: %d differ from userspace; %.1f s\n",
		mismatches, fz_elapsed(self));
	EXPECT_EQ(0, mismatches);
	for (v = 0; v < 2; v++) {
		ASSERT_EQ(0, slowpath_nl_vip_del(self->nl, &keys[v]));
		free(tables[v]);
	}
	ASSERT_EQ(0, fz_finish(self));
}

int main(int argc, char **argv)
{
	const char *seed = getenv("MAGLEV_NL_FUZZ_SEED"), *n = getenv("MAGLEV_NL_FUZZ_N");
	struct slowpath_nl *nl;
	int err, fd;

	g_seed = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	g_n = n ? (unsigned int)strtoul(n, NULL, 0) : FZ_DEFAULT_N;
	err = slowpath_nl_open(&nl);
	if (err == -ENOENT) {
		printf("1..0 # SKIP maglev genetlink family not registered (module not loaded)\n");
		return KSFT_SKIP;
	}
	if (err) {
		printf("1..0 # cannot open generic netlink: %s\n", strerror(-err));
		return KSFT_FAIL;
	}
	slowpath_nl_close(nl);
	printf("# MAGLEV_NL_FUZZ_SEED=0x%llx MAGLEV_NL_FUZZ_N=%u\n", (unsigned long long)g_seed,
	       g_n);
	/* The log before the run, for the record: only new records fail a test. */
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		printf("# kernel log before the run: %d records that look like a kernel bug\n",
		       fz_kmsg_bad(fd));
		close(fd);
	}
	fflush(stdout);
	return test_harness_run(argc, argv);
}
