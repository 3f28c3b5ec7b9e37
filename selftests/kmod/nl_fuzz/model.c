// SPDX-License-Identifier: GPL-2.0-only
/*
 * Table staging against the model: one random staging request (or a VIP
 * delete / re-create) with the errno the model predicts, and the check that
 * a VIP's live table reads back and looks up slot by slot as the model
 * holds it.
 */
#include <libmnl/libmnl.h>

#include "kmsg.h"
#include "model.h"
#include "oracle.h"

/* The live table of one VIP as the module reports it and looks it up. */
int fz_model_verify(FIXTURE_DATA(fz) * self, const struct fz_model_vip *mv,
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
int fz_model_step(FIXTURE_DATA(fz) * self, struct fz_model_vip *mv, int nvips,
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
