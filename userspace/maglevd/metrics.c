// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Prometheus text exposition (format 0.0.4) over a minimal HTTP/1.0 server:
 * GET /metrics answers with every counter; anything else gets 404.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "be_state.h"
#include "ctl_proto.h"
#include "drift.h"
#include "flow_count.h"
#include "log.h"
#include "hc_encap.h"
#include "slowpath.h"
#include "slowpath_nl.h"
#include "state.h"
#include "status.h"
#include "stream.h"
#include "version.h"

#define METRICS_CLIENT_TIMEOUT_MS 5000
#define METRICS_MAX_REQUEST	  8192

static struct ev_source listener = {.fd = -1};
static uint64_t last_sample_ms;
static struct stream_pool metrics_clients = {.max = METRICS_MAX_CLIENTS, .name = "metrics"};

/* Every backend's counters by index, read in batches (1.5 MiB, kept). */
static struct maglev_backend_stats *be_stats;

static bool all_backend_stats(struct daemon *d)
{
	if (!be_stats)
		be_stats = calloc(MAGLEV_MAX_BACKENDS, sizeof(*be_stats));
	return be_stats && !maglev_dp_backend_stats_all(d->dp, be_stats);
}

/* Backend addresses by index, formatted once per scrape, not once per series. */
static char (*be_names)[CTL_ADDR_STRLEN];

static bool backend_names(struct daemon *d)
{
	uint32_t i, j;

	if (!be_names)
		be_names = calloc(MAGLEV_MAX_BACKENDS, sizeof(*be_names));
	if (!be_names)
		return false;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		for (j = 0; d->reg->vips[i] && j < d->reg->vips[i]->nbe; j++)
			ctl_format_addr(&d->reg->vips[i]->bes[j].addr,
					be_names[d->reg->vips[i]->bes[j].idx], CTL_ADDR_STRLEN);
	return true;
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *metrics_render(struct daemon *d, size_t *len)
{
	static const char *const reason_names[MAGLEV_REASON_MAX] = MAGLEV_REASON_NAMES;
	struct maglev_vip_stats *vs = calloc(MAGLEV_MAX_VIPS, sizeof(*vs));
	uint64_t reasons[MAGLEV_REASON_MAX];
	char vname[CTL_ADDR_STRLEN];
	const char *bname;
	char *buf = NULL;
	uint32_t i, j;
	int r;
	FILE *f;

	f = open_memstream(&buf, len);
	if (!f || !vs) {
		if (f)
			fclose(f);
		free(buf);
		free(vs);
		return NULL;
	}
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (d->reg->vips[i])
			maglev_dp_vip_stats(d->dp, i, &vs[i]);

#define FOR_VIPS                              \
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) \
		if (d->reg->vips[i] &&        \
		    (ctl_format_vip(&d->reg->vips[i]->key, vname, sizeof(vname)), 1))
#define VIP_COUNTER(metric, field, help)                         \
	head(f, metric, "counter", help);                        \
	FOR_VIPS fprintf(f, metric "{vip=\"%s\"} %llu\n", vname, \
			 (unsigned long long)(vs[i].field - d->reg->vips[i]->base.field));

	VIP_COUNTER("maglev_vip_packets_total", packets, "Packets forwarded for the VIP.")
	VIP_COUNTER("maglev_vip_bytes_total", bytes,
		    "Bytes (before encapsulation) forwarded for the VIP.")
	VIP_COUNTER("maglev_vip_new_flows_total", new_flows, "Flows that took a Maglev pick.")
	head(f, "maglev_vip_table_generation", "gauge", "Tables swapped in for the VIP.");
	FOR_VIPS fprintf(f, "maglev_vip_table_generation{vip=\"%s\"} %llu\n", vname,
			 (unsigned long long)d->reg->vips[i]->table_gen);
	head(f, "maglev_vip_table_rebuild_seconds", "gauge",
	     "Duration of the last table build and swap of the VIP.");
	FOR_VIPS fprintf(f, "maglev_vip_table_rebuild_seconds{vip=\"%s\"} %.6f\n", vname,
			 d->reg->vips[i]->rebuild_ms / 1e3);
	/* Info series: balancers of one group disagree when a VIP has two. */
	head(f, "maglev_vip_table_digest_info", "gauge",
	     "1, labelled with the digest of the VIP's table by backend address.");
	FOR_VIPS fprintf(f, "maglev_vip_table_digest_info{vip=\"%s\",digest=\"%016llx\"} 1\n",
			 vname, (unsigned long long)d->reg->vips[i]->digest);
	head(f, "maglev_seed_fingerprint_info", "gauge",
	     "1, labelled with a fingerprint of the seed (identifies it, does not reveal it).");
	fprintf(f, "maglev_seed_fingerprint_info{fingerprint=\"%016llx\"} 1\n",
		(unsigned long long)drift_seed_fingerprint(&d->cfg.seed));
	head(f, "maglev_vips_digest_info", "gauge",
	     "1, labelled with one digest over every VIP and its table digest.");
	fprintf(f, "maglev_vips_digest_info{digest=\"%016llx\"} 1\n",
		(unsigned long long)drift_vips_digest(d->reg));
	head(f, "maglev_vip_backends_in_table", "gauge", "Backends taking new flows.");
	FOR_VIPS fprintf(f, "maglev_vip_backends_in_table{vip=\"%s\"} %u\n", vname,
			 d->reg->vips[i]->table_slots_used);

#define FOR_BES                                        \
	FOR_VIPS for (j = 0; j < d->reg->vips[i]->nbe; \
		      j++) if ((bname = be_names[d->reg->vips[i]->bes[j].idx]), 1)
#define BE (&d->reg->vips[i]->bes[j])
	/* metrics_per_backend no: a fleet too large for one series per backend. */
	if (!d->cfg.metrics_per_backend || !all_backend_stats(d) || !backend_names(d))
		goto backends_done;
	{
		const struct maglev_backend_stats *bs;

		head(f, "maglev_backend_packets_total", "counter", "Packets sent to the backend.");
		FOR_BES
		{
			bs = &be_stats[BE->idx];
			fprintf(f, "maglev_backend_packets_total{vip=\"%s\",backend=\"%s\"} %llu\n",
				vname, bname, (unsigned long long)(bs->packets - BE->base.packets));
		}
		head(f, "maglev_backend_bytes_total", "counter", "Bytes sent to the backend.");
		FOR_BES
		{
			bs = &be_stats[BE->idx];
			fprintf(f, "maglev_backend_bytes_total{vip=\"%s\",backend=\"%s\"} %llu\n",
				vname, bname, (unsigned long long)(bs->bytes - BE->base.bytes));
		}
		head(f, "maglev_backend_new_flows_total", "counter",
		     "New flows the balancer picked the backend for.");
		FOR_BES
		{
			bs = &be_stats[BE->idx];
			fprintf(f,
				"maglev_backend_new_flows_total{vip=\"%s\",backend=\"%s\"} %llu\n",
				vname, bname,
				(unsigned long long)(bs->new_flows - BE->base.new_flows));
		}
	}
	head(f, "maglev_backend_up", "gauge", "1 if the backend passes its health checks.");
	FOR_BES fprintf(f, "maglev_backend_up{vip=\"%s\",backend=\"%s\"} %d\n", vname, bname,
			BE->up);
	head(f, "maglev_backend_state", "gauge",
	     "1 for the backend's state: up (in the table), quiesced (weight 0), drain, or down.");
	FOR_BES fprintf(f, "maglev_backend_state{vip=\"%s\",backend=\"%s\",state=\"%s\"} 1\n",
			vname, bname, be_state_name(BE));
	head(f, "maglev_backend_flows", "gauge",
	     "Connection-table entries the backend holds (counted every few seconds).");
	FOR_BES
	{
		uint64_t n;

		if (flow_count_backend(BE->idx, &n))
			fprintf(f, "maglev_backend_flows{vip=\"%s\",backend=\"%s\"} %llu\n", vname,
				bname, (unsigned long long)n);
	}
	head(f, "maglev_backend_weight", "gauge", "Configured weight.");
	FOR_BES fprintf(f, "maglev_backend_weight{vip=\"%s\",backend=\"%s\"} %u\n", vname, bname,
			BE->weight);
	head(f, "maglev_backend_health_checks_total", "counter", "Health checks by result.");
	FOR_BES for (r = HC_OK; r < HC_RESULTS; r++)
		fprintf(f,
			"maglev_backend_health_checks_total{vip=\"%s\",backend=\"%s\",result=\"%"
			"s\"} %llu\n",
			vname, bname, hc_result_name(r),
			(unsigned long long)health_checks_total(BE->idx, r));
backends_done:
#undef BE
#undef FOR_BES
#undef VIP_COUNTER
#undef FOR_VIPS

	memset(reasons, 0, sizeof(reasons));
	head(f, "maglev_packets_total", "counter",
	     "Packets seen by the balancer by outcome (tx_*, pass_*, drop_* reasons).");
	if (!maglev_dp_reason_stats(d->dp, reasons))
		for (i = 0; i < MAGLEV_REASON_MAX; i++)
			fprintf(f, "maglev_packets_total{reason=\"%s\"} %llu\n", reason_names[i],
				(unsigned long long)reasons[i]);
	{
		uint64_t ctrs[MAGLEV_CTR_MAX];

		memset(ctrs, 0, sizeof(ctrs));
		head(f, "maglev_conn_events_total", "counter",
		     "Connection-table events: hits, misses, re-picks, expiries, inserts.");
		if (!maglev_dp_counter_stats(d->dp, ctrs))
			for (i = 0; i < MAGLEV_CTR_MAX; i++)
				fprintf(f, "maglev_conn_events_total{event=\"%s\"} %llu\n",
					maglev_dp_counter_name(i), (unsigned long long)ctrs[i]);
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
	head(f, "maglevd_control_requests_total", "counter", "Control requests received.");
	fprintf(f, "maglevd_control_requests_total %llu\n", (unsigned long long)d->ctl_requests);
	head(f, "maglevd_control_rejected_total", "counter", "Control requests rejected.");
	fprintf(f, "maglevd_control_rejected_total %llu\n", (unsigned long long)d->ctl_rejected);
	head(f, "maglevd_health_checks_unknown_total", "counter",
	     "Health checks that could not be made (no socket, no encapsulation): no verdict.");
	fprintf(f, "maglevd_health_checks_unknown_total %llu\n",
		(unsigned long long)health_unknown_total());
	head(f, "maglevd_commits_total", "counter", "Changes written to the datapath.");
	fprintf(f, "maglevd_commits_total %llu\n", (unsigned long long)d->commits);
	head(f, "maglevd_commit_failures_total", "counter",
	     "Changes the datapath or the state file refused.");
	fprintf(f, "maglevd_commit_failures_total %llu\n", (unsigned long long)d->commit_failures);
	head(f, "maglevd_state_write_failures_total", "counter",
	     "State file writes that failed (the running state is newer than the file).");
	fprintf(f, "maglevd_state_write_failures_total %llu\n",
		(unsigned long long)state_writer_failures());
	head(f, "maglevd_config_reloads_total", "counter",
	     "Config reloads (SIGHUP or maglevctl reload) by result.");
	fprintf(f, "maglevd_config_reloads_total{result=\"ok\"} %llu\n",
		(unsigned long long)d->reloads);
	fprintf(f, "maglevd_config_reloads_total{result=\"fail\"} %llu\n",
		(unsigned long long)d->reload_failures);
	head(f, "maglevd_slowpath_in_sync", "gauge",
	     "1 if the slow-path kernel module is loaded and mirrors the datapath.");
	fprintf(f, "maglevd_slowpath_in_sync %d\n", slowpath_in_sync());
	{
		uint64_t cnt[MAGLEV_STAT_MAX + 1];
		unsigned int i;

		if (slowpath_counters(cnt)) {
			head(f, "maglev_slowpath_events_total", "counter",
			     "Slow-path kernel module: packets forwarded and dropped, by reason.");
			for (i = 0; i <= MAGLEV_STAT_MAX; i++)
				if (slowpath_nl_stat_name(i))
					fprintf(f,
						"maglev_slowpath_events_total{event=\"%s\"} %llu\n",
						slowpath_nl_stat_name(i),
						(unsigned long long)cnt[i]);
		}
	}
	{
		static const char *const hc_names[MAGLEV_HC_CTR_MAX] = {
			[MAGLEV_HC_ENCAP] = "encapsulated",
			[MAGLEV_HC_NO_TARGET] = "drop_no_target",
			[MAGLEV_HC_ERROR] = "drop_error",
		};
		uint64_t hc[MAGLEV_HC_CTR_MAX];
		unsigned int i;

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
	     "1 per configured interface, labelled with how the kernel has the XDP program: "
	     "native, generic, offload, none (not attached) or missing (no such interface).");
	for (i = 0; i < (uint32_t)d->cfg.n_ifaces; i++) {
		uint32_t prog;
		const char *mode = status_xdp_mode(d->cfg.ifaces[i], &prog);

		fprintf(f, "maglev_interface_xdp{interface=\"%s\",mode=\"%s\"} 1\n",
			d->cfg.ifaces[i], mode);
	}
	announce_metrics(d, f);
	head(f, "maglevd_vips", "gauge", "VIPs configured.");
	fprintf(f, "maglevd_vips %u\n", d->reg->nvips);
	head(f, "maglevd_backends", "gauge", "Backends configured over all VIPs.");
	fprintf(f, "maglevd_backends %u\n", d->reg->nbackends);
	head(f, "maglevd_uptime_seconds", "gauge", "Seconds since maglevd started.");
	fprintf(f, "maglevd_uptime_seconds %llu\n",
		(unsigned long long)((mono_ms() - d->start_ms) / 1000));
	free(vs);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void metrics_answer(struct daemon *d, int fd, const char *in, size_t len, char **out,
			   size_t *out_len)
{
	char *body = NULL, *resp = NULL;
	size_t blen = 0;
	int n;

	if ((len >= 13 && !strncmp(in, "GET /metrics ", 13)) ||
	    (len >= 13 && !strncmp(in, "GET /metrics?", 13))) {
		body = metrics_render(d, &blen);
		if (!body) {
			*out = strdup(
				"HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
			*out_len = *out ? strlen(*out) : 0;
			return;
		}
		n = asprintf(&resp,
			     "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
			     "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			     blen);
		if (n < 0) {
			free(body);
			return;
		}
		*out = realloc(resp, (size_t)n + blen);
		if (*out)
			memcpy(*out + n, body, blen);
		else
			free(resp);
		free(body);
		*out_len = *out ? (size_t)n + blen : 0;
		return;
	}
	{
		static const char body404[] = "metrics are at /metrics\n";

		n = asprintf(out,
			     "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
			     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			     sizeof(body404) - 1, body404);
		if (n < 0)
			*out = NULL;
		*out_len = n < 0 ? 0 : (size_t)n;
	}
}

static void on_accept(struct daemon *d, struct ev_source *src, uint32_t events)
{
	int fd;

	for (;;) {
		fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		stream_start(d, fd, "\r\n\r\n", METRICS_MAX_REQUEST, METRICS_CLIENT_TIMEOUT_MS,
			     "HTTP/1.0 431 Request Header Fields Too Large\r\nContent-Length: "
			     "0\r\n\r\n",
			     metrics_answer, &metrics_clients);
	}
}

int metrics_start(struct daemon *d, const char *listen_addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct ctl_addr a;
	uint16_t port;
	socklen_t al;
	int fd, one = 1;

	if (!listen_addr[0])
		return 0;
	if (ctl_parse_endpoint(listen_addr, &a, &port, err, errlen))
		return -EINVAL;
	memset(&ss, 0, sizeof(ss));
	if (a.family == MAGLEV_AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, a.addr, 16);
		s6->sin6_port = htons(port);
		al = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = a.addr[0];
		s4->sin_port = htons(port);
		al = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "metrics socket: %s", strerror(errno));
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, al) || listen(fd, 64)) {
		snprintf(err, errlen, "metrics on %s: %s", listen_addr, strerror(errno));
		close(fd);
		return -errno;
	}
	listener.fd = fd;
	listener.cb = on_accept;
	if (ev_add(d, &listener, EPOLLIN)) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		close(fd);
		listener.fd = -1;
		return -EIO;
	}
	return 0;
}

void metrics_stop(struct daemon *d)
{
	if (listener.fd < 0)
		return;
	ev_del(d, &listener);
	close(listener.fd);
	listener.fd = -1;
}

void metrics_sample(struct daemon *d)
{
	uint64_t now = mono_ms();
	double dt = (double)(now - last_sample_ms) / 1e3;
	bool have_bs;
	uint32_t i, j;

	if (!last_sample_ms || dt <= 0) {
		dt = 0;
	}
	last_sample_ms = now;
	/* One batch read rather than a lookup per backend, every second. */
	have_bs = d->reg->nbackends && all_backend_stats(d);
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];
		struct maglev_vip_stats s;

		if (!v || maglev_dp_vip_stats(d->dp, v->id, &s))
			continue;
		if (dt > 0) {
			v->pps = (double)(s.packets - v->last.packets) / dt;
			v->bps = (double)(s.bytes - v->last.bytes) * 8 / dt;
			v->fps = (double)(s.new_flows - v->last.new_flows) / dt;
		}
		v->last = s;
		for (j = 0; j < v->nbe; j++) {
			struct be *b = &v->bes[j];
			struct maglev_backend_stats bs;

			if (!have_bs)
				continue;
			bs = be_stats[b->idx];
			if (dt > 0) {
				b->pps = (double)(bs.packets - b->last.packets) / dt;
				b->bps = (double)(bs.bytes - b->last.bytes) * 8 / dt;
			}
			b->last = bs;
		}
	}
}
