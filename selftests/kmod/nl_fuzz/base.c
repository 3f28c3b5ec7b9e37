// SPDX-License-Identifier: GPL-2.0-only
/*
 * The known-good baseline: three VIPs (IPv4 and IPv6, with and without a
 * table) and four backends, applied through the real client library, and
 * client flows toward a VIP, one per table slot when asked.
 */
#include <netinet/in.h>

#include "base.h"

const struct fz_base_vip fz_base_vips[FZ_NBASE_VIPS] = {
	{MAGLEV_AF_INET, "198.51.100.10", 53, IPPROTO_UDP, MAGLEV_ENCAP_IPIP, 0, 13, 7},
	{MAGLEV_AF_INET6, "2001:db8:100::10", 0, IPPROTO_TCP, MAGLEV_ENCAP_GUE, 6080, 17, 9},
	{MAGLEV_AF_INET, "198.51.100.11", 80, IPPROTO_TCP, MAGLEV_ENCAP_IPIP, 0, 0, 0},
};

const struct fz_base_be fz_base_bes[FZ_NBASE_BES] = {
	{1, MAGLEV_AF_INET, "203.0.113.1"},
	{2, MAGLEV_AF_INET, "203.0.113.2"},
	{3, MAGLEV_AF_INET6, "2001:db8:2::3"},
	{MAGLEV_GENL_BACKEND_MAX, MAGLEV_AF_INET, "203.0.113.255"},
};

struct maglev_vip_key fz_key(int family, const char *addr, uint16_t port, uint8_t proto)
{
	struct maglev_vip_key k = {.family = family, .proto = proto, .port = htons(port)};

	inet_pton(family == MAGLEV_AF_INET ? AF_INET : AF_INET6, addr, k.addr);
	return k;
}

struct maglev_vip_key fz_base_key(int i)
{
	return fz_key(fz_base_vips[i].family, fz_base_vips[i].addr, fz_base_vips[i].port,
		      fz_base_vips[i].proto);
}

/* A client flow toward a VIP (any port for an all-ports VIP). */
struct maglev_flow_key fz_flow(const struct maglev_vip_key *k, uint64_t *rs)
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
int fz_slot_flows(const struct maglev_seed *seed, const struct maglev_vip_key *k, uint32_t size,
		  uint64_t *rs, struct maglev_flow_key *flows)
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

/* The baseline, through the real client library. */
int fz_base_apply(struct slowpath_nl *nl, const struct fz_base *b)
{
	struct slowpath_config cfg = {.seed = b->seed, .src6_plen = 112};
	int i, err;

	inet_pton(AF_INET, "192.0.2.1", &cfg.src4);
	inet_pton(AF_INET6, "2001:db8:5::", cfg.src6);
	err = slowpath_nl_config_set(nl, &cfg);
	if (!err) /* no backend marked over cap */
		err = slowpath_nl_overcap_set(nl, NULL, 0);
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
