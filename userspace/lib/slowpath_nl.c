// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libmnl client of the slow-path module's "maglev" generic netlink family.
 * Requests are synchronous: send, then read replies until the ACK (or the
 * end of a dump), collecting the kernel's extended ACK message on errors.
 */
#include "slowpath_nl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* Largest request: a full table chunk plus the VIP key and header. */
/* A chunk: its owners and previous owners, plus the other attributes. */
#define SP_SEND_BUF (MAGLEV_GENL_CHUNK_MAX * 8 + 1024)
#define SP_RECV_BUF 65536

struct slowpath_nl {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;
	uint16_t family;
	char *sbuf;
	char *rbuf;
	char err[256];
};

typedef int (*sp_msg_cb)(const struct nlmsghdr *nlh, void *data);

static int sp_fail(struct slowpath_nl *nl, int err, const char *what)
{
	snprintf(nl->err, sizeof(nl->err), "%s: %s", what, strerror(-err));
	return err;
}

/* The extended ACK message of an NLMSG_ERROR, if the kernel attached one. */
static void sp_extack(struct slowpath_nl *nl, const struct nlmsghdr *nlh, int err)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	size_t off = sizeof(*e);
	const void *tlvs;

	snprintf(nl->err, sizeof(nl->err), "%s", strerror(-err));
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if (off > mnl_nlmsg_get_payload_len(nlh))
		return;
	tlvs = (const char *)e + off;
	mnl_attr_for_each_payload(tlvs, mnl_nlmsg_get_payload_len(nlh) - off)
	{
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(nl->err, sizeof(nl->err), "%s (%s)", mnl_attr_get_str(attr),
				 strerror(-err));
	}
}

/* Send nlh and read until its ACK / NLMSG_DONE, passing data messages to cb. */
static int sp_transact(struct slowpath_nl *nl, struct nlmsghdr *nlh, sp_msg_cb cb, void *data)
{
	int dump = !!(nlh->nlmsg_flags & NLM_F_DUMP);
	ssize_t got;
	int n;

	nl->err[0] = '\0';
	nlh->nlmsg_seq = ++nl->seq;
	nlh->nlmsg_flags |= NLM_F_REQUEST | (dump ? 0 : NLM_F_ACK);
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return sp_fail(nl, -errno, "netlink send");

	for (;;) {
		got = mnl_socket_recvfrom(nl->sock, nl->rbuf, SP_RECV_BUF);
		if (got < 0)
			return sp_fail(nl, -errno, "netlink receive");
		n = (int)got;
		for (struct nlmsghdr *m = (struct nlmsghdr *)nl->rbuf; mnl_nlmsg_ok(m, n);
		     m = mnl_nlmsg_next(m, &n)) {
			if (m->nlmsg_seq != nl->seq || m->nlmsg_pid != nl->portid)
				continue;
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);

				if (e->error)
					sp_extack(nl, m, e->error);
				return e->error;
			}
			if (m->nlmsg_type == NLMSG_DONE) {
				const int *e = mnl_nlmsg_get_payload(m);

				if (mnl_nlmsg_get_payload_len(m) >= sizeof(int) && *e)
					return sp_fail(nl, *e, "dump");
				return 0;
			}
			if (cb) {
				int r = cb(m, data);

				if (r < 0)
					return sp_fail(nl, r, "malformed reply");
			}
		}
	}
}

static struct nlmsghdr *sp_msg(struct slowpath_nl *nl, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	/* libmnl 1.0.4 leaves attribute padding as it finds it: without this
	 * the kernel would get stale or uninitialised bytes (valgrind).
	 */
	memset(nl->sbuf, 0, SP_SEND_BUF);
	nlh = mnl_nlmsg_put_header(nl->sbuf);
	nlh->nlmsg_type = nl->family;
	nlh->nlmsg_flags = flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MAGLEV_GENL_VERSION;
	return nlh;
}

struct sp_attrs {
	const struct nlattr *tb[MAGLEV_A_MAX + 1];
};

static int sp_attr_cb(const struct nlattr *attr, void *data)
{
	struct sp_attrs *a = data;
	int type = mnl_attr_get_type(attr);

	if (type > 0 && type <= MAGLEV_A_MAX)
		a->tb[type] = attr;
	return MNL_CB_OK;
}

static void sp_parse(const struct nlmsghdr *nlh, struct sp_attrs *a)
{
	memset(a, 0, sizeof(*a));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), sp_attr_cb, a);
}

static void sp_put_addr(struct nlmsghdr *nlh, uint16_t type, uint8_t family, const uint32_t *addr)
{
	mnl_attr_put(nlh, type, family == MAGLEV_AF_INET ? 4 : 16, addr);
}

static void sp_put_key(struct nlmsghdr *nlh, const struct maglev_vip_key *key)
{
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, key->family);
	sp_put_addr(nlh, MAGLEV_A_ADDR, key->family, key->addr);
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, key->port);
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, key->proto);
}

static void sp_get_addr(const struct nlattr *attr, uint32_t *addr)
{
	size_t len = mnl_attr_get_payload_len(attr);

	memset(addr, 0, 16);
	memcpy(addr, mnl_attr_get_payload(attr), len > 16 ? 16 : len);
}

static int sp_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
	{
		if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
			*(uint16_t *)data = mnl_attr_get_u16(attr);
	}
	return MNL_CB_OK;
}

int slowpath_nl_open(struct slowpath_nl **out)
{
	struct slowpath_nl *nl;
	struct nlmsghdr *nlh;
	int one = 1, err;

	*out = NULL;
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->sbuf = calloc(1, SP_SEND_BUF); /* zeroed padding, see sp_msg() */
	nl->rbuf = malloc(SP_RECV_BUF);
	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sbuf || !nl->rbuf || !nl->sock) {
		err = nl->sock ? -ENOMEM : -errno;
		goto fail;
	}
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto fail;
	}
	/* Error messages, without an echo of the (possibly 32 KiB) request. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (uint32_t)time(NULL);

	nlh = mnl_nlmsg_put_header(nl->sbuf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = 0;
	{
		struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

		g->cmd = CTRL_CMD_GETFAMILY;
		g->version = 1;
	}
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, MAGLEV_GENL_NAME);
	err = sp_transact(nl, nlh, sp_family_cb, &nl->family);
	if (err)
		goto fail;
	if (!nl->family) {
		err = -ENOENT;
		goto fail;
	}
	*out = nl;
	return 0;

fail:
	slowpath_nl_close(nl);
	return err;
}

void slowpath_nl_close(struct slowpath_nl *nl)
{
	if (!nl)
		return;
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl->sbuf);
	free(nl->rbuf);
	free(nl);
}

const char *slowpath_nl_errmsg(const struct slowpath_nl *nl)
{
	return nl->err;
}

uint16_t slowpath_nl_family_id(const struct slowpath_nl *nl)
{
	return nl->family;
}

int slowpath_nl_request_raw(struct slowpath_nl *nl, void *msg)
{
	return sp_transact(nl, msg, NULL, NULL);
}

int slowpath_nl_config_set(struct slowpath_nl *nl, const struct slowpath_config *cfg)
{
	static const uint32_t zero6[4];
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_CONFIG_SET, 0);

	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K0, cfg->seed.k0);
	mnl_attr_put_u64(nlh, MAGLEV_A_SEED_K1, cfg->seed.k1);
	if (cfg->src4) {
		mnl_attr_put(nlh, MAGLEV_A_SRC4, 4, &cfg->src4);
		if (cfg->src4_plen)
			mnl_attr_put_u8(nlh, MAGLEV_A_SRC4_PLEN, cfg->src4_plen);
	}
	if (memcmp(cfg->src6, zero6, sizeof(zero6))) {
		mnl_attr_put(nlh, MAGLEV_A_SRC6, 16, cfg->src6);
		if (cfg->src6_plen)
			mnl_attr_put_u8(nlh, MAGLEV_A_SRC6_PLEN, cfg->src6_plen);
	}
	return sp_transact(nl, nlh, NULL, NULL);
}

static int sp_config_cb(const struct nlmsghdr *nlh, void *data)
{
	struct slowpath_config *cfg = data;
	struct sp_attrs a;

	sp_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_SEED_K0] || !a.tb[MAGLEV_A_SEED_K1])
		return -EPROTO;
	cfg->seed.k0 = mnl_attr_get_u64(a.tb[MAGLEV_A_SEED_K0]);
	cfg->seed.k1 = mnl_attr_get_u64(a.tb[MAGLEV_A_SEED_K1]);
	if (a.tb[MAGLEV_A_SRC4])
		memcpy(&cfg->src4, mnl_attr_get_payload(a.tb[MAGLEV_A_SRC4]), 4);
	if (a.tb[MAGLEV_A_SRC6])
		memcpy(cfg->src6, mnl_attr_get_payload(a.tb[MAGLEV_A_SRC6]), 16);
	if (a.tb[MAGLEV_A_SRC4_PLEN])
		cfg->src4_plen = mnl_attr_get_u8(a.tb[MAGLEV_A_SRC4_PLEN]);
	if (a.tb[MAGLEV_A_SRC6_PLEN])
		cfg->src6_plen = mnl_attr_get_u8(a.tb[MAGLEV_A_SRC6_PLEN]);
	return MNL_CB_OK;
}

int slowpath_nl_config_get(struct slowpath_nl *nl, struct slowpath_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	return sp_transact(nl, sp_msg(nl, MAGLEV_CMD_CONFIG_GET, 0), sp_config_cb, cfg);
}

int slowpath_nl_vip_set(struct slowpath_nl *nl, const struct maglev_vip_key *key,
			const struct maglev_vip_info *info)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_VIP_SET, 0);

	sp_put_key(nlh, key);
	mnl_attr_put_u8(nlh, MAGLEV_A_ENCAP, info->encap);
	if (info->encap == MAGLEV_ENCAP_GUE)
		mnl_attr_put_u16(nlh, MAGLEV_A_GUE_PORT, info->gue_port);
	return sp_transact(nl, nlh, NULL, NULL);
}

int slowpath_nl_vip_del(struct slowpath_nl *nl, const struct maglev_vip_key *key)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_VIP_DEL, 0);

	sp_put_key(nlh, key);
	return sp_transact(nl, nlh, NULL, NULL);
}

static int sp_vip_parse(const struct nlmsghdr *nlh, struct slowpath_vip_state *v)
{
	struct sp_attrs a;

	sp_parse(nlh, &a);
	memset(v, 0, sizeof(*v));
	if (!a.tb[MAGLEV_A_FAMILY] || !a.tb[MAGLEV_A_ADDR] || !a.tb[MAGLEV_A_PROTO] ||
	    !a.tb[MAGLEV_A_ENCAP])
		return -EPROTO;
	v->key.family = mnl_attr_get_u8(a.tb[MAGLEV_A_FAMILY]);
	sp_get_addr(a.tb[MAGLEV_A_ADDR], v->key.addr);
	v->key.proto = mnl_attr_get_u8(a.tb[MAGLEV_A_PROTO]);
	if (a.tb[MAGLEV_A_PORT])
		v->key.port = mnl_attr_get_u16(a.tb[MAGLEV_A_PORT]);
	v->encap = mnl_attr_get_u8(a.tb[MAGLEV_A_ENCAP]);
	if (a.tb[MAGLEV_A_GUE_PORT])
		v->gue_port = mnl_attr_get_u16(a.tb[MAGLEV_A_GUE_PORT]);
	if (a.tb[MAGLEV_A_TABLE_GEN] && a.tb[MAGLEV_A_TABLE_SIZE]) {
		v->has_table = 1;
		v->table_gen = mnl_attr_get_u64(a.tb[MAGLEV_A_TABLE_GEN]);
		v->table_size = mnl_attr_get_u32(a.tb[MAGLEV_A_TABLE_SIZE]);
	}
	if (a.tb[MAGLEV_A_PACKETS])
		v->packets = mnl_attr_get_u64(a.tb[MAGLEV_A_PACKETS]);
	if (a.tb[MAGLEV_A_BYTES])
		v->bytes = mnl_attr_get_u64(a.tb[MAGLEV_A_BYTES]);
	if (a.tb[MAGLEV_A_DROPS])
		v->drops = mnl_attr_get_u64(a.tb[MAGLEV_A_DROPS]);
	return 0;
}

static int sp_vip_cb(const struct nlmsghdr *nlh, void *data)
{
	return sp_vip_parse(nlh, data);
}

int slowpath_nl_vip_get(struct slowpath_nl *nl, const struct maglev_vip_key *key,
			struct slowpath_vip_state *out)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_VIP_GET, 0);

	sp_put_key(nlh, key);
	memset(out, 0, sizeof(*out));
	return sp_transact(nl, nlh, sp_vip_cb, out);
}

struct sp_vip_list {
	struct slowpath_vip_state *out;
	size_t max;
	size_t n;
};

static int sp_vip_list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sp_vip_list *l = data;
	struct slowpath_vip_state v;
	int err = sp_vip_parse(nlh, &v);

	if (err)
		return err;
	if (l->n < l->max)
		l->out[l->n] = v;
	l->n++;
	return MNL_CB_OK;
}

int slowpath_nl_vip_list(struct slowpath_nl *nl, struct slowpath_vip_state *out, size_t max)
{
	struct sp_vip_list l = {.out = out, .max = max};
	int err;

	err = sp_transact(nl, sp_msg(nl, MAGLEV_CMD_VIP_GET, NLM_F_DUMP), sp_vip_list_cb, &l);
	return err ? err : (int)l.n;
}

int slowpath_nl_backend_set(struct slowpath_nl *nl, uint32_t idx, const struct maglev_backend *b)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_BACKEND_SET, 0);

	mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, idx);
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, b->family);
	sp_put_addr(nlh, MAGLEV_A_ADDR, b->family, b->addr);
	return sp_transact(nl, nlh, NULL, NULL);
}

int slowpath_nl_backend_del(struct slowpath_nl *nl, uint32_t idx)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_BACKEND_DEL, 0);

	mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, idx);
	return sp_transact(nl, nlh, NULL, NULL);
}

static int sp_backend_cb(const struct nlmsghdr *nlh, void *data)
{
	struct maglev_backend *b = data;
	struct sp_attrs a;

	sp_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_FAMILY] || !a.tb[MAGLEV_A_ADDR])
		return -EPROTO;
	memset(b, 0, sizeof(*b));
	b->family = mnl_attr_get_u8(a.tb[MAGLEV_A_FAMILY]);
	sp_get_addr(a.tb[MAGLEV_A_ADDR], b->addr);
	b->flags = MAGLEV_BACKEND_F_UP;
	return MNL_CB_OK;
}

int slowpath_nl_backend_get(struct slowpath_nl *nl, uint32_t idx, struct maglev_backend *b)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_BACKEND_GET, 0);

	mnl_attr_put_u32(nlh, MAGLEV_A_BACKEND_IDX, idx);
	return sp_transact(nl, nlh, sp_backend_cb, b);
}

int slowpath_nl_table_push(struct slowpath_nl *nl, const struct maglev_vip_key *key, uint64_t gen,
			   const uint32_t *table, uint32_t size)
{
	return slowpath_nl_table_push_prev(nl, key, gen, table, NULL, size);
}

int slowpath_nl_table_push_prev(struct slowpath_nl *nl, const struct maglev_vip_key *key,
				uint64_t gen, const uint32_t *table, const uint32_t *prev,
				uint32_t size)
{
	struct nlmsghdr *nlh;
	uint32_t off, n;
	int err;

	nlh = sp_msg(nl, MAGLEV_CMD_TABLE_BEGIN, 0);
	sp_put_key(nlh, key);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, gen);
	mnl_attr_put_u32(nlh, MAGLEV_A_TABLE_SIZE, size);
	err = sp_transact(nl, nlh, NULL, NULL);
	if (err)
		return err;
	for (off = 0; off < size; off += n) {
		n = size - off < MAGLEV_GENL_CHUNK_MAX ? size - off : MAGLEV_GENL_CHUNK_MAX;
		nlh = sp_msg(nl, MAGLEV_CMD_TABLE_CHUNK, 0);
		sp_put_key(nlh, key);
		mnl_attr_put_u64(nlh, MAGLEV_A_GEN, gen);
		mnl_attr_put_u32(nlh, MAGLEV_A_OFFSET, off);
		mnl_attr_put(nlh, MAGLEV_A_ENTRIES, n * sizeof(uint32_t), table + off);
		if (prev)
			mnl_attr_put(nlh, MAGLEV_A_PREV_ENTRIES, n * sizeof(uint32_t), prev + off);
		err = sp_transact(nl, nlh, NULL, NULL);
		if (err)
			return err;
	}
	nlh = sp_msg(nl, MAGLEV_CMD_TABLE_COMMIT, 0);
	sp_put_key(nlh, key);
	mnl_attr_put_u64(nlh, MAGLEV_A_GEN, gen);
	return sp_transact(nl, nlh, NULL, NULL);
}

int slowpath_nl_overcap_set(struct slowpath_nl *nl, const uint8_t *marked, uint32_t n)
{
	uint32_t words[MAGLEV_GENL_OVERCAP_MAX / sizeof(uint32_t)] = {0}, i, nw = 0;
	struct nlmsghdr *nlh;

	if (n > MAGLEV_GENL_BACKEND_MAX + 1 || (n && marked[0]))
		return sp_fail(nl, -EINVAL, "over-cap marks");
	for (i = 1; i < n; i++) {
		if (!marked[i])
			continue;
		words[i / 32] |= 1U << (i % 32);
		nw = i / 32 + 1;
	}
	nlh = sp_msg(nl, MAGLEV_CMD_OVERCAP_SET, 0);
	if (nw)
		mnl_attr_put(nlh, MAGLEV_A_OVERCAP, nw * sizeof(uint32_t), words);
	return sp_transact(nl, nlh, NULL, NULL);
}

static int sp_lookup_cb(const struct nlmsghdr *nlh, void *data)
{
	struct slowpath_lookup *r = data;
	struct sp_attrs a;

	sp_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_BACKEND_IDX] || !a.tb[MAGLEV_A_SLOT] || !a.tb[MAGLEV_A_TABLE_GEN])
		return -EPROTO;
	r->backend_idx = mnl_attr_get_u32(a.tb[MAGLEV_A_BACKEND_IDX]);
	r->slot = mnl_attr_get_u32(a.tb[MAGLEV_A_SLOT]);
	r->table_gen = mnl_attr_get_u64(a.tb[MAGLEV_A_TABLE_GEN]);
	/* A module from before second chance does not send it. */
	r->prev_idx = a.tb[MAGLEV_A_PREV_IDX] ? mnl_attr_get_u32(a.tb[MAGLEV_A_PREV_IDX]) : 0;
	return MNL_CB_OK;
}

int slowpath_nl_lookup(struct slowpath_nl *nl, const struct maglev_flow_key *flow,
		       struct slowpath_lookup *out)
{
	struct nlmsghdr *nlh = sp_msg(nl, MAGLEV_CMD_LOOKUP, 0);

	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, flow->family);
	sp_put_addr(nlh, MAGLEV_A_SADDR, flow->family, flow->src);
	sp_put_addr(nlh, MAGLEV_A_ADDR, flow->family, flow->dst);
	mnl_attr_put_u16(nlh, MAGLEV_A_SPORT, flow->sport);
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, flow->dport);
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, flow->proto);
	memset(out, 0, sizeof(*out));
	return sp_transact(nl, nlh, sp_lookup_cb, out);
}

static int sp_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct slowpath_stats *s = data;
	const struct nlattr *attr;
	struct sp_attrs a;

	sp_parse(nlh, &a);
	if (!a.tb[MAGLEV_A_STATS])
		return -EPROTO;
	mnl_attr_for_each_nested(attr, a.tb[MAGLEV_A_STATS])
	{
		int type = mnl_attr_get_type(attr);

		if (type > 0 && type <= MAGLEV_STAT_MAX && type != MAGLEV_STAT_PAD &&
		    mnl_attr_validate(attr, MNL_TYPE_U64) == 0)
			s->cnt[type] = mnl_attr_get_u64(attr);
	}
	return MNL_CB_OK;
}

const char *slowpath_nl_stat_name(unsigned int stat)
{
	static const char *const names[MAGLEV_STAT_MAX + 1] = {
		[MAGLEV_STAT_FORWARDED] = "forwarded",
		[MAGLEV_STAT_FORWARDED_BYTES] = "forwarded_bytes",
		[MAGLEV_STAT_NO_TABLE] = "drop_no_table",
		[MAGLEV_STAT_NO_BACKEND] = "drop_no_backend",
		[MAGLEV_STAT_NO_ROUTE] = "drop_no_route",
		[MAGLEV_STAT_ENCAP_ERROR] = "drop_encap_error",
		[MAGLEV_STAT_TX_ERROR] = "drop_tx_error",
		[MAGLEV_STAT_TTL_EXPIRED] = "drop_ttl",
		[MAGLEV_STAT_TOO_BIG] = "drop_too_big",
		[MAGLEV_STAT_ICMP_FORWARDED] = "icmp_forwarded",
		[MAGLEV_STAT_SC_CARRIED] = "sc_carried",
		[MAGLEV_STAT_SPILLED] = "spilled",
	};

	return stat <= MAGLEV_STAT_MAX ? names[stat] : NULL;
}

int slowpath_nl_stats(struct slowpath_nl *nl, struct slowpath_stats *out)
{
	memset(out, 0, sizeof(*out));
	return sp_transact(nl, sp_msg(nl, MAGLEV_CMD_STATS_GET, 0), sp_stats_cb, out);
}
