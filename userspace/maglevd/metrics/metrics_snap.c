// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Prometheus text exposition (format 0.0.4) from a snapshot; see metrics_snap.h. */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/damping.h"
#include "model/be_state.h"
#include "ctl_proto.h"
#include "datapath/drift.h"
#include "datapath/readback.h"
#include "datapath/flow_count.h"
#include "hc_encap.h"
#include "fleet/fleet.h"
#include "metrics/labels.h"
#include "metrics/metrics_snap.h"
#include "metrics/process.h"
#include "datapath/slowpath.h"
#include "slowpath_nl.h"
#include "model/state.h"
#include "metrics/status.h"
#include "hot/hot_flows.h"
#include "version.h"

struct snap_vip {
	uint32_t id;
	struct maglev_vip_key key;
	struct maglev_vip_stats base;
	uint64_t spill_base;
	uint64_t table_gen;
	double rebuild_ms;
	uint32_t table_slots_used;
	uint64_t digest;
	uint32_t be0, nbe; /* its backends: bes[be0 .. be0 + nbe) */
};

struct snap_be {
	uint32_t idx, weight;
	struct ctl_addr addr;
	struct maglev_backend_stats base;
	enum be_state state;
	uint64_t hc[HC_RESULTS];
	uint32_t penalty; /* flap damping's, now (health/damping.h) */
	bool up;
};

struct metrics_snap {
	bool per_backend;
	uint32_t nvips, nbes;
	uint64_t seed_fingerprint, vips_digest;
	struct snap_vip *vips;
	struct snap_be *bes;
	/* What follows the datapath's counters, all from loop-only state: rendered
	 * on the loop (a few hundred lines whatever the fleet size).
	 */
	char *tail;
	size_t tail_len;
};

/* The datapath's counter name less its "conn_" (the metric says it): hit, miss, evict... */
static const char *conn_event_name(uint32_t ctr)
{
	const char *n = maglev_dp_counter_name(ctr);

	return strncmp(n, "conn_", 5) ? n : n + 5;
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render_tail(struct daemon *d, FILE *f)
{
	uint32_t i;

	head(f, "maglev_control_requests_total", "counter", "Control requests received.");
	fprintf(f, "maglev_control_requests_total %llu\n", (unsigned long long)d->ctl_requests);
	head(f, "maglev_control_rejected_total", "counter", "Control requests rejected.");
	fprintf(f, "maglev_control_rejected_total %llu\n", (unsigned long long)d->ctl_rejected);
	head(f, "maglev_health_checks_unknown_total", "counter",
	     "Health checks that could not be made (no socket, no encapsulation): no verdict.");
	fprintf(f, "maglev_health_checks_unknown_total %llu\n",
		(unsigned long long)health_unknown_total());
	head(f, "maglev_commits_total", "counter", "Changes written to the datapath.");
	fprintf(f, "maglev_commits_total %llu\n", (unsigned long long)d->commits);
	head(f, "maglev_commit_failures_total", "counter",
	     "Changes the datapath refused (rolled back), by who made them.");
	for (i = 0; i < COMMIT_SOURCES; i++)
		fprintf(f, "maglev_commit_failures_total{source=\"%s\"} %llu\n",
			commit_source_name((enum commit_source)i),
			(unsigned long long)d->commit_failures[i]);
	head(f, "maglev_state_write_failures_total", "counter",
	     "State file writes that failed (the running state is newer than the file).");
	fprintf(f, "maglev_state_write_failures_total %llu\n",
		(unsigned long long)state_writer_failures());
	head(f, "maglev_config_reloads_total", "counter",
	     "Config reloads (SIGHUP or maglevctl reload) by result.");
	fprintf(f, "maglev_config_reloads_total{result=\"ok\"} %llu\n",
		(unsigned long long)d->reloads);
	fprintf(f, "maglev_config_reloads_total{result=\"fail\"} %llu\n",
		(unsigned long long)d->reload_failures);
	fleet_metrics(d, f);
	head(f, "maglev_slowpath_in_sync", "gauge",
	     "1 if the slow-path kernel module is loaded and mirrors the datapath.");
	fprintf(f, "maglev_slowpath_in_sync %d\n", slowpath_in_sync());
	{
		uint64_t cnt[MAGLEV_STAT_MAX + 1];

		if (slowpath_counters(cnt)) {
			head(f, "maglev_slowpath_packets_total", "counter",
			     "Slow-path kernel module: packets forwarded and dropped, by reason.");
			for (i = 0; i <= MAGLEV_STAT_MAX; i++)
				if (i != MAGLEV_STAT_FORWARDED_BYTES && slowpath_nl_stat_name(i))
					fprintf(f,
						"maglev_slowpath_packets_total{reason=\"%s\"} "
						"%llu\n",
						slowpath_nl_stat_name(i),
						(unsigned long long)cnt[i]);
			head(f, "maglev_slowpath_forwarded_bytes_total", "counter",
			     "Slow-path kernel module: bytes forwarded.");
			fprintf(f, "maglev_slowpath_forwarded_bytes_total %llu\n",
				(unsigned long long)cnt[MAGLEV_STAT_FORWARDED_BYTES]);
		}
	}
	{
		static const char *const hc_names[MAGLEV_HC_CTR_MAX] = {
			[MAGLEV_HC_ENCAP] = "encapsulated",
			[MAGLEV_HC_NO_TARGET] = "drop_no_target",
			[MAGLEV_HC_ERROR] = "drop_error",
		};
		uint64_t hc[MAGLEV_HC_CTR_MAX];

		if (health_encap_counters(hc)) {
			head(f, "maglev_health_encap_packets_total", "counter",
			     "Health-check packets the TC program encapsulated or dropped.");
			for (i = 0; i < MAGLEV_HC_CTR_MAX; i++)
				fprintf(f,
					"maglev_health_encap_packets_total{result=\"%s\"} %llu\n",
					hc_names[i], (unsigned long long)hc[i]);
		}
	}
	head(f, "maglev_build_info", "gauge", "1, labelled with the running maglevd's version.");
	fprintf(f, "maglev_build_info{version=\"%s\"} 1\n", MAGLEV_VERSION);
	head(f, "maglev_interface_xdp", "gauge",
	     "Per configured interface, 1 for how the kernel has the XDP program and 0 for the "
	     "other modes: native, generic, offload, none (not attached), missing (no such "
	     "interface).");
	for (i = 0; i < (uint32_t)d->cfg.n_ifaces; i++) {
		char ifname[2 * IF_NAMESIZE];
		uint32_t prog, m;
		const char *mode = status_xdp_mode(d->cfg.ifaces[i], &prog);

		metrics_label_escape(d->cfg.ifaces[i], ifname, sizeof(ifname));
		for (m = 0; status_xdp_modes[m]; m++)
			fprintf(f, "maglev_interface_xdp{interface=\"%s\",mode=\"%s\"} %d\n",
				ifname, status_xdp_modes[m], status_xdp_modes[m] == mode);
	}
	announce_metrics(d, f);
	readback_metrics(d, f);
	hot_flows_metrics(d, f);
	head(f, "maglev_vips", "gauge", "VIPs configured.");
	fprintf(f, "maglev_vips %u\n", d->reg->nvips);
	head(f, "maglev_backends", "gauge", "Backends configured over all VIPs.");
	fprintf(f, "maglev_backends %u\n", d->reg->nbackends);
}

void metrics_snap_free(struct metrics_snap *s)
{
	if (!s)
		return;
	free(s->vips);
	free(s->bes);
	free(s->tail);
	free(s);
}

struct metrics_snap *metrics_snap_take(struct daemon *d)
{
	struct metrics_snap *s = calloc(1, sizeof(*s));
	uint32_t i, j, nbes = 0;
	FILE *f;
	int r;

	if (!s)
		return NULL;
	s->per_backend = d->cfg.metrics_per_backend;
	s->seed_fingerprint = drift_seed_fingerprint(&d->cfg.seed);
	s->vips_digest = drift_vips_digest(d->reg);
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (d->reg->vips[i])
			nbes += d->reg->vips[i]->nbe;
	s->vips = calloc(d->reg->nvips ? d->reg->nvips : 1, sizeof(*s->vips));
	s->bes = calloc(nbes ? nbes : 1, sizeof(*s->bes));
	if (!s->vips || !s->bes)
		goto fail;
	for (i = 0; i < MAGLEV_MAX_VIPS && s->nvips < d->reg->nvips; i++) {
		const struct vip *v = d->reg->vips[i];
		struct snap_vip *sv = &s->vips[s->nvips];

		if (!v)
			continue;
		s->nvips++;
		*sv = (struct snap_vip){.id = v->id,
					.key = v->key,
					.base = v->base,
					.spill_base = v->spill_base,
					.table_gen = v->table_gen,
					.rebuild_ms = v->rebuild_ms,
					.table_slots_used = v->table_slots_used,
					.digest = v->digest,
					.be0 = s->nbes,
					.nbe = v->nbe};
		for (j = 0; j < v->nbe; j++) {
			const struct be *b = &v->bes[j];
			struct snap_be *sb = &s->bes[s->nbes++];

			*sb = (struct snap_be){.idx = b->idx,
					       .weight = b->weight,
					       .addr = b->addr,
					       .base = b->base,
					       .state = be_state(b),
					       .penalty = damping_penalty(&d->cfg, b, mono_ms()),
					       .up = b->up};
			for (r = HC_OK; r < HC_RESULTS; r++)
				sb->hc[r] = health_checks_total(b->idx, r);
		}
	}
	f = open_memstream(&s->tail, &s->tail_len);
	if (!f)
		goto fail;
	render_tail(d, f);
	if (fclose(f))
		goto fail;
	return s;
fail:
	metrics_snap_free(s);
	return NULL;
}

char *metrics_snap_render(const struct metrics_snap *s, struct maglev_dp *dp, size_t *len)
{
	static const char *const reason_names[MAGLEV_REASON_MAX] = MAGLEV_REASON_NAMES;
	struct maglev_vip_stats *vs = calloc(s->nvips ? s->nvips : 1, sizeof(*vs));
	struct maglev_backend_stats *be_stats = NULL;
	char(*vnames)[METRICS_VIP_LABELS_LEN] =
		calloc(s->nvips ? s->nvips : 1, METRICS_VIP_LABELS_LEN);
	char(*bnames)[CTL_ADDR_STRLEN] = NULL;
	uint64_t reasons[MAGLEV_REASON_MAX];
	const struct snap_vip *sv;
	const struct snap_be *sb;
	const char *vname, *bname;
	char *buf = NULL;
	uint32_t i, j;
	int r;
	FILE *f;

	f = open_memstream(&buf, len);
	if (!f || !vs || !vnames)
		goto fail;
	for (i = 0; i < s->nvips; i++) {
		maglev_dp_vip_stats(dp, s->vips[i].id, &vs[i]);
		metrics_vip_labels(&s->vips[i].key, vnames[i], METRICS_VIP_LABELS_LEN);
	}

#define FOR_VIPS for (i = 0; i < s->nvips && (sv = &s->vips[i], vname = vnames[i], 1); i++)
#define VIP_COUNTER(metric, field, help)                 \
	head(f, metric, "counter", help);                \
	FOR_VIPS fprintf(f, metric "{%s} %llu\n", vname, \
			 (unsigned long long)(vs[i].field - sv->base.field));

	VIP_COUNTER("maglev_vip_packets_total", packets, "Packets forwarded for the VIP.")
	VIP_COUNTER("maglev_vip_bytes_total", bytes,
		    "Bytes (before encapsulation) forwarded for the VIP.")
	VIP_COUNTER("maglev_vip_new_flows_total", new_flows, "Flows that took a Maglev pick.")
	head(f, "maglev_vip_new_flow_spilled_total", "counter",
	     "New flows whose pick was over its bounded-load cap and a probe placed elsewhere.");
	FOR_VIPS
	{
		uint64_t sp = 0;

		maglev_dp_vip_spilled(dp, sv->id, &sp);
		fprintf(f, "maglev_vip_new_flow_spilled_total{%s} %llu\n", vname,
			(unsigned long long)(sp - sv->spill_base));
	}
	head(f, "maglev_vip_table_generation", "gauge", "Tables swapped in for the VIP.");
	FOR_VIPS fprintf(f, "maglev_vip_table_generation{%s} %llu\n", vname,
			 (unsigned long long)sv->table_gen);
	head(f, "maglev_vip_table_rebuild_seconds", "gauge",
	     "Duration of the last table build and swap of the VIP.");
	FOR_VIPS fprintf(f, "maglev_vip_table_rebuild_seconds{%s} %.6f\n", vname,
			 sv->rebuild_ms / 1e3);
	/* Info series: balancers of one group disagree when a VIP has two. */
	head(f, "maglev_vip_table_digest_info", "gauge",
	     "1, labelled with the digest of the VIP's table by backend address.");
	FOR_VIPS fprintf(f, "maglev_vip_table_digest_info{%s,digest=\"%016llx\"} 1\n", vname,
			 (unsigned long long)sv->digest);
	head(f, "maglev_seed_fingerprint_info", "gauge",
	     "1, labelled with a fingerprint of the seed (identifies it, does not reveal it).");
	fprintf(f, "maglev_seed_fingerprint_info{fingerprint=\"%016llx\"} 1\n",
		(unsigned long long)s->seed_fingerprint);
	head(f, "maglev_vips_digest_info", "gauge",
	     "1, labelled with one digest over every VIP and its table digest.");
	fprintf(f, "maglev_vips_digest_info{digest=\"%016llx\"} 1\n",
		(unsigned long long)s->vips_digest);
	head(f, "maglev_vip_backends_in_table", "gauge", "Backends taking new flows.");
	FOR_VIPS fprintf(f, "maglev_vip_backends_in_table{%s} %u\n", vname, sv->table_slots_used);

#define FOR_BES                    \
	FOR_VIPS for (j = sv->be0; \
		      j < sv->be0 + sv->nbe && (sb = &s->bes[j], bname = bnames[j], 1); j++)
	/* metrics_per_backend no: a fleet too large for one series per backend. */
	if (!s->per_backend)
		goto backends_done;
	be_stats = calloc(MAGLEV_MAX_BACKENDS, sizeof(*be_stats));
	bnames = calloc(s->nbes ? s->nbes : 1, CTL_ADDR_STRLEN);
	if (!be_stats || !bnames || maglev_dp_backend_stats_all(dp, be_stats))
		goto backends_done;
	/* Formatted once per scrape, not once per series. */
	for (j = 0; j < s->nbes; j++)
		ctl_format_addr(&s->bes[j].addr, bnames[j], CTL_ADDR_STRLEN);
	{
		const struct maglev_backend_stats *bs;

		head(f, "maglev_backend_packets_total", "counter", "Packets sent to the backend.");
		FOR_BES
		{
			bs = &be_stats[sb->idx];
			fprintf(f, "maglev_backend_packets_total{%s,backend=\"%s\"} %llu\n", vname,
				bname, (unsigned long long)(bs->packets - sb->base.packets));
		}
		head(f, "maglev_backend_bytes_total", "counter", "Bytes sent to the backend.");
		FOR_BES
		{
			bs = &be_stats[sb->idx];
			fprintf(f, "maglev_backend_bytes_total{%s,backend=\"%s\"} %llu\n", vname,
				bname, (unsigned long long)(bs->bytes - sb->base.bytes));
		}
		head(f, "maglev_backend_new_flows_total", "counter",
		     "New flows the balancer picked the backend for.");
		FOR_BES
		{
			bs = &be_stats[sb->idx];
			fprintf(f, "maglev_backend_new_flows_total{%s,backend=\"%s\"} %llu\n",
				vname, bname,
				(unsigned long long)(bs->new_flows - sb->base.new_flows));
		}
	}
	head(f, "maglev_backend_up", "gauge", "1 if the backend passes its health checks.");
	FOR_BES fprintf(f, "maglev_backend_up{%s,backend=\"%s\"} %d\n", vname, bname, sb->up);
	head(f, "maglev_backend_state", "gauge",
	     "1 for the backend's state and 0 for the others: up (in the table), ramping (slow "
	     "start), quiesced (weight 0), drain, held (down, slots kept for settle_ms), "
	     "suppressed (flap damping), down.");
	FOR_BES for (r = 0; r < BE_STATE_MAX; r++)
		fprintf(f, "maglev_backend_state{%s,backend=\"%s\",state=\"%s\"} %d\n", vname,
			bname, be_state_str((enum be_state)r), sb->state == (enum be_state)r);
	head(f, "maglev_backend_flap_penalty", "gauge",
	     "Flap damping's penalty (damping_penalty per state change, halved every "
	     "damping_half_life_ms); suppressed over damping_suppress.");
	FOR_BES fprintf(f, "maglev_backend_flap_penalty{%s,backend=\"%s\"} %u\n", vname, bname,
			sb->penalty);
	head(f, "maglev_backend_flows", "gauge",
	     "Connection-table entries the backend holds (counted every few seconds).");
	FOR_BES
	{
		uint64_t n;

		if (flow_count_backend(sb->idx, &n))
			fprintf(f, "maglev_backend_flows{%s,backend=\"%s\"} %llu\n", vname, bname,
				(unsigned long long)n);
	}
	head(f, "maglev_backend_weight", "gauge", "Configured weight.");
	FOR_BES fprintf(f, "maglev_backend_weight{%s,backend=\"%s\"} %u\n", vname, bname,
			sb->weight);
	head(f, "maglev_backend_health_checks_total", "counter", "Health checks by result.");
	FOR_BES for (r = HC_OK; r < HC_RESULTS; r++)
		fprintf(f,
			"maglev_backend_health_checks_total{%s,backend=\"%s\",result=\"%"
			"s\"} %llu\n",
			vname, bname, hc_result_name(r), (unsigned long long)sb->hc[r]);
backends_done:
#undef FOR_BES
#undef VIP_COUNTER
#undef FOR_VIPS

	memset(reasons, 0, sizeof(reasons));
	head(f, "maglev_packets_total", "counter",
	     "Packets seen by the balancer by outcome (tx_*, pass_*, drop_* reasons).");
	if (!maglev_dp_reason_stats(dp, reasons))
		for (i = 0; i < MAGLEV_REASON_MAX; i++)
			fprintf(f, "maglev_packets_total{reason=\"%s\"} %llu\n", reason_names[i],
				(unsigned long long)reasons[i]);
	{
		uint64_t ctrs[MAGLEV_CTR_MAX];

		memset(ctrs, 0, sizeof(ctrs));
		head(f, "maglev_conn_events_total", "counter",
		     "Connection-table events: hit, miss, repick, expired, insert, insert_skip "
		     "(over "
		     "new_flow_limit), evict (a live flow replaced), sc_carried.");
		if (!maglev_dp_counter_stats(dp, ctrs))
			for (i = 0; i < MAGLEV_CTR_MAX; i++)
				fprintf(f, "maglev_conn_events_total{event=\"%s\"} %llu\n",
					conn_event_name(i), (unsigned long long)ctrs[i]);
	}
	{
		uint64_t slots, entries, live;
		double age;

		if (flow_count_table(&slots, &entries, &live, &age)) {
			head(f, "maglev_conn_table_slots", "gauge", "Connection-table capacity.");
			fprintf(f, "maglev_conn_table_slots %llu\n", (unsigned long long)slots);
			head(f, "maglev_conn_table_entries", "gauge",
			     "Connection-table entries: all intact ones, and the live ones the "
			     "datapath still follows (backend current, UDP not idle).");
			fprintf(f, "maglev_conn_table_entries{state=\"all\"} %llu\n",
				(unsigned long long)entries);
			fprintf(f, "maglev_conn_table_entries{state=\"live\"} %llu\n",
				(unsigned long long)live);
			head(f, "maglev_conn_table_count_age_seconds", "gauge",
			     "Age of the connection-table count above.");
			fprintf(f, "maglev_conn_table_count_age_seconds %.3f\n", age);
		}
	}
	fwrite(s->tail, 1, s->tail_len, f);
	process_metrics(f);
	free(vs);
	free(vnames);
	free(bnames);
	free(be_stats);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
fail:
	if (f)
		fclose(f);
	free(buf);
	free(vs);
	free(vnames);
	return NULL;
}
