// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The datapath read back and compared with the registry, a few VIPs each
 * tick (a full pass every READBACK_PASS_MS, longer for many VIPs): the
 * VIP's entry (id, encap, GUE port, second chance), its table by backend
 * address (the digest of drift.c over the addresses the backend map holds,
 * against the registry's digest) and each backend's entry (address,
 * generation, flags). Never while
 * a commit or a table swap is under way: the datapath holds a mix then, by
 * design. A result holds for the table generation it was read at; a VIP
 * rebuilt since is not reported until it is read again.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>
#include <bpf/bpf.h>

#include "core/log.h"
#include "datapath/drift.h"
#include "datapath/readback.h"
#include "datapath/table_swap.h"
#include "metrics/labels.h"

/* The tick of core/main.c: VIPs per tick spread a pass over READBACK_PASS_MS. */
#define TICK_MS 100

struct result {
	struct maglev_vip_key key;
	uint64_t table_gen; /* the VIP's when read back */
	bool valid;
	char what[160]; /* "" when the datapath agrees */
};

static struct result res[MAGLEV_MAX_VIPS];
static uint32_t cursor;
static uint64_t passes;
static bool logged[MAGLEV_MAX_VIPS]; /* this drift is logged already */

/* One VIP's read-back (one daemon thread uses these). */
static uint32_t table[MAGLEV_TABLE_SIZE];
static struct ctl_addr dp_addr[MAGLEV_MAX_BACKENDS];
static const struct ctl_addr *addr_of[MAGLEV_MAX_BACKENDS];
static bool looked[MAGLEV_MAX_BACKENDS];
static uint32_t touched[MAGLEV_TABLE_SIZE];

static const char *flags_name(uint8_t f)
{
	if (f & MAGLEV_BACKEND_F_UP)
		return "UP";
	return f & MAGLEV_BACKEND_F_DRAIN ? "DRAIN" : "none";
}

/* The backend map's entry for idx, read once per VIP. */
static void look_up(struct daemon *d, uint32_t idx, uint32_t *n)
{
	struct maglev_backend mb;

	if (idx >= MAGLEV_MAX_BACKENDS || looked[idx])
		return;
	looked[idx] = true;
	touched[(*n)++] = idx;
	if (idx && !maglev_dp_backend_get(d->dp, idx, &mb) && mb.family) {
		dp_addr[idx].family = mb.family;
		memcpy(dp_addr[idx].addr, mb.addr, sizeof(dp_addr[idx].addr));
		addr_of[idx] = &dp_addr[idx];
	}
}

static void table_check(struct daemon *d, const struct vip *v, char *what, size_t len)
{
	uint32_t i, n = 0;
	uint64_t h;

	if (maglev_dp_table_read(d->dp, v->id, table)) {
		snprintf(what, len, "no table in the datapath");
		return;
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		look_up(d, table[i], &n);
	h = drift_slots_digest(table, addr_of);
	for (i = 0; i < n; i++) {
		looked[touched[i]] = false;
		addr_of[touched[i]] = NULL;
	}
	if (h != v->digest)
		snprintf(what, len,
			 "table digest %016" PRIx64 " in the datapath, %016" PRIx64
			 " in the registry",
			 h, v->digest);
}

static void backends_check(struct daemon *d, const struct vip *v, char *what, size_t len)
{
	char name[CTL_ADDR_STRLEN];
	struct maglev_backend mb;
	struct hc_params hc;
	uint32_t i;

	vip_hc(v, &d->cfg.hc, &hc);
	for (i = 0; i < v->nbe; i++) {
		const struct be *b = &v->bes[i];
		uint8_t want = registry_be_flags(b, hc.on_fail);

		ctl_format_addr(&b->addr, name, sizeof(name));
		if (maglev_dp_backend_get(d->dp, b->idx, &mb) || mb.family != b->addr.family ||
		    memcmp(mb.addr, b->addr.addr, sizeof(mb.addr)) || mb.gen != b->gen) {
			snprintf(what, len, "backend %s: its entry (index %u) names another", name,
				 b->idx);
			return;
		}
		if (mb.flags != want) {
			snprintf(what, len, "backend %s: %s in the datapath, %s in the registry",
				 name, flags_name(mb.flags), flags_name(want));
			return;
		}
	}
}

static void vip_check(struct daemon *d, const struct vip *v, char *what, size_t len)
{
	struct maglev_vip_info info;
	int fd = maglev_dp_map_fd(d->dp, "maglev_vips");

	what[0] = '\0';
	if (fd < 0 || bpf_map_lookup_elem(fd, &v->key, &info)) {
		snprintf(what, len, "no VIP entry in the datapath");
		return;
	}
	if (info.vip_id != v->id || info.encap != v->encap || ntohs(info.gue_port) != v->gue_port ||
	    !(info.flags & MAGLEV_VIP_F_SECOND_CHANCE) != !v->second_chance) {
		snprintf(what, len, "VIP entry: id %u, encap %u, GUE port %u, flags %#x",
			 info.vip_id, info.encap, ntohs(info.gue_port), info.flags);
		return;
	}
	table_check(d, v, what, len);
	if (!what[0])
		backends_check(d, v, what, len);
}

void readback_tick(struct daemon *d)
{
	char name[CTL_ADDR_STRLEN];
	uint32_t n, done = 0;

	if (!d->reg || !d->reg->nvips || daemon_commit_busy() || table_swap_pending())
		return;
	n = (d->reg->nvips * TICK_MS + READBACK_PASS_MS - 1) / READBACK_PASS_MS;
	if (n > READBACK_MAX_PER_TICK)
		n = READBACK_MAX_PER_TICK;
	while (done < n) {
		const struct vip *v = d->reg->vips[cursor];
		struct result *r = &res[cursor];

		if (v) {
			vip_check(d, v, r->what, sizeof(r->what));
			r->key = v->key;
			r->table_gen = v->table_gen;
			r->valid = true;
			if (r->what[0] && !logged[cursor]) {
				ctl_format_vip(&v->key, name, sizeof(name));
				log_warn("datapath drift: VIP %s: %s", name, r->what);
			}
			logged[cursor] = r->what[0];
			done++;
		}
		if (++cursor == MAGLEV_MAX_VIPS) {
			cursor = 0;
			passes++;
		}
	}
}

/* v's result, if read back at its current table. */
static const struct result *result_of(const struct vip *v)
{
	const struct result *r = &res[v->id];

	if (!r->valid || r->table_gen != v->table_gen || memcmp(&r->key, &v->key, sizeof(v->key)))
		return NULL;
	return r;
}

const char *readback_vip(const struct vip *v)
{
	const struct result *r = result_of(v);

	return r ? r->what : NULL;
}

uint32_t readback_drift_vips(const struct daemon *d)
{
	uint32_t i, n = 0;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const char *w = d->reg->vips[i] ? readback_vip(d->reg->vips[i]) : NULL;

		n += w && w[0];
	}
	return n;
}

json_object *readback_json(const struct daemon *d)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	char name[CTL_ADDR_STRLEN];
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		const char *w = v ? readback_vip(v) : NULL;
		json_object *e;

		if (!w || !w[0])
			continue;
		e = json_object_new_object();
		ctl_format_vip(&v->key, name, sizeof(name));
		json_object_object_add(e, "vip", json_object_new_string(name));
		json_object_object_add(e, "differs", json_object_new_string(w));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "pass_ms", json_object_new_int64(READBACK_PASS_MS));
	json_object_object_add(o, "passes", json_object_new_uint64(passes));
	json_object_object_add(o, "drift_vips",
			       json_object_new_int64(json_object_array_length(arr)));
	json_object_object_add(o, "drift", arr);
	return o;
}

void readback_metrics(const struct daemon *d, FILE *f)
{
	char name[METRICS_VIP_LABELS_LEN];
	uint32_t i;

	fprintf(f,
		"# HELP maglev_datapath_drift_vips VIPs whose datapath (VIP entry, table, "
		"backend entries read back) differs from the registry.\n"
		"# TYPE maglev_datapath_drift_vips gauge\nmaglev_datapath_drift_vips %u\n"
		"# HELP maglev_datapath_readback_passes_total Full passes of the datapath "
		"read-back.\n# TYPE maglev_datapath_readback_passes_total counter\n"
		"maglev_datapath_readback_passes_total %llu\n"
		"# HELP maglev_vip_datapath_drift 1 if the VIP's datapath differs from the "
		"registry, 0 if it agrees (VIPs not read back since their last change: none).\n"
		"# TYPE maglev_vip_datapath_drift gauge\n",
		readback_drift_vips(d), (unsigned long long)passes);
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		const char *w = v ? readback_vip(v) : NULL;

		if (!w)
			continue;
		metrics_vip_labels(&v->key, name, sizeof(name));
		fprintf(f, "maglev_vip_datapath_drift{%s} %d\n", name, w[0] != 0);
	}
}
