// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Backend health checks: non-blocking TCP connects, HTTP GETs (the client
 * here), HTTPS GETs (libcurl: hc_https.h) and datagram exchanges (udp, dns:
 * hc_udp.h) driven by the event loop. A backend changes state only
 * after `rise` successes or `fall` failures in a row, so a flapping backend does not churn the
 * table. Verdicts wait for the end of the tick and go in together (health_verdicts.c): one table
 * rebuild per VIP, however many changed.
 *
 * With health_via_encap (the default) a check connects to the VIP itself,
 * marked with the backend's index, and bpf/maglev_hc.bpf.c on the balancer's
 * interfaces encapsulates it toward that backend like client traffic
 * (userspace/lib/hc_encap.h): the check then needs what clients need, the
 * backend's decapsulation, the VIP on it and the service on the VIP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/daemon.h"
#include "fleet/fleet_health.h"
#include "hc_encap.h"
#include "health/hc_body.h"
#include "health/hc_https.h"
#include "health/hc_udp.h"
#include "core/log.h"

/* HC_BODY: http, the status was right, the body is searched for its text. */
enum hc_phase { HC_IDLE, HC_CONNECTING, HC_READING, HC_BODY };

struct hc_slot {
	struct ev_source src; /* fd of the check in flight; first member */
	uint32_t idx, vip_id, gen;
	enum hc_phase phase;
	struct hc_params p; /* settings of the check in flight */
	uint64_t next_ms, deadline_ms, started_ms, last_ms;
	uint32_t ok_streak, fail_streak;
	int last; /* enum hc_result, -1: no result yet */
	double last_rtt_ms;
	uint64_t checks[HC_RESULTS];
	char last_error[160];
	char resp[64];
	size_t resp_len;
	bool in_body;		/* http: past the head (HC_BODY) */
	bool at_line_start;	/* http: the head's last byte ended a line */
	struct hc_body *body;	/* http: the text searched for; made at the first */
	struct hc_https *https; /* the https check in flight */
	uint16_t dns_id;	/* id of the dns check's query in flight */
	struct hc_slot *next_dead;
};

static struct hc_slot *slots[MAGLEV_MAX_BACKENDS];
/* Slots dropped while the loop handles a batch of events: a later event of
 * the same batch may still name one, so they are freed by health_reap().
 */
static struct hc_slot *dead_slots;
static const char *const result_names[HC_RESULTS] = {"ok", "fail", "unknown"};
/* Checks that could not be made, in all: slots go away with their backends. */
static uint64_t unknown_total;

/*
 * The encapsulating TC program: loaded and attached while health_via_encap
 * is on and some backend has a check, to the configured interfaces (followed
 * across reloads); removed from them when it is turned off or no check is
 * left. A failure is retried every few seconds, and meanwhile checks are
 * unknown with the reason (the backends keep their state): never silently
 * direct.
 */
static struct {
	struct hc_encap *h;
	int ifindex[CFG_MAX_IFACES];
	int n;
	bool cleaned; /* filters of an earlier run removed (health_via_encap no) */
	uint64_t retry_ms;
	char err[200];
} enc;

static bool enc_has(const int *list, int n, int ifindex)
{
	int i;

	for (i = 0; i < n; i++)
		if (list[i] == ifindex)
			return true;
	return false;
}

bool health_encap_counters(uint64_t *out)
{
	return enc.h && !hc_encap_counters(enc.h, out);
}

static void encap_sync(struct daemon *d, bool checks)
{
	int want[CFG_MAX_IFACES], nwant = 0, i, r;
	char e[200];

	if (!d->cfg.hc_via_encap || !checks) {
		bool off = !d->cfg.hc_via_encap;

		/* Turned off: also remove what an earlier run left on the
		 * configured interfaces. No check left: only our own filters.
		 */
		if (enc.h || (off && !enc.cleaned)) {
			for (i = 0; off && i < d->cfg.n_ifaces; i++) {
				int ifindex = (int)if_nametoindex(d->cfg.ifaces[i]);

				if (ifindex && !enc_has(enc.ifindex, enc.n, ifindex))
					hc_encap_detach(ifindex);
			}
			for (i = 0; i < enc.n; i++)
				hc_encap_detach(enc.ifindex[i]);
			if (enc.h)
				log_info(off ? "health: checks go straight to the backends"
					     : "health: no checks configured, encapsulation "
					       "removed");
			hc_encap_close(enc.h);
			enc.h = NULL;
			enc.n = 0;
			enc.cleaned = off;
		}
		enc.err[0] = '\0';
		return;
	}
	enc.cleaned = false;
	for (i = 0; i < d->cfg.n_ifaces; i++) {
		int ifindex = (int)if_nametoindex(d->cfg.ifaces[i]);

		if (ifindex)
			want[nwant++] = ifindex;
	}
	if (enc.h && !enc.err[0] && nwant == enc.n) {
		for (i = 0; i < nwant && enc_has(enc.ifindex, enc.n, want[i]); i++)
			;
		if (i == nwant)
			return; /* attached where wanted */
	}
	if (enc.err[0] && mono_ms() < enc.retry_ms)
		return;
	if (!enc.h) {
		int fd = maglev_dp_map_fd(d->dp, "maglev_cfg");
		int l2fd = maglev_dp_map_fd(d->dp, "maglev_ifl2");

		r = fd < 0 || l2fd < 0 ? -ENOENT : hc_encap_open(&enc.h, fd, l2fd, e, sizeof(e));
		if (fd < 0 || l2fd < 0)
			snprintf(e, sizeof(e), "no config or interface map");
		if (r)
			goto fail;
	}
	for (i = 0; i < enc.n; i++)
		if (!enc_has(want, nwant, enc.ifindex[i]))
			hc_encap_detach(enc.ifindex[i]);
	enc.n = 0;
	for (i = 0; i < nwant; i++) {
		r = hc_encap_attach(enc.h, want[i], e, sizeof(e));
		if (r)
			goto fail;
		enc.ifindex[enc.n++] = want[i];
	}
	if (!nwant) {
		snprintf(e, sizeof(e), "none of the configured interfaces exists");
		goto fail;
	}
	enc.err[0] = '\0';
	log_info("health: checks go through the encapsulation (TC egress on %d interface%s)", nwant,
		 nwant == 1 ? "" : "s");
	return;
fail:
	if (strcmp(enc.err, e))
		log_err("health: health_via_encap: %s (retrying every 5 s; "
			"health_via_encap no sends checks straight to the backends)",
			e);
	snprintf(enc.err, sizeof(enc.err), "%s", e);
	enc.retry_ms = mono_ms() + 5000;
}

static void slot_close(struct daemon *d, struct hc_slot *s)
{
	hc_https_cancel(s->https);
	s->https = NULL;
	if (s->src.fd >= 0) {
		ev_del(d, &s->src);
		close(s->src.fd);
		s->src.fd = -1;
	}
	s->phase = HC_IDLE;
}

/* A check slot that goes away takes its encapsulation target along. */
static void slot_free(struct daemon *d, uint32_t idx)
{
	if (!slots[idx])
		return;
	slot_close(d, slots[idx]); /* HC_IDLE: on_ready ignores its events */
	slots[idx]->next_dead = dead_slots;
	dead_slots = slots[idx];
	slots[idx] = NULL;
	if (enc.h)
		hc_encap_clear(enc.h, idx);
}

void health_reap(void)
{
	while (dead_slots) {
		struct hc_slot *s = dead_slots;

		dead_slots = s->next_dead;
		free(s->body);
		free(s);
	}
	hc_https_reap();
}

static void record(struct daemon *d, struct hc_slot *s, enum hc_result r, const char *why)
{
	slot_close(d, s);
	s->last_ms = mono_ms();
	s->last_rtt_ms = (double)(s->last_ms - s->started_ms);
	s->last = r;
	snprintf(s->last_error, sizeof(s->last_error), "%s", r == HC_OK ? "" : why);
	s->next_ms = s->started_ms + s->p.interval_ms;
	s->checks[r]++;
}

static void finish(struct daemon *d, uint32_t idx, bool ok, const char *why)
{
	struct hc_slot *s = slots[idx];
	struct vip *v;
	uint32_t i;
	bool up;

	record(d, s, ok ? HC_OK : HC_FAIL, why);
	if (ok) {
		s->ok_streak++;
		s->fail_streak = 0;
	} else {
		s->fail_streak++;
		s->ok_streak = 0;
	}
	v = d->reg->vips[s->vip_id];
	for (i = 0; v && i < v->nbe; i++) {
		struct be *b = &v->bes[i];

		if (b->idx != idx || b->gen != s->gen)
			continue;
		/* Judged against the verdict still waiting for the tick, if any. */
		if (!health_verdict_pending(idx, s->gen, &up))
			up = health_local_up(d, b);
		if (!up && ok && (s->ok_streak >= s->p.rise || b->start_down))
			health_verdict(s->vip_id, idx, s->gen, true, "");
		else if (up && !ok && s->fail_streak >= s->p.fall)
			health_verdict(s->vip_id, idx, s->gen, false, s->last_error);
		return;
	}
}

/*
 * A check that could not be made (no socket: EMFILE; no encapsulation; no
 * local port) says nothing about the backend: it leaves the streaks and the
 * state alone. Counted as a failure, a shortage on the balancer took every
 * backend down after `fall` checks and blackholed the VIP.
 */
static void unknown(struct daemon *d, uint32_t idx, const char *why)
{
	static uint64_t logged_ms, since;
	uint64_t now = mono_ms();

	record(d, slots[idx], HC_UNKNOWN, why);
	unknown_total++;
	since++;
	if (!logged_ms || now - logged_ms >= 10000) {
		log_warn("health: %llu check%s could not be made (%s): unknown, not failed; "
			 "backends keep their state",
			 (unsigned long long)since, since == 1 ? "" : "s", why);
		logged_ms = now;
		since = 0;
	}
}

static bool is_dgram(enum hc_type t)
{
	return t == HC_UDP || t == HC_DNS;
}

/* A datagram check's answer (or the ICMP error the connected socket got). */
static void on_dgram(struct daemon *d, struct hc_slot *s)
{
	uint8_t buf[HC_UDP_MAX], want[HC_UDP_MAX];
	uint32_t idx = s->idx;
	char why[96];
	ssize_t n;
	int r;

	n = recv(s->src.fd, buf, sizeof(buf), 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* ECONNREFUSED: an ICMP port unreachable came back. */
		snprintf(why, sizeof(why), "udp: %s",
			 errno == ECONNREFUSED ? "port unreachable" : strerror(errno));
		finish(d, idx, false, why);
		return;
	}
	if (s->p.type == HC_DNS) {
		r = hc_dns_judge(buf, (size_t)n, s->dns_id, why, sizeof(why));
		if (r < 0)
			return; /* not the answer to this query: wait on */
		finish(d, idx, r == 1, why);
		return;
	}
	r = hc_udp_decode(s->p.expect, want, sizeof(want), why, sizeof(why));
	if (r <= 0 || memmem(buf, (size_t)n, want, (size_t)r))
		finish(d, idx, true, "");
	else
		finish(d, idx, false, "udp: reply without the expected bytes");
}

/* Send the datagram check's request on its connected socket. */
static void dgram_send(struct daemon *d, struct hc_slot *s)
{
	uint8_t buf[HC_UDP_MAX];
	char why[96];
	int n;

	if (s->p.type == HC_DNS) {
		s->dns_id = (uint16_t)rand();
		n = (int)hc_dns_query(s->p.dns_name, s->dns_id, buf);
	} else {
		n = hc_udp_decode(s->p.payload, buf, sizeof(buf), why, sizeof(why));
	}
	if (n <= 0 || send(s->src.fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
		int e = n <= 0 ? EINVAL : errno;

		snprintf(why, sizeof(why), "udp: send: %s", strerror(e));
		if (e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH)
			finish(d, s->idx, false, why);
		else
			unknown(d, s->idx, why);
		return;
	}
	s->phase = HC_READING;
	if (ev_add(d, &s->src, EPOLLIN))
		unknown(d, s->idx, "epoll failed");
}

/* http: the request went with the connect's success; one send does it, as
 * it fits any socket buffer. Host is check_host, else the address.
 */
static void http_send(struct daemon *d, struct hc_slot *s)
{
	char req[512], host[sizeof(s->p.host) + 2];
	ssize_t n;

	if (s->p.host[0]) {
		snprintf(host, sizeof(host), "%s", s->p.host);
	} else {
		struct sockaddr_storage ss;
		socklen_t al = sizeof(ss);
		char a[INET6_ADDRSTRLEN];
		bool v6;

		if (getpeername(s->src.fd, (struct sockaddr *)&ss, &al) ||
		    !inet_ntop(ss.ss_family,
			       ss.ss_family == AF_INET6
				       ? (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
				       : (void *)&((struct sockaddr_in *)&ss)->sin_addr,
			       a, sizeof(a)))
			strcpy(a, "backend");
		v6 = strchr(a, ':');
		snprintf(host, sizeof(host), "%s%s%s", v6 ? "[" : "", a, v6 ? "]" : "");
	}
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: maglevd-health\r\n"
		 "Connection: close\r\n\r\n",
		 s->p.path, host);
	n = send(s->src.fd, req, strlen(req), MSG_NOSIGNAL);
	if (n != (ssize_t)strlen(req)) {
		finish(d, s->idx, false, "http: send failed");
		return;
	}
	s->phase = HC_READING;
	s->resp_len = 0;
	ev_mod(d, &s->src, EPOLLIN);
}

/* http, past the status: skip the head (up to its blank line, "\r\n\r\n" or
 * "\n\n"), then search the body for check_body's text. true once decided.
 */
static bool http_body(struct daemon *d, struct hc_slot *s, const char *data, size_t n)
{
	while (n && !s->in_body) {
		if (*data == '\n') {
			s->in_body = s->at_line_start;
			s->at_line_start = true;
		} else if (*data != '\r') {
			s->at_line_start = false;
		}
		data++;
		n--;
	}
	if (!s->in_body || !hc_body_feed(s->body, data, n))
		return false;
	if (s->body->found)
		finish(d, s->idx, true, "");
	else
		finish(d, s->idx, false, "http: body without the expected text");
	return true;
}

/* http: the answer so far; the status line decides, then the body if a
 * text is expected (HTTP/1.0 and Connection: close, so it ends at EOF).
 */
static void http_read(struct daemon *d, struct hc_slot *s)
{
	unsigned int major, minor, status;
	char why[96], buf[4096];
	ssize_t n;

	if (s->phase == HC_BODY) {
		n = recv(s->src.fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0)
			finish(d, s->idx, false, "http: read failed");
		else if (!n)
			finish(d, s->idx, false, "http: body without the expected text");
		else
			http_body(d, s, buf, (size_t)n);
		return;
	}
	n = recv(s->src.fd, s->resp + s->resp_len, sizeof(s->resp) - 1 - s->resp_len, 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		finish(d, s->idx, false, "http: read failed");
		return;
	}
	s->resp_len += (size_t)n;
	s->resp[s->resp_len] = '\0';
	if (n > 0 && s->resp_len < 12 && !strchr(s->resp, '\n'))
		return; /* status line not complete yet */
	if (sscanf(s->resp, "HTTP/%u.%u %u", &major, &minor, &status) != 3) {
		finish(d, s->idx, false, "http: no status line");
		return;
	}
	if (status != s->p.status) {
		snprintf(why, sizeof(why), "http: status %u, want %u", status, s->p.status);
		finish(d, s->idx, false, why);
		return;
	}
	if (!s->p.body[0]) {
		finish(d, s->idx, true, "");
		return;
	}
	/* Only checks with a text carry the search's state. */
	if (!s->body)
		s->body = malloc(sizeof(*s->body));
	if (!s->body) {
		unknown(d, s->idx, "http: out of memory");
		return;
	}
	hc_body_init(s->body, s->p.body);
	if (!s->body->want_len) { /* a text that decodes to nothing: none */
		finish(d, s->idx, true, "");
		return;
	}
	/* The body's text: what came with the status line is searched first. */
	s->phase = HC_BODY;
	s->in_body = false;
	s->at_line_start = false;
	if (!http_body(d, s, s->resp, s->resp_len) && !n)
		finish(d, s->idx, false, "http: body without the expected text");
}

static void on_ready(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct hc_slot *s = (struct hc_slot *)src;
	uint32_t idx = s->idx;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	char why[96];

	/* An event of this batch for a check that already ended in it (the
	 * tick's timeout came first): its fd is gone, and reading it would
	 * count a second failure for one check.
	 */
	if (s->phase == HC_IDLE)
		return;
	if (is_dgram(s->p.type)) {
		on_dgram(d, s);
		return;
	}
	if (s->phase != HC_CONNECTING) {
		http_read(d, s);
		return;
	}
	if (getsockopt(src->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
		snprintf(why, sizeof(why), "connect: %s", strerror(soerr ? soerr : errno));
		finish(d, idx, false, why);
		return;
	}
	if (s->p.type == HC_HTTP)
		http_send(d, s);
	else
		finish(d, idx, true, "");
}

/* The end of an https check (hc_https.h). */
static void https_done(struct daemon *d, void *arg, enum hc_result r, const char *why)
{
	struct hc_slot *s = arg;

	s->https = NULL; /* gone already */
	if (r == HC_UNKNOWN)
		unknown(d, s->idx, why);
	else
		finish(d, s->idx, r == HC_OK, why);
}

static void start_check(struct daemon *d, struct hc_slot *s, const struct vip *v,
			const struct be *b)
{
	/* Through the encapsulation the check connects to the VIP, as clients do. */
	bool via_encap = d->cfg.hc_via_encap;
	const uint32_t *dst = via_encap ? v->key.addr : b->addr.addr;
	uint8_t family = via_encap ? v->key.family : b->addr.family;
	struct sockaddr_storage ss;
	socklen_t al;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (family == MAGLEV_AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

		a6->sin6_family = AF_INET6;
		memcpy(&a6->sin6_addr, dst, 16);
		a6->sin6_port = htons(s->p.port);
		al = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;

		a4->sin_family = AF_INET;
		a4->sin_addr.s_addr = dst[0];
		a4->sin_port = htons(s->p.port);
		al = sizeof(*a4);
	}
	s->started_ms = mono_ms();
	s->deadline_ms = s->started_ms + s->p.timeout_ms;
	if (via_encap) {
		struct maglev_hc_target t;
		char why[240];

		if (enc.err[0] || !enc.h) {
			snprintf(why, sizeof(why), "health_via_encap: %s",
				 enc.err[0] ? enc.err : "not attached");
			unknown(d, b->idx, why);
			return;
		}
		memset(&t, 0, sizeof(t));
		memcpy(t.backend, b->addr.addr, sizeof(t.backend));
		memcpy(t.vip, v->key.addr, sizeof(t.vip));
		t.backend_family = b->addr.family;
		t.vip_family = v->key.family;
		t.encap = v->encap;
		t.gue_port = htons(v->gue_port ? v->gue_port : MAGLEV_GUE_PORT_DEFAULT);
		t.port = htons(s->p.port);
		t.proto = is_dgram(s->p.type) ? IPPROTO_UDP : IPPROTO_TCP;
		if (hc_encap_set(enc.h, b->idx, &t)) {
			unknown(d, b->idx, "health_via_encap: writing the target failed");
			return;
		}
	}
	if (s->p.type == HC_HTTPS) {
		char why[96];

		s->phase = HC_CONNECTING;
		if (hc_https_start(d, &s->p, (struct sockaddr *)&ss,
				   via_encap ? MAGLEV_HC_MARK_BASE | b->idx : 0, https_done, s,
				   &s->https, why, sizeof(why)))
			unknown(d, b->idx, why);
		return;
	}
	fd = socket(ss.ss_family,
		    (is_dgram(s->p.type) ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		char why[96];

		snprintf(why, sizeof(why), "socket: %s", strerror(errno));
		unknown(d, b->idx, why);
		return;
	}
	if (via_encap) {
		uint32_t mark = MAGLEV_HC_MARK_BASE | b->idx;

		if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
			close(fd);
			unknown(d, b->idx, "health_via_encap: SO_MARK refused");
			return;
		}
	}
	s->src.fd = fd;
	s->src.cb = on_ready;
	s->phase = HC_CONNECTING;
	if (connect(fd, (struct sockaddr *)&ss, al) && errno != EINPROGRESS) {
		int e = errno;
		char why[96];

		snprintf(why, sizeof(why), "connect: %s", strerror(e));
		close(fd);
		s->src.fd = -1;
		if (hc_local_errno(e))
			unknown(d, b->idx, why);
		else
			finish(d, b->idx, false, why);
		return;
	}
	if (is_dgram(s->p.type)) {
		/* A UDP connect only sets the peer: the request goes at once. */
		dgram_send(d, s);
		return;
	}
	if (ev_add(d, &s->src, EPOLLOUT)) {
		close(fd);
		s->src.fd = -1;
		unknown(d, b->idx, "epoll failed");
	}
}

/* Does any backend have a check (not "none")? */
static bool any_check(struct daemon *d)
{
	struct hc_params p;
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];

		if (!v || !v->nbe)
			continue;
		vip_hc(v, &d->cfg.hc, &p);
		if (p.type != HC_NONE)
			return true;
	}
	return false;
}

void health_tick(struct daemon *d)
{
	uint64_t now = mono_ms();
	uint32_t i, j;

	encap_sync(d, any_check(d));
	/* Checks of backends that are gone are dropped. */
	for (i = 1; i < MAGLEV_MAX_BACKENDS; i++) {
		if (slots[i] && d->reg->idx_used[i] != 1)
			slot_free(d, i);
	}
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];
		struct hc_params p;

		if (!v)
			continue;
		vip_hc(v, &d->cfg.hc, &p);
		for (j = 0; j < v->nbe; j++) {
			struct be *b = &v->bes[j];
			struct hc_slot *s = slots[b->idx];

			if (s && (s->gen != b->gen || s->vip_id != v->id)) {
				slot_free(d, b->idx);
				s = NULL;
			}
			if (p.type == HC_NONE) {
				if (s)
					slot_free(d, b->idx);
				/* Without checks a backend is up by definition. */
				if (!health_local_up(d, b))
					health_verdict(v->id, b->idx, b->gen, true, "no check");
				continue;
			}
			if (!s) {
				s = calloc(1, sizeof(*s));
				if (!s)
					continue;
				s->src.fd = -1;
				s->idx = b->idx;
				s->vip_id = v->id;
				s->gen = b->gen;
				s->last = -1;
				/* Spread first checks over one interval. */
				s->next_ms = now + (uint64_t)(rand() % (int)p.interval_ms) / 4;
				slots[b->idx] = s;
			}
			if (s->phase != HC_IDLE) {
				if (now >= s->deadline_ms)
					finish(d, b->idx, false, "timeout");
			} else if (now >= s->next_ms) {
				s->p = p;
				start_check(d, s, v, b);
			}
		}
	}
	hc_https_kick();
	/* This tick's verdicts and those since the last one, in one commit. */
	health_verdicts_apply(d);
}

void health_json(struct daemon *d, const struct vip *v, const struct be *b, json_object *o)
{
	const struct hc_slot *s = slots[b->idx];
	struct hc_params p;

	vip_hc(v, &d->cfg.hc, &p);
	json_object_object_add(o, "check", json_object_new_string(hc_type_name(p.type)));
	if (b->start_down)
		json_object_object_add(o, "start_down", json_object_new_boolean(true));
	/* health_scope fleet: this balancer's own verdict, one vote of the fleet's. */
	if (fleet_health_on(d))
		json_object_object_add(
			o, "local_verdict",
			json_object_new_string(health_local_up(d, b) ? "up" : "down"));
	if (p.type == HC_NONE)
		return;
	json_object_object_add(o, "port", json_object_new_int64(p.port));
	json_object_object_add(o, "via",
			       json_object_new_string(d->cfg.hc_via_encap ? "encap" : "direct"));
	if (!s || s->gen != b->gen)
		return;
	json_object_object_add(o, "last_result",
			       s->last < 0 ? NULL : json_object_new_string(result_names[s->last]));
	if (s->last > HC_OK)
		json_object_object_add(o, "last_error", json_object_new_string(s->last_error));
	if (s->last >= 0) {
		json_object_object_add(o, "last_check_ms_ago",
				       json_object_new_int64((int64_t)(mono_ms() - s->last_ms)));
		json_object_object_add(o, "rtt_ms", json_object_new_double(s->last_rtt_ms));
	}
	json_object_object_add(o, "ok_streak", json_object_new_int64(s->ok_streak));
	json_object_object_add(o, "fail_streak", json_object_new_int64(s->fail_streak));
	json_object_object_add(o, "checks_ok", json_object_new_uint64(s->checks[HC_OK]));
	json_object_object_add(o, "checks_failed", json_object_new_uint64(s->checks[HC_FAIL]));
	json_object_object_add(o, "checks_unknown", json_object_new_uint64(s->checks[HC_UNKNOWN]));
}

uint64_t health_checks_total(uint32_t idx, enum hc_result r)
{
	const struct hc_slot *s = idx < MAGLEV_MAX_BACKENDS ? slots[idx] : NULL;

	return s ? s->checks[r] : 0;
}

uint64_t health_unknown_total(void)
{
	return unknown_total;
}

const char *hc_result_name(enum hc_result r)
{
	return result_names[r];
}
