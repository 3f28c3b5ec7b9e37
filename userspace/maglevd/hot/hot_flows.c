// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hot flows (issue 35). The datapath keeps, per CPU and per VIP, buckets of
 * (key, sampled count, sampled bytes) that a key holds until another takes
 * the bucket (include/maglev_hot.h). Each interval this file reads them all
 * and takes what each bucket gained since the last read: the count and
 * bytes it grew by while the same key held it, all of them when a new key
 * took it. On one CPU a key may sit in both rows: the larger gain counts
 * (HeavyKeeper's estimate is the larger of its rows); over CPUs the gains
 * add. Times sample_every over the interval, that is the key's packets and
 * bits per second; the VIP's own counters (exact) give its share.
 *
 * Rates are decayed, not windowed: each interval a key's estimate moves
 * half way to what the interval measured (a key not seen moves half way to
 * 0), and so does the VIP's packet rate the share divides by; a key's or
 * the VIP's first measure is taken whole, so a new heavy key shows at its
 * rate at once. HOT_KEEP keys per VIP and kind are kept, the highest.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ctl_proto.h"
#include "hot/hot_flows.h"
#include "metrics/labels.h"
#include "model/hot_threshold.h"

#define HOT_KEEP      256
#define HOT_DECAY     0.5 /* weight of the newest interval */
#define HOT_FORGET    0.5 /* packets/s below which a kept key is dropped */
#define HOT_MIN_INTV  900 /* ms between reads, at least */
#define HOT_REARM_PCT 0.9 /* a key over the threshold is logged again once below 90% of it */

struct hot_key {
	struct maglev_flow_key key; /* a source: src and family only */
	double pps, bps;
	uint32_t backend_idx;
	bool over; /* above the threshold, logged */
};

struct hot_vip {
	uint32_t id;
	bool used;
	uint64_t last_packets; /* the VIP's own counter at the last read */
	double vip_pps;
	bool vip_measured;	     /* vip_pps holds a measure */
	struct maglev_hot_vip *prev; /* last read, per CPU */
	struct hot_key keys[HOT_BY_MAX][HOT_KEEP];
	int nkeys[HOT_BY_MAX];
	uint64_t over_total[HOT_BY_MAX]; /* threshold crossings */
};

static struct hot_vip *vips[MAGLEV_MAX_VIPS];
static struct maglev_hot_vip *cur;
static uint64_t last_ms;
static uint32_t sample_every; /* what the datapath samples at; 0: off */

int hot_flows_apply(struct daemon *d, char *err, size_t errlen)
{
	uint32_t every = d->cfg.hot_flows ? d->cfg.hot_flows_sample : 0;
	int r = maglev_dp_hot_set(d->dp, every);

	if (r == -ENOSPC) {
		snprintf(err, errlen,
			 "hot_flows on takes a restart: the datapath's trackers were sized "
			 "for no VIP at start");
		return r;
	}
	if (r) {
		snprintf(err, errlen, "hot flows: %s", strerror(-r));
		return r;
	}
	if (every != sample_every) {
		uint32_t i;

		/* Counts under another rate are not comparable. */
		for (i = 0; i < MAGLEV_MAX_VIPS; i++)
			if (vips[i])
				vips[i]->used = false;
	}
	sample_every = every;
	return 0;
}

static bool key_eq(const struct maglev_flow_key *a, const struct maglev_flow_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* This interval's gain of each key, by kind: open addressing on the key. */
struct gain {
	struct maglev_flow_key key;
	uint64_t count, bytes;
	uint32_t backend_idx;
	bool used;
};

struct gains {
	struct gain *g;
	size_t cap, n;
};

static uint64_t key_hash(const struct maglev_flow_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < sizeof(*k); i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static struct gain *gain_slot(struct gains *gs, const struct maglev_flow_key *k)
{
	size_t i = key_hash(k) & (gs->cap - 1);

	while (gs->g[i].used && !key_eq(&gs->g[i].key, k))
		i = (i + 1) & (gs->cap - 1);
	if (!gs->g[i].used) {
		gs->g[i].used = true;
		gs->g[i].key = *k;
		gs->n++;
	}
	return &gs->g[i];
}

static int gains_init(struct gains *gs, size_t n)
{
	gs->cap = 1;
	while (gs->cap < 2 * n)
		gs->cap <<= 1;
	gs->n = 0;
	gs->g = calloc(gs->cap, sizeof(*gs->g));
	return gs->g ? 0 : -ENOMEM;
}

/* A bucket's key as a hot_key's: flows whole, sources by address. */
static void bucket_key(int by, const void *bucket, struct maglev_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	if (by == HOT_BY_FLOW) {
		*k = ((const struct maglev_hot_flow *)bucket)->key;
	} else {
		const struct maglev_hot_src *s = bucket;

		memcpy(k->src, s->addr, sizeof(k->src));
		k->family = s->family;
	}
}

/* The gains of one CPU's buckets since prev (NULL: everything counts),
 * the larger of a key's rows, added to gs; cpu: scratch of 2 x
 * MAGLEV_HOT_BUCKETS.
 */
static void cpu_gains(int by, const struct maglev_hot_vip *now, const struct maglev_hot_vip *prev,
		      struct gains *cpu, struct gains *gs)
{
	struct maglev_flow_key keys[MAGLEV_HOT_BUCKETS];
	uint64_t dc[MAGLEV_HOT_BUCKETS], db[MAGLEV_HOT_BUCKETS];
	uint32_t be[MAGLEV_HOT_BUCKETS];
	int i, j;

	for (i = 0; i < MAGLEV_HOT_BUCKETS; i++) {
		const void *b = by == HOT_BY_FLOW ? (const void *)&now->flow[i] : &now->src[i];
		const void *p = !prev		    ? NULL
				: by == HOT_BY_FLOW ? (const void *)&prev->flow[i]
						    : &prev->src[i];
		uint32_t count = by == HOT_BY_FLOW ? now->flow[i].count : now->src[i].count;
		uint64_t bytes = by == HOT_BY_FLOW ? now->flow[i].bytes : now->src[i].bytes;
		uint32_t pcount = 0;
		uint64_t pbytes = 0;
		struct maglev_flow_key pk;

		bucket_key(by, b, &keys[i]);
		be[i] = by == HOT_BY_FLOW ? now->flow[i].backend_idx : now->src[i].backend_idx;
		dc[i] = db[i] = 0;
		if (!count)
			continue;
		if (p) {
			bucket_key(by, p, &pk);
			pcount = by == HOT_BY_FLOW ? prev->flow[i].count : prev->src[i].count;
			pbytes = by == HOT_BY_FLOW ? prev->flow[i].bytes : prev->src[i].bytes;
			if (!pcount || !key_eq(&pk, &keys[i]))
				pcount = 0, pbytes = 0;
		}
		/* Collisions take counts off a held bucket: no gain then. */
		dc[i] = count > pcount ? count - pcount : 0;
		db[i] = bytes > pbytes ? bytes - pbytes : 0;
	}
	/* The same key in both rows: the larger gain counts (one table of
	 * this CPU's keys, so each bucket is hashed once).
	 */
	memset(cpu->g, 0, cpu->cap * sizeof(*cpu->g));
	cpu->n = 0;
	for (i = 0; i < MAGLEV_HOT_BUCKETS; i++) {
		struct gain *g;

		if (!dc[i])
			continue;
		g = gain_slot(cpu, &keys[i]);
		if (dc[i] > g->count) {
			g->count = dc[i];
			g->bytes = db[i];
			g->backend_idx = be[i];
		}
	}
	for (j = 0; j < (int)cpu->cap; j++) {
		struct gain *g;

		if (!cpu->g[j].used)
			continue;
		g = gain_slot(gs, &cpu->g[j].key);
		g->count += cpu->g[j].count;
		g->bytes += cpu->g[j].bytes;
		g->backend_idx = cpu->g[j].backend_idx;
	}
}

static int cmp_key(const void *a, const void *b)
{
	const struct hot_key *x = a, *y = b;

	return x->pps < y->pps ? 1 : x->pps > y->pps ? -1 : 0;
}

static void fmt_key(int by, const struct maglev_flow_key *k, char *buf, size_t len)
{
	struct ctl_addr a = {.family = k->family};
	char src[CTL_ADDR_STRLEN];

	memcpy(a.addr, k->src, sizeof(a.addr));
	ctl_format_addr(&a, src, sizeof(src));
	if (by == HOT_BY_SOURCE) {
		snprintf(buf, len, "%s", src);
		return;
	}
	snprintf(buf, len, k->family == MAGLEV_AF_INET6 ? "[%s]:%u" : "%s:%u", src,
		 (unsigned)ntohs(k->sport));
}

static const char *const by_name[HOT_BY_MAX] = {"flow", "source"};

/* Fold this interval's gains into the decayed estimates of hv. */
static void fold(struct daemon *d, const struct vip *v, struct hot_vip *hv, int by,
		 const struct gains *gs, double dt)
{
	struct hot_key *ks = hv->keys[by];
	double thr = hot_threshold_pct(v->hot_threshold, d->cfg.hot_flows_threshold) / 100.0;
	size_t i;
	int k, n = hv->nkeys[by];

	for (k = 0; k < n; k++) {
		ks[k].pps *= 1 - HOT_DECAY;
		ks[k].bps *= 1 - HOT_DECAY;
	}
	for (i = 0; i < gs->cap; i++) {
		const struct gain *g = &gs->g[i];
		double pps, bps;

		if (!g->used)
			continue;
		pps = (double)g->count * sample_every / dt;
		bps = (double)g->bytes * sample_every * 8 / dt;
		for (k = 0; k < n && !key_eq(&ks[k].key, &g->key); k++)
			;
		if (k == n) {
			if (n == HOT_KEEP) {
				/* Full: the new key replaces the lowest if it is higher. */
				int lo = 0, j;

				for (j = 1; j < n; j++)
					if (ks[j].pps < ks[lo].pps)
						lo = j;
				if (ks[lo].pps >= pps * HOT_DECAY)
					continue;
				k = lo;
			} else {
				n++;
			}
			memset(&ks[k], 0, sizeof(ks[k]));
			ks[k].key = g->key;
			/* First seen (after the decay above): with the step
			 * below, its measure whole.
			 */
			ks[k].pps = pps * (1 - HOT_DECAY);
			ks[k].bps = bps * (1 - HOT_DECAY);
		}
		ks[k].pps += pps * HOT_DECAY;
		ks[k].bps += bps * HOT_DECAY;
		ks[k].backend_idx = g->backend_idx;
	}
	qsort(ks, (size_t)n, sizeof(*ks), cmp_key);
	while (n > 0 && ks[n - 1].pps < HOT_FORGET)
		n--;
	hv->nkeys[by] = n;
	if (thr <= 0 || hv->vip_pps <= 0)
		return;
	for (k = 0; k < n; k++) {
		double share = ks[k].pps / hv->vip_pps;

		if (!ks[k].over && share >= thr) {
			char vname[CTL_ADDR_STRLEN], kname[CTL_ADDR_STRLEN + 8];

			ctl_format_vip(&v->key, vname, sizeof(vname));
			fmt_key(by, &ks[k].key, kname, sizeof(kname));
			log_warn("hot %s: %s holds %.1f%% of VIP %s's packets (%.0f/s; threshold "
				 "%.0f%%)",
				 by_name[by], kname, share * 100, vname, ks[k].pps, thr * 100);
			ks[k].over = true;
			hv->over_total[by]++;
		} else if (ks[k].over && share < thr * HOT_REARM_PCT) {
			ks[k].over = false;
		}
	}
}

static void read_vip(struct daemon *d, const struct vip *v, double dt)
{
	struct hot_vip *hv = vips[v->id];
	int ncpus = maglev_dp_ncpus(d->dp), c, by;
	struct maglev_vip_stats s;
	bool idle;

	if (!hv) {
		hv = calloc(1, sizeof(*hv));
		if (!hv)
			return;
		hv->prev = calloc((size_t)ncpus, sizeof(*hv->prev));
		if (!hv->prev) {
			free(hv);
			return;
		}
		vips[v->id] = hv;
	}
	if (hv->id != v->id || !hv->used) {
		/* A new VIP on this id, or a new rate: start over. */
		memset(hv->keys, 0, sizeof(hv->keys));
		memset(hv->nkeys, 0, sizeof(hv->nkeys));
		hv->vip_pps = 0;
		hv->vip_measured = false;
		hv->id = v->id;
	}
	if (maglev_dp_vip_stats(d->dp, v->id, &s))
		return;
	/* Nothing forwarded since the last read, nothing sampled: the
	 * estimates only decay, and the trackers (ncpus x 12 KiB) stay unread.
	 */
	idle = hv->used && s.packets == hv->last_packets;
	if (!idle && maglev_dp_hot_read(d->dp, v->id, cur))
		return;
	if (hv->used && dt > 0) {
		double pps = (double)(s.packets - hv->last_packets) / dt;

		hv->vip_pps =
			hv->vip_measured ? hv->vip_pps * (1 - HOT_DECAY) + pps * HOT_DECAY : pps;
		hv->vip_measured = true;
		for (by = 0; by < HOT_BY_MAX; by++) {
			struct gains gs = {0}, cpu;

			if (gains_init(&gs, idle ? 0 : (size_t)ncpus * MAGLEV_HOT_BUCKETS))
				continue;
			if (!idle && !gains_init(&cpu, MAGLEV_HOT_BUCKETS)) {
				for (c = 0; c < ncpus; c++)
					cpu_gains(by, &cur[c], &hv->prev[c], &cpu, &gs);
				free(cpu.g);
			}
			fold(d, v, hv, by, &gs, dt);
			free(gs.g);
		}
	}
	if (idle)
		return;
	memcpy(hv->prev, cur, (size_t)ncpus * sizeof(*cur));
	hv->last_packets = s.packets;
	hv->used = true;
}

void hot_flows_tick(struct daemon *d)
{
	uint64_t now = mono_ms();
	double dt = last_ms ? (double)(now - last_ms) / 1e3 : 0;
	uint32_t i;

	if (!sample_every || (last_ms && now - last_ms < HOT_MIN_INTV))
		return;
	if (!cur) {
		cur = calloc((size_t)maglev_dp_ncpus(d->dp), sizeof(*cur));
		if (!cur)
			return;
	}
	last_ms = now;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (v) {
			read_vip(d, v, dt);
		} else if (vips[i]) {
			free(vips[i]->prev);
			free(vips[i]);
			vips[i] = NULL;
		}
	}
}

static const char *backend_name(const struct vip *v, uint32_t idx, char *buf, size_t len)
{
	uint32_t i;

	for (i = 0; i < v->nbe; i++)
		if (v->bes[i].idx == idx) {
			ctl_format_addr(&v->bes[i].addr, buf, len);
			return buf;
		}
	snprintf(buf, len, "-");
	return buf;
}

static json_object *vip_json(const struct vip *v, const struct hot_vip *hv, enum hot_by by, int k)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	char name[CTL_ADDR_STRLEN + 8];
	int i, n = hv ? hv->nkeys[by] : 0;

	ctl_format_vip(&v->key, name, sizeof(name));
	json_object_object_add(o, "vip", json_object_new_string(name));
	json_object_object_add(o, "pps", json_object_new_double(hv ? hv->vip_pps : 0));
	for (i = 0; i < n && i < k; i++) {
		const struct hot_key *h = &hv->keys[by][i];
		json_object *e = json_object_new_object();
		struct ctl_addr a = {.family = h->key.family};

		memcpy(a.addr, h->key.src, sizeof(a.addr));
		ctl_format_addr(&a, name, sizeof(name));
		json_object_object_add(e, "source", json_object_new_string(name));
		if (by == HOT_BY_FLOW) {
			json_object_object_add(e, "sport",
					       json_object_new_int(ntohs(h->key.sport)));
			json_object_object_add(e, "dport",
					       json_object_new_int(ntohs(h->key.dport)));
			json_object_object_add(e, "proto",
					       json_object_new_string(h->key.proto == IPPROTO_UDP
									      ? "udp"
									      : "tcp"));
		}
		json_object_object_add(e, "pps", json_object_new_double(h->pps));
		json_object_object_add(e, "bps", json_object_new_double(h->bps));
		json_object_object_add(
			e, "share",
			json_object_new_double(hv->vip_pps > 0 ? h->pps / hv->vip_pps : 0));
		json_object_object_add(e, "backend",
				       json_object_new_string(backend_name(v, h->backend_idx, name,
									   sizeof(name))));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "top", arr);
	return o;
}

json_object *hot_flows_json(struct daemon *d, const struct vip *v, enum hot_by by, int k)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	uint32_t i;

	json_object_object_add(o, "enabled", json_object_new_boolean(sample_every != 0));
	json_object_object_add(o, "sample_every", json_object_new_int((int32_t)sample_every));
	json_object_object_add(o, "by", json_object_new_string(by_name[by]));
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *x = d->reg->vips[i];

		if (x && (!v || x == v))
			json_object_array_add(
				arr, vip_json(x, vips[i] && vips[i]->used ? vips[i] : NULL, by, k));
	}
	json_object_object_add(o, "vips", arr);
	return o;
}

/* One gauge of the top k keys of every VIP by kind: the share (pps false)
 * or the packets per second.
 */
static void top_series(struct daemon *d, FILE *f, int by, bool pps, uint32_t k)
{
	static const char *const help[HOT_BY_MAX] = {"flows (client 5-tuples)",
						     "client source addresses"};
	const char *name = pps ? "packets_per_second" : "share";
	uint32_t i;
	int r;

	fprintf(f,
		"# HELP maglev_hot_%s_%s %s of the VIP's top %s, estimated from samples.\n"
		"# TYPE maglev_hot_%s_%s gauge\n",
		by_name[by], name, pps ? "Packets per second" : "Share of the VIP's packets",
		help[by], by_name[by], name);
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		const struct hot_vip *hv = vips[i];
		char vname[METRICS_VIP_LABELS_LEN], kname[CTL_ADDR_STRLEN + 8];

		if (!v || !hv || !hv->used || hv->vip_pps <= 0)
			continue;
		metrics_vip_labels(&v->key, vname, sizeof(vname));
		for (r = 0; r < hv->nkeys[by] && r < (int)k; r++) {
			const struct hot_key *h = &hv->keys[by][r];

			fmt_key(by, &h->key, kname, sizeof(kname));
			fprintf(f, "maglev_hot_%s_%s{%s,rank=\"%d\",%s=\"%s\"} %.4g\n", by_name[by],
				name, vname, r + 1, by_name[by], kname,
				pps ? h->pps : h->pps / hv->vip_pps);
		}
	}
}

void hot_flows_metrics(struct daemon *d, FILE *f)
{
	uint32_t i;
	int by;

	if (!sample_every)
		return;
	/* Labelled by rank: at most hot_flows_metrics_top series per VIP,
	 * kind and gauge at any time (the key is a label too, so a new top
	 * key is a new series).
	 */
	for (by = 0; by < HOT_BY_MAX; by++) {
		top_series(d, f, by, false, d->cfg.hot_flows_metrics_top);
		top_series(d, f, by, true, d->cfg.hot_flows_metrics_top);
	}
	fprintf(f, "# HELP maglev_hot_threshold_exceeded_total Times a flow or source went above "
		   "hot_flows_threshold percent of its VIP's packets.\n"
		   "# TYPE maglev_hot_threshold_exceeded_total counter\n");
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		char vname[METRICS_VIP_LABELS_LEN];

		if (!v || !vips[i])
			continue;
		metrics_vip_labels(&v->key, vname, sizeof(vname));
		for (by = 0; by < HOT_BY_MAX; by++)
			fprintf(f, "maglev_hot_threshold_exceeded_total{%s,by=\"%s\"} %llu\n",
				vname, by_name[by], (unsigned long long)vips[i]->over_total[by]);
	}
}
