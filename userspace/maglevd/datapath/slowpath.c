// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Mirror of the datapath's VIPs, backends and tables into the optional
 * slow-path kernel module (generic netlink, userspace/lib/slowpath_nl.h),
 * so what XDP hands to the stack is forwarded with the same tables. The
 * module is optional: when it is not loaded nothing happens, and maglevd
 * looks for it again every few seconds. Any error closes the handle; the
 * next attempt pushes everything again, so the module never stays half
 * updated for longer than that.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/bounded.h"
#include "core/log.h"
#include "datapath/slowpath.h"
#include "slowpath_nl.h"

#define SLOWPATH_RETRY_MS 5000

static struct slowpath_nl *nl;
static uint64_t next_try_ms;
static bool absent_logged;

static void fail(const char *what, int r)
{
	log_warn("slow-path module: %s: %s; pushing everything again shortly", what,
		 nl ? slowpath_nl_errmsg(nl) : strerror(-r));
	slowpath_nl_close(nl);
	nl = NULL;
	next_try_ms = mono_ms() + SLOWPATH_RETRY_MS;
}

static void vip_info(const struct vip *v, struct maglev_vip_info *info)
{
	memset(info, 0, sizeof(*info));
	info->vip_id = v->id;
	info->encap = v->encap;
	info->gue_port = v->encap == MAGLEV_ENCAP_GUE ? htons(v->gue_port) : 0;
}

static void backend_of(const struct be *b, struct maglev_backend *mb)
{
	memset(mb, 0, sizeof(*mb));
	memcpy(mb->addr, b->addr.addr, sizeof(mb->addr));
	mb->family = b->addr.family;
	mb->gen = b->gen;
}

void slowpath_config(const struct maglev_config *mc)
{
	struct slowpath_config c = {0};
	int r;

	if (!nl)
		return;
	c.seed.k0 = mc->seed_k0;
	c.seed.k1 = mc->seed_k1;
	/* The same outer sources as XDP: per flow inside the prefix, so the
	 * backends' RSS spreads slow-path flows too.
	 */
	c.src4 = mc->src4_prefix;
	c.src4_plen = mc->src4_plen;
	memcpy(c.src6, mc->src6_prefix, sizeof(c.src6));
	c.src6_plen = mc->src6_plen;
	r = slowpath_nl_config_set(nl, &c);
	if (r)
		fail("config", r);
}

void slowpath_backend_set(const struct be *b)
{
	struct maglev_backend mb;
	int r;

	if (!nl)
		return;
	backend_of(b, &mb);
	r = slowpath_nl_backend_set(nl, b->idx, &mb);
	if (r)
		fail("backend set", r);
}

void slowpath_backend_del(uint32_t idx)
{
	int r;

	if (!nl)
		return;
	r = slowpath_nl_backend_del(nl, idx);
	if (r && r != -ENOENT)
		fail("backend del", r);
}

void slowpath_table(const struct vip *v, const uint32_t *table, const uint32_t *prev)
{
	struct maglev_vip_info info;
	int r;

	if (!nl)
		return;
	vip_info(v, &info);
	r = slowpath_nl_vip_set(nl, &v->key, &info);
	if (!r)
		r = slowpath_nl_table_push_prev(nl, &v->key, v->table_gen, table, prev,
						MAGLEV_TABLE_SIZE);
	if (r)
		fail("VIP table", r);
}

void slowpath_vip_del(const struct vip *v)
{
	uint32_t i;
	int r;

	if (!nl)
		return;
	r = slowpath_nl_vip_del(nl, &v->key);
	if (r && r != -ENOENT) {
		fail("VIP del", r);
		return;
	}
	for (i = 0; i < v->nbe && nl; i++)
		slowpath_backend_del(v->bes[i].idx);
}

void slowpath_overcap(const uint8_t *marked)
{
	int r;

	if (!nl)
		return;
	r = slowpath_nl_overcap_set(nl, marked, MAGLEV_MAX_BACKENDS);
	if (r)
		fail("over-cap marks", r);
}

/* Everything, after (re)opening: config, VIPs, backends, live tables,
 * bounded-load marks (none clears what a previous maglevd left).
 */
static void sync_all(struct daemon *d)
{
	static uint32_t table[MAGLEV_TABLE_SIZE], prev[MAGLEV_TABLE_SIZE];
	struct slowpath_vip_state *list;
	struct maglev_config mc;
	int n, i;
	uint32_t j;

	if (!maglev_dp_get_config(d->dp, &mc))
		slowpath_config(&mc);
	list = calloc(MAGLEV_MAX_VIPS, sizeof(*list));
	if (!list || !nl) {
		free(list);
		return;
	}
	n = slowpath_nl_vip_list(nl, list, MAGLEV_MAX_VIPS);
	if (n < 0) {
		free(list);
		fail("VIP list", n);
		return;
	}
	for (i = 0; i < n && i < MAGLEV_MAX_VIPS && nl; i++) {
		if (registry_find_vip(d->reg, &list[i].key))
			continue;
		if (slowpath_nl_vip_del(nl, &list[i].key))
			fail("VIP del", -EIO);
	}
	free(list);
	for (i = 0; i < MAGLEV_MAX_VIPS && nl; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v)
			continue;
		for (j = 0; j < v->nbe && nl; j++)
			slowpath_backend_set(&v->bes[j]);
		/* The previous owners too, while a second-chance window runs. */
		if (nl && !maglev_dp_table_read_prev(d->dp, v->id, table, prev))
			slowpath_table(v, table, v->sc_until_ms ? prev : NULL);
	}
	slowpath_overcap(bounded_marks());
	if (nl)
		log_info("slow-path module: in sync (%u VIP%s)", d->reg->nvips,
			 d->reg->nvips == 1 ? "" : "s");
}

void slowpath_tick(struct daemon *d)
{
	int r;

	if (nl || mono_ms() < next_try_ms)
		return;
	next_try_ms = mono_ms() + SLOWPATH_RETRY_MS;
	r = slowpath_nl_open(&nl);
	if (r) {
		nl = NULL;
		if (r != -ENOENT)
			log_warn("slow-path module: %s", strerror(-r));
		else if (!absent_logged)
			log_info("slow-path module not loaded: XDP handles everything it can; "
				 "fragments and IPv6 extension headers go up the stack unbalanced");
		absent_logged = true;
		return;
	}
	absent_logged = false;
	sync_all(d);
}

bool slowpath_counters(uint64_t out[MAGLEV_STAT_MAX + 1])
{
	struct slowpath_stats st;
	int r;

	if (!nl)
		return false;
	r = slowpath_nl_stats(nl, &st);
	if (r) {
		fail("counters", r);
		return false;
	}
	memcpy(out, st.cnt, sizeof(st.cnt));
	return true;
}

bool slowpath_in_sync(void)
{
	return nl != NULL;
}

void slowpath_close(void)
{
	slowpath_nl_close(nl);
	nl = NULL;
}
