// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Text output of maglevctl: aligned columns, one object per line. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hc_fields.h"
#include "maglevctl.h"

static const char *s_or(json_object *o, const char *key, const char *def)
{
	const char *s = jstr(o, key);

	return s ? s : def;
}

/* 1234567 -> "1.23M", for rates. */
static const char *human(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.2fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

static size_t arr_len(json_object *o, const char *key, json_object **arr)
{
	if (!json_object_object_get_ex(o, key, arr) || !json_object_is_type(*arr, json_type_array))
		return 0;
	return json_object_array_length(*arr);
}

void print_ok(const struct ctl_opts *o, json_object *resp)
{
}

/* "a b" from a JSON array of strings; "" when empty or absent. */
static void words(json_object *o, const char *key, char *buf, size_t len)
{
	json_object *arr;
	size_t i, n = arr_len(o, key, &arr), off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "",
					json_object_get_string(json_object_array_get_idx(arr, i)));
}

static void check_desc(json_object *chk, char *buf, size_t len)
{
	const char *type = s_or(chk, "type", "none");

	if (!strcmp(type, "none"))
		snprintf(buf, len, "none");
	else if (!strcmp(type, "http"))
		snprintf(buf, len, "http:%" PRId64 "%s=%" PRId64, jint(chk, "port"),
			 s_or(chk, "path", "/"), jint(chk, "status"));
	else if (!strcmp(type, "dns"))
		snprintf(buf, len, "dns:%" PRId64 ":%s", jint(chk, "port"),
			 s_or(chk, "dns_name", ""));
	else
		snprintf(buf, len, "%s:%" PRId64, type, jint(chk, "port"));
	if (!strcmp(s_or(chk, "on_fail", "repick"), "drain"))
		snprintf(buf + strlen(buf), len - strlen(buf), ",on-fail=drain");
}

void print_vip_list(const struct ctl_opts *o, json_object *resp)
{
	json_object *arr, *chk;
	size_t i, n = arr_len(resp, "vips", &arr);
	char c[160];

	printf("%-28s %-5s %8s %8s %9s %9s  %s\n", "VIP", "ENCAP", "BACKENDS", "IN TABLE",
	       "TABLE GEN", "REBUILD", "CHECK");
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		json_object_object_get_ex(v, "check", &chk);
		check_desc(chk, c, sizeof(c));
		printf("%-28s %-5s %8" PRId64 " %8" PRId64 " %9" PRId64 " %7.2fms  %s\n",
		       s_or(v, "vip", "?"), s_or(v, "encap", "?"), jint(v, "backends"),
		       jint(v, "in_table"), jint(v, "table_gen"), jdbl(v, "rebuild_ms"), c);
	}
}

static void print_backend_rows(json_object *arr, bool with_vip)
{
	size_t i, n = json_object_array_length(arr);

	if (with_vip)
		printf("%-28s ", "VIP");
	printf("%-40s %6s %-8s %-9s %6s %5s %8s\n", "BACKEND", "WEIGHT", "STATE", "DP FLAGS",
	       "INDEX", "GEN", "FLOWS");
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i), *fl;
		char flags[32] = "", flows[24] = "-";
		size_t j, nf = arr_len(b, "dp_flags", &fl);

		for (j = 0; j < nf; j++) {
			if (j)
				strcat(flags, ",");
			strncat(flags, json_object_get_string(json_object_array_get_idx(fl, j)),
				10);
		}
		/* null until the daemon has counted the connection table once */
		if (jstr(b, "flows"))
			snprintf(flows, sizeof(flows), "%" PRId64, jint(b, "flows"));
		if (with_vip)
			printf("%-28s ", s_or(b, "vip", "?"));
		printf("%-40s %6" PRId64 " %-8s %-9s %6" PRId64 " %5" PRId64 " %8s\n",
		       s_or(b, "backend", "?"), jint(b, "weight"), s_or(b, "state", "?"),
		       flags[0] ? flags : "-", jint(b, "index"), jint(b, "gen"), flows);
	}
}

void print_vip_show(const struct ctl_opts *o, json_object *resp)
{
	json_object *v, *chk, *bes;
	char c[160];
	size_t i;

	if (!json_object_object_get_ex(resp, "vip", &v))
		return;
	json_object_object_get_ex(v, "check", &chk);
	check_desc(chk, c, sizeof(c));
	printf("vip %s id %" PRId64 " encap %s", s_or(v, "vip", "?"), jint(v, "id"),
	       s_or(v, "encap", "?"));
	if (jint(v, "gue_port"))
		printf(" gue-port %" PRId64, jint(v, "gue_port"));
	if (jbool(v, "second_chance"))
		printf(" second-chance");
	printf(" placement %s", s_or(v, "placement", "?"));
	if (jint(v, "vnodes"))
		printf(" vnodes %" PRId64, jint(v, "vnodes"));
	if (jdbl(v, "balance_factor") > 0)
		printf(" balance-factor %g", jdbl(v, "balance_factor"));
	if (json_object_object_get_ex(v, "slow_start_ms", NULL))
		printf(" slow-start %" PRId64, jint(v, "slow_start_ms"));
	if (jstr(v, "hot_threshold"))
		printf(" hot-threshold %s", jstr(v, "hot_threshold"));
	printf("\n  check %s", c);
	for (i = 0; strcmp(c, "none") && i < HC_NFIELDS; i++) {
		const struct hc_field *f = hc_field_at(HC_ORDER_STATUS, i);

		if (f->show)
			printf(" %s %" PRId64 "%s", f->show, jint(chk, f->key), f->unit);
	}
	printf("\n  table generation %" PRId64 ", last rebuild %.2f ms, %" PRId64 " of %" PRId64
	       " backends in the table, digest %s\n\n",
	       jint(v, "table_gen"), jdbl(v, "rebuild_ms"), jint(v, "in_table"),
	       jint(v, "backends"), s_or(v, "digest", "?"));
	if (jdbl(v, "balance_factor") > 0)
		printf("  bounded loads: cap %" PRId64 " flows per backend, %" PRId64
		       " new flows spilled\n\n",
		       jint(v, "load_cap"), jint(v, "new_flow_spilled"));
	if (arr_len(v, "backend_list", &bes))
		print_backend_rows(bes, false);
}

void print_backend_list(const struct ctl_opts *o, json_object *resp)
{
	json_object *arr;

	arr_len(resp, "backends", &arr);
	if (!arr)
		return;
	print_backend_rows(arr, true);
	if (json_object_object_get_ex(resp, "flows_age_s", NULL))
		printf("FLOWS: connection-table entries, counted %.1f s ago\n",
		       jdbl(resp, "flows_age_s"));
	else
		printf("FLOWS: the connection table has not been counted yet\n");
}

/* The kernel module's counters: what XDP passed up and the module forwarded. */
static void print_slowpath(json_object *resp)
{
	json_object *sp;

	if (!json_object_object_get_ex(resp, "slowpath", &sp))
		return;
	if (!json_object_is_type(sp, json_type_object)) {
		printf("\nslow path: kernel module not loaded\n");
		return;
	}
	printf("\nslow path (kernel module):\n");
	json_object_object_foreach(sp, key, val)
	{
		printf("  %-20s %14" PRId64 "\n", key, json_object_get_int64(val));
	}
}

void print_stats(const struct ctl_opts *o, json_object *resp)
{
	json_object *vips, *reasons, *conn;
	size_t i, j, n = arr_len(resp, "vips", &vips);
	char a[16], b[16], c[16];

	printf("%-40s %-8s %14s %16s %12s %9s %10s %9s %12s\n", "VIP / BACKEND", "STATE", "PACKETS",
	       "BYTES", "NEW FLOWS", "PPS", "BPS", "FLOWS/S", "SPILLED");
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(vips, i), *bes;
		size_t nb = arr_len(v, "backends", &bes);

		/* SPILLED: new flows bounded loads placed past an over-cap pick. */
		printf("%-40s %-8s %14" PRId64 " %16" PRId64 " %12" PRId64
		       " %9s %10s %9s %12" PRId64 "\n",
		       s_or(v, "vip", "?"), "", jint(v, "packets"), jint(v, "bytes"),
		       jint(v, "new_flows"), human(jdbl(v, "pps"), a, sizeof(a)),
		       human(jdbl(v, "bps"), b, sizeof(b)),
		       human(jdbl(v, "new_flows_per_s"), c, sizeof(c)),
		       jint(v, "new_flow_spilled"));
		for (j = 0; j < nb; j++) {
			json_object *be = json_object_array_get_idx(bes, j);

			printf("  %-38s %-8s %14" PRId64 " %16" PRId64 " %12" PRId64 " %9s %10s\n",
			       s_or(be, "backend", "?"), s_or(be, "state", "?"),
			       jint(be, "packets"), jint(be, "bytes"), jint(be, "new_flows"),
			       human(jdbl(be, "pps"), a, sizeof(a)),
			       human(jdbl(be, "bps"), b, sizeof(b)));
		}
	}
	if (json_object_object_get_ex(resp, "reasons", &reasons)) {
		bool first = true;

		json_object_object_foreach(reasons, key, val)
		{
			if (!json_object_get_int64(val))
				continue;
			if (first)
				printf("\npackets by outcome:\n");
			first = false;
			printf("  %-20s %14" PRId64 "\n", key, json_object_get_int64(val));
		}
	}
	/* All of them, zeros too: conn_insert_skip/_fail at 0 is an answer. */
	if (json_object_object_get_ex(resp, "conn", &conn) &&
	    json_object_is_type(conn, json_type_object)) {
		printf("\nconnection table:\n");
		json_object_object_foreach(conn, key, val)
		{
			printf("  %-20s %14" PRId64 "\n", key, json_object_get_int64(val));
		}
	}
	print_slowpath(resp);
}

void print_health(const struct ctl_opts *o, json_object *resp)
{
	json_object *arr;
	size_t i, n = arr_len(resp, "backends", &arr);

	/* STREAK: the run of equal results rise/fall count (one of the two is
	 * always 0); UNKNOWN: a total since start, as no streak counts them.
	 */
	printf("%-28s %-40s %-8s %-10s %-7s %-8s %7s  %s\n", "VIP", "BACKEND", "STATE", "CHECK",
	       "LAST", "STREAK", "UNKNOWN", "ERROR");
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i);
		char chk[32], streak[24] = "-";

		if (jint(b, "port"))
			snprintf(chk, sizeof(chk), "%s:%" PRId64, s_or(b, "check", "?"),
				 jint(b, "port"));
		else
			snprintf(chk, sizeof(chk), "%s", s_or(b, "check", "?"));
		if (jint(b, "ok_streak"))
			snprintf(streak, sizeof(streak), "ok:%" PRId64, jint(b, "ok_streak"));
		else if (jint(b, "fail_streak"))
			snprintf(streak, sizeof(streak), "fail:%" PRId64, jint(b, "fail_streak"));
		printf("%-28s %-40s %-8s %-10s %-7s %-8s %7" PRId64 "  %s\n", s_or(b, "vip", "?"),
		       s_or(b, "backend", "?"), s_or(b, "state", "?"), chk,
		       s_or(b, "last_result", "-"), streak, jint(b, "checks_unknown"),
		       s_or(b, "last_error", ""));
	}
}

static void print_ranges(json_object *resp, const char *key, const char *head);

void print_table(const struct ctl_opts *o, json_object *resp)
{
	json_object *arr;
	size_t i, n = arr_len(resp, "backends", &arr);

	printf("table of %s: %" PRId64 " slots, generation %" PRId64 ", placement %s, digest %s\n",
	       s_or(resp, "vip", "?"), jint(resp, "size"), jint(resp, "table_gen"),
	       s_or(resp, "placement", "?"), s_or(resp, "digest", "?"));
	printf("%-40s %6s %-8s %8s %8s\n", "BACKEND", "WEIGHT", "STATE", "SLOTS", "SHARE");
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i);

		printf("%-40s %6" PRId64 " %-8s %8" PRId64 " %7.2f%%\n", s_or(b, "backend", "?"),
		       jint(b, "weight"), s_or(b, "state", "?"), jint(b, "slots"),
		       jdbl(b, "share") * 100);
	}
	if (jint(resp, "other_slots"))
		printf("%-40s %6s %-8s %8" PRId64 "\n", "(no backend)", "", "",
		       jint(resp, "other_slots"));
	if (jint(resp, "prev_slots"))
		printf("second chance: %" PRId64
		       " slots carry their previous owner for %.1f s more\n",
		       jint(resp, "prev_slots"), (double)jint(resp, "prev_window_ms") / 1000);
	/* --dump: each run of slots with the same backend. */
	print_ranges(resp, "ranges", "BACKEND");
	print_ranges(resp, "prev_ranges", "PREVIOUS OWNER (second chance)");
}

static void print_ranges(json_object *resp, const char *key, const char *head)
{
	json_object *arr;
	size_t i, n;

	n = arr_len(resp, key, &arr);
	if (n)
		printf("\n%-13s %s\n", "SLOTS", head);
	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(arr, i);
		char slots[32];

		if (jint(r, "first") == jint(r, "last"))
			snprintf(slots, sizeof(slots), "%" PRId64, jint(r, "first"));
		else
			snprintf(slots, sizeof(slots), "%" PRId64 "-%" PRId64, jint(r, "first"),
				 jint(r, "last"));
		printf("%-13s %s\n", slots, s_or(r, "backend", "(no backend)"));
	}
}

void print_lookup(const struct ctl_opts *o, json_object *resp)
{
	const char *src = s_or(resp, "source", "none");
	json_object *conn;

	if (!strcmp(src, "conn"))
		printf("backend %s (connection table)\n", s_or(resp, "backend", "?"));
	else if (!strcmp(src, "table"))
		printf("backend %s (Maglev table slot %" PRId64 ")\n", s_or(resp, "backend", "?"),
		       jint(resp, "slot"));
	else
		printf("no backend: the VIP's table is empty (packets are dropped)\n");
	if (json_object_object_get_ex(resp, "conn", &conn))
		printf("  connection entry: backend %s index %" PRId64 " gen %" PRId64 "%s\n",
		       s_or(conn, "backend", "(gone)"), jint(conn, "index"), jint(conn, "gen"),
		       jbool(conn, "usable") ? "" : " (stale: the next packet re-picks)");
	else
		printf("  no connection entry\n");
	printf("  table: slot %" PRId64 " -> %s\n", jint(resp, "slot"),
	       s_or(resp, "table_backend", "(empty)"));
}

/* Commits applied and failed; the failures by source and the last one. */
static void print_commits(json_object *resp)
{
	json_object *c = NULL, *by = NULL, *lf = NULL;

	json_object_object_get_ex(resp, "commits", &c);
	if (!c)
		return;
	printf("commits %" PRId64 " applied, %" PRId64 " failed", jint(c, "applied"),
	       jint(c, "failed"));
	if (jint(c, "failed") && json_object_object_get_ex(c, "failed_by_source", &by)) {
		const char *sep = " (";

		json_object_object_foreach(by, src, n)
		{
			if (!json_object_get_int64(n))
				continue;
			printf("%s%s %" PRId64, sep, src, json_object_get_int64(n));
			sep = ", ";
		}
		printf(")");
	}
	printf("\n");
	if (json_object_object_get_ex(c, "last_failure", &lf))
		printf("last commit failure: %s, %s: %s\n", s_or(lf, "time", "?"),
		       s_or(lf, "source", "?"), s_or(lf, "error", "?"));
}

/* Per interface XDP and next hop, seed, slow path, commits, last reload. */
static void print_status_detail(json_object *resp)
{
	json_object *ifs, *rl = NULL, *ad = NULL;
	size_t i, n = arr_len(resp, "interface_state", &ifs);

	for (i = 0; i < n; i++) {
		json_object *io = json_object_array_get_idx(ifs, i);

		printf("  %s: XDP %s", s_or(io, "name", "?"), s_or(io, "xdp", "?"));
		if (jint(io, "prog_id"))
			printf(" (prog %" PRId64 ")", jint(io, "prog_id"));
		printf(", next hop %s (%s)\n", s_or(io, "nexthop_mac", "?"),
		       s_or(resp, "nexthop", "?"));
	}
	if (jbool(resp, "default_seed"))
		printf("WARNING: the public default seed is in use: anyone can predict the "
		       "backend of a flow; set a secret seed in maglevd.conf\n");
	printf("slow-path module: %s\n", s_or(resp, "slowpath", "?"));
	json_object_object_get_ex(resp, "backend_admission", &ad);
	if (ad)
		printf("backends held %" PRId64 " (settle_ms %" PRId64 "), suppressed %" PRId64
		       " (damping, highest penalty %" PRId64 "), ramping %" PRId64
		       " (slow_start_ms %" PRId64 ")\n",
		       jint(ad, "held"), jint(ad, "settle_ms"), jint(ad, "suppressed"),
		       jint(ad, "max_penalty"), jint(ad, "ramping"), jint(ad, "slow_start_ms"));
	print_commits(resp);
	printf("reloads %" PRId64 " ok, %" PRId64 " failed\n", jint(resp, "reloads"),
	       jint(resp, "reload_failures"));
	json_object_object_get_ex(resp, "last_reload", &rl);
	if (!jstr(rl, "time"))
		printf("last reload: none\n");
	else if (jbool(rl, "ok"))
		printf("last reload: %s, ok\n", jstr(rl, "time"));
	else
		printf("last reload: %s, FAILED: %s\n", jstr(rl, "time"), s_or(rl, "error", "?"));
}

/* The "fleet" member of status: where the desired state comes from. */
static void print_fleet(json_object *resp)
{
	json_object *f = NULL;

	json_object_object_get_ex(resp, "fleet", &f);
	if (!jbool(f, "enabled")) {
		printf("fleet: off (local state file)\n");
		return;
	}
	printf("fleet: node %s, etcd %s, prefix %s: %s%s%s\n", s_or(f, "node", "?"),
	       s_or(f, "etcd", "?"), s_or(f, "prefix", "?"),
	       jbool(f, "connected") ? "connected" : "DISCONNECTED",
	       jbool(f, "connected") ? "" : ": ",
	       jbool(f, "connected") ? "" : s_or(f, "error", "?"));
	printf("fleet: applied revision %" PRId64 ", %" PRId64 " revisions applied, %" PRId64
	       " refused\n",
	       jint(f, "revision"), jint(f, "applied"), jint(f, "refused"));
	if (jstr(f, "refused_error"))
		printf("fleet: REFUSED revision %" PRId64 ": %s\n", jint(f, "refused_revision"),
		       jstr(f, "refused_error"));
	if (jstr(f, "endpoint"))
		printf("fleet: reading %s, input %s %" PRId64 " ms ago\n",
		       jstr(f, "endpoint")[0] ? jstr(f, "endpoint") : "(none yet)",
		       jbool(f, "input_confirmed") ? "confirmed" : "never confirmed, started",
		       jint(f, "input_age_ms"));
	if (jbool(f, "health_fallback"))
		printf("fleet: HEALTH FALLBACK: the balancers' verdicts were last confirmed "
		       "%" PRId64 " ms ago: the tables follow this balancer's own checks\n",
		       jint(f, "health_input_age_ms"));
	if (jstr(f, "node_conflict"))
		printf("fleet: NODE CONFLICT: %s\n", jstr(f, "node_conflict"));
	if (jstr(f, "health_scope") && !strcmp(jstr(f, "health_scope"), "fleet"))
		printf("fleet: health_scope fleet (the table follows a majority of the balancers' "
		       "verdicts; see fleet status)\n");
}

/* The "announce" member of status and announce answers. */
void print_announce(const struct ctl_opts *o, json_object *resp)
{
	json_object *a, *arr;
	size_t i, n;

	if (!json_object_object_get_ex(resp, "announce", &a) || !jbool(a, "enabled")) {
		printf("announce: off (no announce_table in the config)\n");
		return;
	}
	n = arr_len(a, "routes", &arr);
	printf("announce: %s, table %" PRId64 " protocol %" PRId64 ", %zu route%s\n",
	       jbool(a, "stopping")	 ? "stopping"
	       : jbool(a, "maintenance") ? "off (maintenance)"
					 : "on",
	       jint(a, "table"), jint(a, "protocol"), n, n == 1 ? "" : "s");
	n = arr_len(a, "vips", &arr);
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		printf("  %-30s %-9s %s\n", s_or(v, "vip", "?"),
		       jbool(v, "announced") ? "announced" : "withdrawn", s_or(v, "detail", ""));
	}
}

/* 93784 -> "1d 2h": the two largest units. */
static void duration(int64_t s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%" PRId64 "s", s);
	else if (s < 3600)
		snprintf(buf, len, "%" PRId64 "m %" PRId64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRId64 "h %" PRId64 "m", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%" PRId64 "d %" PRId64 "h", s / 86400, s % 86400 / 3600);
}

/* The "datapath" member of status: the maps read back against the registry. */
static void print_readback(json_object *resp)
{
	json_object *dp, *arr;
	size_t i, n;

	if (!json_object_object_get_ex(resp, "datapath", &dp))
		return;
	n = arr_len(dp, "drift", &arr);
	if (!n) {
		printf("datapath read back: agrees with the registry (%" PRId64 " passes)\n",
		       jint(dp, "passes"));
		return;
	}
	printf("datapath read back: %zu VIP%s DIFFER%s from the registry\n", n, n == 1 ? "" : "s",
	       n == 1 ? "S" : "");
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);

		printf("  %-30s %s\n", s_or(v, "vip", "?"), s_or(v, "differs", ""));
	}
}

void print_status(const struct ctl_opts *o, json_object *resp)
{
	json_object *ifs;
	size_t i, n = arr_len(resp, "interfaces", &ifs);
	char up[32];
	int64_t nv = jint(resp, "vips"), nb = jint(resp, "backends");

	duration(jint(resp, "uptime_s"), up, sizeof(up));
	printf("maglevd %s, pid %" PRId64 ", up %s, %" PRId64 " VIP%s, %" PRId64 " backend%s\n",
	       s_or(resp, "version", "?"), jint(resp, "pid"), up, nv, nv == 1 ? "" : "s", nb,
	       nb == 1 ? "" : "s");
	printf("interfaces (%s XDP):", s_or(resp, "xdp_mode", "?"));
	for (i = 0; i < n; i++)
		printf(" %s", json_object_get_string(json_object_array_get_idx(ifs, i)));
	printf("%s\npin dir %s, state file %s\n", n ? "" : " none", s_or(resp, "pin_dir", "?"),
	       s_or(resp, "state_file", "?"));
	printf("tables digest %s (all VIPs), seed fingerprint %s\n", s_or(resp, "vips_digest", "?"),
	       s_or(resp, "seed_fingerprint", "?"));
	print_readback(resp);
	print_status_detail(resp);
	{
		char pending[256];

		words(resp, "restart_pending", pending, sizeof(pending));
		if (pending[0])
			printf("changed in the configuration, waiting for a restart: %s\n",
			       pending);
	}
	printf("health checks that could not be made (unknown, no verdict): %" PRId64 "\n",
	       jint(resp, "health_checks_unknown"));
	print_announce(o, resp);
	print_fleet(resp);
}

void print_reload(const struct ctl_opts *o, json_object *resp)
{
	char pending[256];

	words(resp, "restart_pending", pending, sizeof(pending));
	printf("configuration reloaded from %s\n", s_or(resp, "config", "?"));
	if (jstr(resp, "warning"))
		printf("warning: %s\n", jstr(resp, "warning"));
	if (pending[0])
		printf("not applied until maglevd restarts (the running values stay): %s\n",
		       pending);
}
