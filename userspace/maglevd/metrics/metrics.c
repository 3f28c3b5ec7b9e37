// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The metrics endpoint on libmicrohttpd: GET /metrics (Prometheus text
 * format 0.0.4), /-/healthy and /-/ready, over HTTP or HTTPS with basic
 * authentication from a web config (web_config.h). libmicrohttpd runs its own
 * threads, one per connection: a slow or hostile client holds a thread of its
 * own, never the event loop. A connection that wants a scrape asks the loop
 * through an eventfd; the loop takes the snapshot and a render thread formats
 * it (metrics_snap.h); every connection that asked meanwhile gets that same
 * answer, shared, not copied.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "core/log.h"
#include "metrics/metrics_snap.h"
#include "metrics/web_config.h"

/* A client idle this long is dropped (libmicrohttpd counts whole seconds). */
#define METRICS_CLIENT_TIMEOUT_S 5
/* A request's header, its memory all told. */
#define METRICS_CONN_MEMORY (32 * 1024)
/* Of METRICS_MAX_CLIENTS, what one address may hold: one host cannot take them all. */
#define METRICS_PER_IP_CLIENTS 16
/* A scrape's answer may take this long (65,535 backends: about a second). */
#define METRICS_RENDER_TIMEOUT_MS 30000
/* /-/ready: the event loop answers within this. */
#define METRICS_READY_TIMEOUT_MS 2000

static uint64_t last_sample_ms;

/* Every backend's counters by index, read in batches (1.5 MiB, kept). */
static struct maglev_backend_stats *be_stats;

static bool all_backend_stats(struct daemon *d)
{
	if (!be_stats)
		be_stats = calloc(MAGLEV_MAX_BACKENDS, sizeof(*be_stats));
	return be_stats && !maglev_dp_backend_stats_all(d->dp, be_stats);
}

/* One scrape's text, shared by the connections that answer with it. */
struct body {
	unsigned int refs; /* under sh.lock */
	size_t len;
	char *text;
};

/*
 * What the connections' threads and the loop share, under lock: a scrape
 * wanted, the scrapes finished and the last one's answer, the readiness
 * pings and the loop's answers.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* on CLOCK_MONOTONIC */
	bool scrape_wanted, stopping, cond_ready;
	uint64_t scrapes_done;
	struct body *last; /* NULL: the last scrape failed */
	uint64_t pings, pongs;
	bool loop_ready;
} sh = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct MHD_Daemon *mhd;
static struct web_config web;
static struct ev_source req_src = {.fd = -1};

static void body_put(struct body *b)
{
	if (b && !--b->refs) {
		free(b->text);
		free(b);
	}
}

static void body_release(void *cls)
{
	pthread_mutex_lock(&sh.lock);
	body_put(cls);
	pthread_mutex_unlock(&sh.lock);
}

/*
 * One scrape in flight: the loop takes the snapshot, a thread of its own
 * reads the datapath and formats (the slow part), then signals done. From
 * pthread_create() to pthread_join() the thread owns job (the loop reads
 * job.running only) and touches nothing else of the daemon but the locked
 * flow counts.
 */
static struct {
	bool running;
	pthread_t thread;
	struct metrics_snap *snap;
	struct maglev_dp *dp;
	char *text; /* the thread's result, read after pthread_join() */
	size_t len;
} job;
static struct ev_source done_src = {.fd = -1};

static void *render_thread(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	job.text = metrics_snap_render(job.snap, job.dp, &job.len);
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

/* A scrape is over (text NULL: it failed): every connection waiting gets it. */
static void publish(char *text, size_t len)
{
	struct body *b = text ? calloc(1, sizeof(*b)) : NULL;

	if (b) {
		b->refs = 1;
		b->text = text;
		b->len = len;
	} else {
		free(text);
	}
	pthread_mutex_lock(&sh.lock);
	body_put(sh.last);
	sh.last = b;
	sh.scrapes_done++;
	sh.scrape_wanted = false;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
}

static void on_done(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t n;

	if (read(src->fd, &n, sizeof(n)) != sizeof(n) || !job.running)
		return;
	job_join();
	publish(job.text, job.len);
	job.text = NULL;
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
	job.text = NULL;
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
		free(job.text);
		job.text = NULL;
	}
	if (done_src.fd >= 0) {
		ev_del(d, &done_src);
		close(done_src.fd);
		done_src.fd = -1;
	}
}

/* On the loop: what the connections asked for since the last time. */
static void on_request(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t n;
	bool want;

	if (read(src->fd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_mutex_lock(&sh.lock);
	want = sh.scrape_wanted && !job.running;
	sh.pongs = sh.pings;
	sh.loop_ready = !d->stop;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
	if (want && job_start(d))
		publish(NULL, 0);
}

static void kick_loop(void)
{
	uint64_t one = 1;

	if (write(req_src.fd, &one, sizeof(one)) != sizeof(one) && errno != EAGAIN)
		log_warn("metrics: cannot wake the event loop: %s", strerror(errno));
}

/* Wait on sh.cond (locked) until DEADLINE; false once it has passed. */
static bool wait_until(const struct timespec *deadline)
{
	return pthread_cond_timedwait(&sh.cond, &sh.lock, deadline) != ETIMEDOUT;
}

static struct timespec deadline_in(uint32_t ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* A scrape's answer, shared (body_release() when sent); NULL if it failed or timed out. */
static struct body *scrape(void)
{
	struct timespec dl = deadline_in(METRICS_RENDER_TIMEOUT_MS);
	struct body *b = NULL;
	uint64_t gen;

	pthread_mutex_lock(&sh.lock);
	gen = sh.scrapes_done;
	sh.scrape_wanted = true;
	pthread_mutex_unlock(&sh.lock);
	kick_loop();
	pthread_mutex_lock(&sh.lock);
	while (!sh.stopping && sh.scrapes_done == gen && wait_until(&dl))
		;
	if (!sh.stopping && sh.scrapes_done != gen && sh.last) {
		b = sh.last;
		b->refs++;
	}
	pthread_mutex_unlock(&sh.lock);
	return b;
}

/* Ready: the event loop answers within METRICS_READY_TIMEOUT_MS and maglevd is not stopping. */
static bool loop_ready(void)
{
	struct timespec dl = deadline_in(METRICS_READY_TIMEOUT_MS);
	uint64_t mine;
	bool ok;

	pthread_mutex_lock(&sh.lock);
	mine = ++sh.pings;
	pthread_mutex_unlock(&sh.lock);
	kick_loop();
	pthread_mutex_lock(&sh.lock);
	while (!sh.stopping && sh.pongs < mine && wait_until(&dl))
		;
	ok = !sh.stopping && sh.pongs >= mine && sh.loop_ready;
	pthread_mutex_unlock(&sh.lock);
	return ok;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static bool authorized(struct MHD_Connection *c)
{
	char *pass = NULL, *user;
	bool ok;

	if (!web.nusers)
		return true;
	user = MHD_basic_auth_get_username_password(c, &pass);
	ok = user && pass && web_config_auth(&web, user, pass);
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static int seen;
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct body *b;

	/* The first call has the header only: answer once the request is whole. */
	if (!*con_cls) {
		*con_cls = &seen;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (!authorized(c)) {
		static const char denied[] = "authentication required\n";

		r = MHD_create_response_from_buffer(sizeof(denied) - 1, (void *)denied,
						    MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		ret = MHD_queue_basic_auth_fail_response(c, "maglevd", r);
		MHD_destroy_response(r);
		return ret;
	}
	if (!strcmp(url, "/-/healthy"))
		return answer_text(c, MHD_HTTP_OK, "Healthy\n");
	if (!strcmp(url, "/-/ready"))
		return loop_ready() ? answer_text(c, MHD_HTTP_OK, "Ready\n")
				    : answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "Not ready\n");
	if (strcmp(url, "/metrics"))
		return answer_text(c, MHD_HTTP_NOT_FOUND, "metrics are at /metrics\n");
	b = scrape();
	if (!b)
		return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "scrape failed\n");
	r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->text, body_release,
								   b);
	if (!r) {
		body_release(b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static int listen_socket(const char *listen_addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct ctl_addr a;
	uint16_t port;
	socklen_t al;
	int fd, one = 1;

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
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
	return fd;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[256];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_debug("metrics: %s", line);
}

int metrics_start(struct daemon *d, const char *listen_addr, const char *web_config, char *err,
		  size_t errlen)
{
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_ITC | MHD_USE_ERROR_LOG;
	int fd;

	if (!listen_addr[0])
		return 0;
	if (!sh.cond_ready) {
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&sh.cond, &ca);
		pthread_condattr_destroy(&ca);
		sh.cond_ready = true;
	}
	if (web_config[0] && web_config_load(web_config, &web, err, errlen))
		return -EINVAL;
	if (web.cert_pem && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen, "%s: TLS asked for, and libmicrohttpd has no TLS",
			 web_config);
		web_config_free(&web);
		return -ENOTSUP;
	}
	fd = listen_socket(listen_addr, err, errlen);
	if (fd < 0) {
		web_config_free(&web);
		return fd;
	}
	req_src.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	req_src.cb = on_request;
	if (req_src.fd < 0 || ev_add(d, &req_src, EPOLLIN)) {
		snprintf(err, errlen, "metrics: eventfd: %s", strerror(errno));
		goto fail;
	}
	sh.stopping = false;
	if (web.cert_pem)
		flags |= MHD_USE_TLS;
	mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
			       MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CLIENTS,
			       MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			       (unsigned int)METRICS_PER_IP_CLIENTS, MHD_OPTION_CONNECTION_TIMEOUT,
			       (unsigned int)METRICS_CLIENT_TIMEOUT_S,
			       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_CONN_MEMORY,
			       MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			       web.cert_pem ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END,
			       web.cert_pem, MHD_OPTION_HTTPS_MEM_KEY, web.key_pem, MHD_OPTION_END);
	if (!mhd) {
		snprintf(err, errlen, "metrics on %s: libmicrohttpd did not start%s", listen_addr,
			 web.cert_pem ? " (is the key the certificate's, both PEM?)" : "");
		goto fail;
	}
	return 0;
fail:
	if (req_src.fd >= 0) {
		ev_del(d, &req_src);
		close(req_src.fd);
		req_src.fd = -1;
	}
	close(fd);
	web_config_free(&web);
	return -EIO;
}

void metrics_stop(struct daemon *d)
{
	if (!mhd)
		return;
	/* Connections waiting for a scrape or the loop give up now: the stop joins them. */
	pthread_mutex_lock(&sh.lock);
	sh.stopping = true;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
	MHD_stop_daemon(mhd);
	mhd = NULL;
	ev_del(d, &req_src);
	close(req_src.fd);
	req_src.fd = -1;
	web_config_free(&web);
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
