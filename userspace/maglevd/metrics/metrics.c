// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Prometheus text exposition (format 0.0.4) over a minimal HTTP/1.0 server:
 * GET /metrics answers with every counter, rendered off the event loop
 * (metrics_snap.h); anything else gets 404.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "core/log.h"
#include "metrics/metrics_snap.h"
#include "core/stream.h"

#define METRICS_CLIENT_TIMEOUT_MS 5000
#define METRICS_MAX_REQUEST	  8192
/* A scrape's answer may take this long (65,535 backends: about a second). */
#define METRICS_RENDER_TIMEOUT_MS 30000

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

static const char http_500[] = "HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n";

/*
 * One scrape in flight: the loop takes the snapshot, a thread of its own
 * reads the datapath and formats (the slow part), then signals done; every
 * client that asked meanwhile gets the same answer. From pthread_create()
 * to pthread_join() the thread owns job (the loop reads job.running only)
 * and touches nothing else of the daemon but the locked flow counts.
 */
static struct {
	bool running;
	pthread_t thread;
	struct metrics_snap *snap;
	struct maglev_dp *dp;
	char *resp; /* the thread's result, the whole HTTP answer, read after pthread_join() */
	size_t len;
} job;
static struct ev_source done_src = {.fd = -1};

/* The whole answer, header and body, in one buffer: built here, not on the loop. */
static char *http_200(const char *body, size_t blen, size_t *out_len)
{
	char head[256], *out;
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
		     "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     blen);
	if (n < 0 || (size_t)n >= sizeof(head))
		return NULL;
	out = malloc((size_t)n + blen);
	if (!out)
		return NULL;
	memcpy(out, head, (size_t)n);
	memcpy(out + n, body, blen);
	*out_len = (size_t)n + blen;
	return out;
}

static void *render_thread(void *arg)
{
	uint64_t one = 1;
	size_t blen = 0;
	char *body;

	(void)arg;
	body = metrics_snap_render(job.snap, job.dp, &blen);
	job.resp = body ? http_200(body, blen, &job.len) : NULL;
	free(body);
	if (write(done_src.fd, &one, sizeof(one)) != sizeof(one))
		log_warn("metrics: cannot signal a finished scrape: %s", strerror(errno));
	return NULL;
}

static void job_join(void)
{
	pthread_join(job.thread, NULL);
	job.running = false;
	metrics_snap_free(job.snap);
	job.snap = NULL;
}

static void on_done(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t n;
	char *resp;

	if (read(src->fd, &n, sizeof(n)) != sizeof(n) || !job.running)
		return;
	job_join();
	resp = job.resp;
	job.resp = NULL;
	if (!resp) {
		resp = strdup(http_500);
		job.len = resp ? strlen(resp) : 0;
	}
	if (resp)
		stream_answer_deferred(d, &metrics_clients, resp, job.len);
}

/* Start a scrape unless one is in flight; 0 or -errno. */
static int job_start(struct daemon *d)
{
	int r;

	if (job.running)
		return 0;
	if (done_src.fd < 0) {
		done_src.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		done_src.cb = on_done;
		if (done_src.fd < 0)
			return -errno;
		if (ev_add(d, &done_src, EPOLLIN)) {
			close(done_src.fd);
			done_src.fd = -1;
			return -EIO;
		}
	}
	job.snap = metrics_snap_take(d);
	if (!job.snap)
		return -ENOMEM;
	job.dp = d->dp;
	job.resp = NULL;
	r = pthread_create(&job.thread, NULL, render_thread, NULL);
	if (r) {
		metrics_snap_free(job.snap);
		job.snap = NULL;
		return -r;
	}
	job.running = true;
	return 0;
}

void metrics_scrape_join(struct daemon *d)
{
	if (job.running) {
		job_join();
		free(job.resp);
		job.resp = NULL;
	}
	if (done_src.fd >= 0) {
		ev_del(d, &done_src);
		close(done_src.fd);
		done_src.fd = -1;
	}
}

static void metrics_answer(struct daemon *d, int fd, const char *in, size_t len, char **out,
			   size_t *out_len)
{
	int n;

	if ((len >= 13 && !strncmp(in, "GET /metrics ", 13)) ||
	    (len >= 13 && !strncmp(in, "GET /metrics?", 13))) {
		if (job_start(d)) {
			*out = strdup(http_500);
			*out_len = *out ? strlen(*out) : 0;
			return;
		}
		stream_defer(d, METRICS_RENDER_TIMEOUT_MS);
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

bool metrics_sample(struct daemon *d)
{
	uint64_t now = mono_ms();
	double dt = (double)(now - last_sample_ms) / 1e3;
	bool have_bs;
	uint32_t i, j;

	/* Every window at least a second long on the clock the rates are
	 * divided by: the tick's own clock reading, taken before the other
	 * tick work, would let a window that follows a slow tick be shorter.
	 */
	if (last_sample_ms && now - last_sample_ms < 1000)
		return false;
	if (!last_sample_ms)
		dt = 0;
	last_sample_ms = now;
	d->rate_window_s = dt;
	d->rate_samples++;
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
	return true;
}
