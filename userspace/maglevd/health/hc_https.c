// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * https checks on libcurl's multi interface (hc_https.h). curl
 * says which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to call it
 * back (CURLMOPT_TIMERFUNCTION); both go into maglevd's epoll loop, a
 * timerfd for the timer, so no check blocks and no thread is needed.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/log.h"
#include "health/hc_body.h"
#include "health/hc_https.h"

/* A CA file that changed is read again after this long. */
#define CA_CACHE_S 60

struct hc_https {
	CURL *easy;
	struct curl_slist *connect_to, *headers;
	struct hc_https *next_spare;
	hc_https_done_fn done;
	void *arg;
	uint32_t mark;
	uint16_t want_status;
	bool added;   /* in the multi handle */
	bool stopped; /* the write callback ended the transfer: enough was read */
	struct hc_body body;
	char local[96]; /* the balancer's own error, if any: unknown */
	char err[CURL_ERROR_SIZE];
};

/* A socket curl asked to watch. Freed by hc_https_reap(): an event of the
 * batch being handled may still name it.
 */
struct hc_sock {
	struct ev_source src; /* first member */
	bool dead;
	struct hc_sock *next_dead;
};

static CURLM *multi;
static struct daemon *dmn;
static struct ev_source timer_src = {.fd = -1};
static struct hc_sock *dead_socks;
static uint64_t timer_at; /* when the timerfd fires (mono_ms); 0: not set */
/* Checks that ended, their easy handles kept for the next ones: a handle
 * reset costs less than one made and freed per check.
 */
static struct hc_https *spare;
static unsigned int nspare;
#define SPARE_MAX 4096

/* curl's errors that are the balancer's own (its options, its CA file,
 * its memory), not the backend's: the check is unknown.
 */
static bool hc_https_local(CURLcode rc)
{
	switch (rc) {
	case CURLE_FAILED_INIT:
	case CURLE_URL_MALFORMAT:
	case CURLE_NOT_BUILT_IN:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_INTERFACE_FAILED:
	case CURLE_UNKNOWN_OPTION:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CRL_BADFILE:
		return true;
	default:
		return false;
	}
}

static void drain(void)
{
	struct CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(multi, &left))) {
		struct hc_https *h = NULL;
		enum hc_result r;
		char why[160];
		long code = 0, oserr = 0;
		CURLcode rc = m->data.result;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&h);
		curl_easy_getinfo(m->easy_handle, CURLINFO_OS_ERRNO, &oserr);
		curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
		if (rc == CURLE_WRITE_ERROR && h->stopped)
			rc = CURLE_OK; /* the write callback had seen enough */
		r = HC_FAIL;
		if (h->local[0]) {
			snprintf(why, sizeof(why), "%s", h->local);
			r = HC_UNKNOWN;
		} else if (rc == CURLE_OPERATION_TIMEDOUT) {
			snprintf(why, sizeof(why), "timeout");
		} else if (rc == CURLE_COULDNT_CONNECT && oserr) {
			snprintf(why, sizeof(why), "connect: %s", strerror((int)oserr));
			if (hc_local_errno((int)oserr))
				r = HC_UNKNOWN;
		} else if (rc != CURLE_OK) {
			snprintf(why, sizeof(why), "https: %.140s",
				 h->err[0] ? h->err : curl_easy_strerror(rc));
			if (hc_https_local(rc))
				r = HC_UNKNOWN;
		} else if (code != (long)h->want_status) {
			snprintf(why, sizeof(why), "http: status %ld, want %u", code,
				 h->want_status);
		} else if (h->body.want_len && !h->body.found) {
			snprintf(why, sizeof(why), "http: body without the expected text");
		} else {
			r = HC_OK;
			why[0] = '\0';
		}
		{
			hc_https_done_fn done = h->done;
			void *arg = h->arg;

			hc_https_cancel(h);
			done(dmn, arg, r, why);
		}
	}
}

static void on_sock(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct hc_sock *s = (struct hc_sock *)src;
	int flags = 0, running;

	if (s->dead)
		return;
	if (events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(multi, src->fd, flags, &running);
	drain();
}

static int timer_cb(CURLM *m, long ms, void *userp);

static void on_timer(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t n;
	int running;
	long ms;

	if (read(src->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("health: timer read: %s", strerror(errno));
	timer_at = 0;
	curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
	drain();
	/* curl names a deadline only when it changes: one it named while an
	 * earlier one was set (and so ignored) is asked for here.
	 */
	if (curl_multi_timeout(multi, &ms) == CURLM_OK)
		timer_cb(multi, ms, NULL);
}

static int sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *sockp)
{
	struct hc_sock *s = sockp;
	uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	struct hc_https *h = NULL;

	if (what == CURL_POLL_REMOVE) {
		if (s) {
			ev_del(dmn, &s->src);
			s->dead = true;
			s->next_dead = dead_socks;
			dead_socks = s;
			curl_multi_assign(multi, fd, NULL);
		}
		return 0;
	}
	if (s)
		return ev_mod(dmn, &s->src, ev) ? -1 : 0;
	s = calloc(1, sizeof(*s));
	if (s) {
		s->src.fd = fd;
		s->src.cb = on_sock;
		if (!ev_add(dmn, &s->src, ev)) {
			curl_multi_assign(multi, fd, s);
			return 0;
		}
		free(s);
	}
	/* curl ends the transfer; it says nothing about the backend. */
	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&h);
	if (h)
		snprintf(h->local, sizeof(h->local), "epoll failed");
	return -1;
}

/*
 * curl's next timeout, on the timerfd. It is only ever brought forward: a
 * later deadline leaves the earlier one set, and when that fires curl
 * names its next one again; "no timeout" leaves it set too (a spare call
 * finds nothing to do). With thousands of checks in flight curl moves its
 * deadline at nearly every step, and a timerfd write for each cost more
 * than the spare calls.
 */
static int timer_cb(CURLM *m, long ms, void *userp)
{
	struct itimerspec its;
	uint64_t at;

	if (ms < 0)
		return 0;
	at = mono_ms() + (uint64_t)ms;
	if (timer_at && timer_at <= at)
		return 0;
	timer_at = at;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (ms % 1000) * 1000000L;
	if (!ms)
		its.it_value.tv_nsec = 1; /* now, from the loop: not from inside curl */
	return timerfd_settime(timer_src.fd, 0, &its, NULL) ? -1 : 0;
}

/* The check's socket, made here so that it carries the mark before it
 * connects: the health encapsulation picks the backend by it.
 */
static curl_socket_t open_sock(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct hc_https *h = clientp;
	int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);

	if (fd < 0) {
		snprintf(h->local, sizeof(h->local), "socket: %s", strerror(errno));
		return CURL_SOCKET_BAD;
	}
	if (h->mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &h->mark, sizeof(h->mark))) {
		snprintf(h->local, sizeof(h->local), "health_via_encap: SO_MARK refused");
		close(fd);
		return CURL_SOCKET_BAD;
	}
	/* Closed with a reset once the answer is in: no TIME_WAIT here. curl
	 * closes as soon as it has the answer, mostly before the server's FIN,
	 * and at thousands of checks a second the TIME_WAITs of a VIP's one
	 * destination (through the encapsulation) used up the local ports and
	 * made every connect search them.
	 */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &(struct linger){.l_onoff = 1, .l_linger = 0},
		   sizeof(struct linger));
	return fd;
}

/* The body: with no text expected the status is all that counts, so the
 * transfer ends at the first byte; else it ends once the search is over.
 */
static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	struct hc_https *h = userp;

	if (hc_body_feed(&h->body, data, size * nmemb)) {
		h->stopped = true;
		return 0;
	}
	return size * nmemb;
}

static int setup(struct daemon *d)
{
	if (multi)
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	timer_src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	timer_src.cb = on_timer;
	if (timer_src.fd < 0 || ev_add(d, &timer_src, EPOLLIN))
		goto fail;
	multi = curl_multi_init();
	if (!multi)
		goto fail;
	dmn = d;
	curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	return 0;
fail:
	if (timer_src.fd >= 0) {
		ev_del(d, &timer_src);
		close(timer_src.fd);
	}
	timer_src.fd = -1;
	return -1;
}

/* "addr" or "[addr]" and the port of a socket address. */
static void addr_text(const struct sockaddr *a, char *out, size_t len, unsigned int *port)
{
	char buf[INET6_ADDRSTRLEN];

	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;

		inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof(buf));
		snprintf(out, len, "[%s]", buf);
		*port = ntohs(a6->sin6_port);
	} else {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;

		inet_ntop(AF_INET, &a4->sin_addr, buf, sizeof(buf));
		snprintf(out, len, "%s", buf);
		*port = ntohs(a4->sin_port);
	}
}

int hc_https_start(struct daemon *d, const struct hc_params *p, const struct sockaddr *addr,
		   uint32_t mark, hc_https_done_fn done, void *arg, struct hc_https **out,
		   char *why, size_t whylen)
{
	long verify = p->tls_verify == HC_TLS_VERIFY_ON;
	struct hc_https *h;
	char ip[INET6_ADDRSTRLEN + 2], url[320], ct[400], host[160];
	unsigned int port;

	if (setup(d)) {
		snprintf(why, whylen, "https: libcurl setup failed");
		return -1;
	}
	if (spare) {
		CURL *easy = spare->easy;

		h = spare;
		spare = h->next_spare;
		nspare--;
		memset(h, 0, sizeof(*h));
		h->easy = easy;
		curl_easy_reset(easy);
	} else {
		h = calloc(1, sizeof(*h));
		if (h)
			h->easy = curl_easy_init();
	}
	if (!h || !h->easy) {
		free(h);
		snprintf(why, whylen, "https: out of memory");
		return -1;
	}
	h->done = done;
	h->arg = arg;
	h->mark = mark;
	h->want_status = p->status;
	hc_body_init(&h->body, p->body);
	addr_text(addr, ip, sizeof(ip), &port);
	/* The name, if any, goes into the URL (Host, SNI, the name verified);
	 * the connection goes to the address all the same.
	 */
	snprintf(url, sizeof(url), "https://%s:%u/", p->host[0] ? p->host : ip, port);
	/* Host without the port, as the checks have always sent it. */
	snprintf(host, sizeof(host), "Host: %s", p->host[0] ? p->host : ip);
	h->headers = curl_slist_append(NULL, host);
	if (h->headers)
		curl_slist_append(h->headers, "Connection: close"); /* appends in place */
	if (p->host[0]) {
		snprintf(ct, sizeof(ct), "%s:%u:%s:%u", p->host, port, ip, port);
		h->connect_to = curl_slist_append(NULL, ct);
	}
	if (!h->headers || !h->headers->next || (p->host[0] && !h->connect_to)) {
		hc_https_cancel(h);
		snprintf(why, whylen, "https: out of memory");
		return -1;
	}
	curl_easy_setopt(h->easy, CURLOPT_PRIVATE, h);
	curl_easy_setopt(h->easy, CURLOPT_URL, url);
	/* The path goes on the request line as configured, byte for byte. */
	curl_easy_setopt(h->easy, CURLOPT_REQUEST_TARGET, p->path);
	curl_easy_setopt(h->easy, CURLOPT_CONNECT_TO, h->connect_to);
	curl_easy_setopt(h->easy, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(h->easy, CURLOPT_PROXY, ""); /* no *_proxy from the environment */
	curl_easy_setopt(h->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->easy, CURLOPT_USERAGENT, "maglevd-health");
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_TCP_NODELAY, 0L); /* one write per request */
	/* An answer's head and the start of its body: 16 KiB were mostly untouched. */
	curl_easy_setopt(h->easy, CURLOPT_BUFFERSIZE, 4096L);
	curl_easy_setopt(h->easy, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
	/* Each check its own connection: through the encapsulation every
	 * backend of a VIP has the same address, told apart by the mark only.
	 */
	curl_easy_setopt(h->easy, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(h->easy, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(h->easy, CURLOPT_OPENSOCKETFUNCTION, open_sock);
	curl_easy_setopt(h->easy, CURLOPT_OPENSOCKETDATA, h);
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->easy, CURLOPT_ERRORBUFFER, h->err);
	/* A resumed session skips the certificate: judge it every time. */
	curl_easy_setopt(h->easy, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	curl_easy_setopt(h->easy, CURLOPT_SSL_VERIFYPEER, verify);
	curl_easy_setopt(h->easy, CURLOPT_SSL_VERIFYHOST, verify ? 2L : 0L);
	if (p->ca_file[0])
		curl_easy_setopt(h->easy, CURLOPT_CAINFO, p->ca_file);
	curl_easy_setopt(h->easy, CURLOPT_CA_CACHE_TIMEOUT, (long)CA_CACHE_S);
	if (curl_multi_add_handle(multi, h->easy) != CURLM_OK) {
		hc_https_cancel(h);
		snprintf(why, whylen, "https: libcurl refused the transfer");
		return -1;
	}
	h->added = true;
	*out = h;
	return 0;
}

void hc_https_cancel(struct hc_https *h)
{
	if (!h)
		return;
	if (h->added)
		curl_multi_remove_handle(multi, h->easy);
	curl_slist_free_all(h->connect_to);
	curl_slist_free_all(h->headers);
	h->connect_to = h->headers = NULL;
	if (nspare < SPARE_MAX) {
		h->next_spare = spare;
		spare = h;
		nspare++;
		return;
	}
	curl_easy_cleanup(h->easy);
	free(h);
}

void hc_https_kick(void)
{
	int running;

	if (!multi)
		return;
	curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
	drain();
}

void hc_https_reap(void)
{
	while (dead_socks) {
		struct hc_sock *s = dead_socks;

		dead_socks = s->next_dead;
		free(s);
	}
}
