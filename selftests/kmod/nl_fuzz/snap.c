// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads back everything a client can see (configuration, every VIP and
 * backend, lookups of probe flows) with raw requests, compares snapshots,
 * resets the namespace to the baseline, and checks every baseline table
 * slot against the userspace pick.
 */
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "snap.h"

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

int fz_vips_cb(const struct nlmsghdr *nlh, void *data)
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

void fz_put_key(struct nlmsghdr *nlh, const struct maglev_vip_key *k)
{
	mnl_attr_put_u8(nlh, MAGLEV_A_FAMILY, k->family);
	mnl_attr_put(nlh, MAGLEV_A_ADDR, k->family == MAGLEV_AF_INET ? 4 : 16, k->addr);
	mnl_attr_put_u16(nlh, MAGLEV_A_PORT, k->port);
	mnl_attr_put_u8(nlh, MAGLEV_A_PROTO, k->proto);
}

int fz_lookup(struct fz_sock *s, const struct maglev_flow_key *f, struct slowpath_lookup *out)
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

int fz_snapshot(struct fz_sock *s, const struct fz_base *b, struct fz_snap *snap)
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

void fz_snap_diff(const struct fz_snap *a, const struct fz_snap *b)
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
int fz_reset(struct fz_sock *s, struct slowpath_nl *nl, const struct fz_base *b)
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
int fz_check_base_lookups(struct fz_sock *s, const struct fz_base *b)
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
