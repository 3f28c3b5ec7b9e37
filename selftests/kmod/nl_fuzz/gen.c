// SPDX-License-Identifier: GPL-2.0-only
/*
 * Random requests for the module's commands: the attributes each command
 * reads, values drawn from classes (plausible, boundary, random length,
 * nested, unknown, reply-only, duplicated), and the near-valid requests
 * with at most one fault.
 */
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <netinet/in.h>

#include "base.h"
#include "gen.h"
#include "sock.h"

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
	[MAGLEV_CMD_OVERCAP_SET] = {0, {MAGLEV_A_OVERCAP}},
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

uint64_t fz_r(struct fz_gen *g, uint64_t n)
{
	return n ? kmod_rand(&g->rs) % n : 0;
}

int fz_pct(struct fz_gen *g, int pct)
{
	return (int)fz_r(g, 100) < pct;
}

uint64_t fz_pick64(struct fz_gen *g, const uint64_t *v, size_t n)
{
	return v[fz_r(g, n)];
}

void fz_rand_bytes(struct fz_gen *g, uint8_t *p, size_t n)
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
struct nlmsghdr *fz_random_request(struct fz_gen *g, void *buf, uint16_t family, uint8_t cmd)
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
