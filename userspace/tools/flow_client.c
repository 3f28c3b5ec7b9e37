// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * flow-client: open N flows to a VIP, each from its own (source address,
 * source port), and report which backend answered each one. Flow i uses
 * source address i mod S and source port BASE + i / S, so a second run with
 * the same arguments repeats exactly the same 5-tuples: that is how the tests
 * see which flows moved when the backend set changed.
 *
 * TCP: one HTTP/1.1 GET per flow (backend-server answers with its name), then
 * an abortive close (RST), so no TIME_WAIT keeps the tuple from being reused
 * at once; with -e, one line to backend-server's TCP line echo instead.
 * UDP (-u): one datagram per flow to backend-server's UDP echo, retried.
 *
 * Output: "flows N ok N failed N", then "backend NAME COUNT" per backend;
 * with --map, one "SRC SPORT BACKEND" line per flow ("-" when it failed).
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "addrlist.h"

#define NAME_LEN     64
#define MAX_BACKENDS 64

struct flow {
	int fd;
	int tries;
	bool sent;
	uint64_t deadline_ms;
	size_t len;
	char buf[1024];
	char backend[NAME_LEN + 1];
};

static struct addrlist srcs;
static struct sockaddr_storage dst;
static socklen_t dst_len;
static bool udp, echo;
static int timeout_ms = 5000;
static int udp_tries = 3;
static int epfd;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static void flow_close(struct flow *f)
{
	if (f->fd >= 0) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		if (!udp)
			setsockopt(f->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(f->fd);
		f->fd = -1;
	}
}

/* Open flow i; false if the socket could not even be set up. */
static bool flow_open(struct flow *f, int i, int sport_base)
{
	struct sockaddr_storage src = srcs.a[i % srcs.n];
	struct epoll_event ev = {.data.u32 = i};
	int one = 1;

	f->fd = socket(dst.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0);
	if (f->fd < 0)
		return false;
	setsockopt(f->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr_set_port(&src, sport_base + i / srcs.n);
	if (bind(f->fd, (struct sockaddr *)&src, srcs.len[i % srcs.n]) < 0 ||
	    (connect(f->fd, (struct sockaddr *)&dst, dst_len) < 0 && errno != EINPROGRESS)) {
		flow_close(f);
		return false;
	}
	if (!udp)
		setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ev.events = udp ? EPOLLIN : EPOLLIN | EPOLLOUT;
	epoll_ctl(epfd, EPOLL_CTL_ADD, f->fd, &ev);
	f->deadline_ms = now_ms() + (udp ? timeout_ms / udp_tries : timeout_ms);
	return true;
}

static void udp_send(struct flow *f, int i)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "flow %d\n", i);

	send(f->fd, msg, n, 0);
	f->tries++;
}

/* Parse the backend name out of what the server sent; true when done. */
static bool flow_parse(struct flow *f)
{
	if (udp || echo) {
		char *sp = memchr(f->buf, ' ', f->len);

		if (echo && !memchr(f->buf, '\n', f->len))
			return false;
		if (!sp || sp == f->buf || sp - f->buf > NAME_LEN)
			return false;
		memcpy(f->backend, f->buf, sp - f->buf);
		return true;
	} else {
		char *hdr_end = memmem(f->buf, f->len, "\r\n\r\n", 4);
		char *h = memmem(f->buf, f->len, "\r\nX-Backend: ", 13);
		char *eol;

		if (!hdr_end || !h || h > hdr_end)
			return false;
		h += 13;
		eol = memchr(h, '\r', hdr_end + 2 - h);
		if (!eol || eol == h || eol - h > NAME_LEN)
			return false;
		memcpy(f->backend, h, eol - h);
		return true;
	}
}

/* Handle readiness of flow i; true when the flow is finished (ok or not). */
static bool flow_event(struct flow *f, int i, uint32_t events)
{
	if (!udp && !f->sent && (events & EPOLLOUT)) {
		static const char req[] =
			"GET / HTTP/1.1\r\nHost: vip\r\nUser-Agent: flow-client\r\n\r\n";
		struct epoll_event ev = {.data.u32 = i};
		int err = 0;
		socklen_t el = sizeof(err);

		getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err || send(f->fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != sizeof(req) - 1)
			return true;
		f->sent = true;
		ev.events = EPOLLIN;
		epoll_ctl(epfd, EPOLL_CTL_MOD, f->fd, &ev);
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		ssize_t n = recv(f->fd, f->buf + f->len, sizeof(f->buf) - 1 - f->len, 0);

		if (n < 0 && errno == EAGAIN)
			return false;
		if (n <= 0)
			return true;
		f->len = udp ? (size_t)n : f->len + n;
		if (flow_parse(f) || f->len == sizeof(f->buf) - 1)
			return true;
		if (udp)
			f->len = 0;
	}
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flow-client -d VIP -p PORT -s SRC[,SRC...] [-s ...] [-n FLOWS] [-u|-e]\n"
		"                   [-b SPORT_BASE] [-c CONCURRENCY] [-t TIMEOUT_MS] [-m MAPFILE]\n"
		"  -u  UDP echo instead of HTTP over TCP\n"
		"  -e  TCP line echo instead of HTTP\n"
		"Flow i: source address i mod S, source port SPORT_BASE + i / S (default "
		"20000).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {}};
	int port = 0, nflows = 1000, sport_base = 20000, conc = 200, c;
	int started = 0, finished = 0, ok = 0, nb = 0, active = 0, rc = 0;
	char names[MAX_BACKENDS][NAME_LEN + 1];
	int counts[MAX_BACKENDS] = {0};
	const char *dst_s = NULL, *map = NULL;
	struct flow *flows;

	while ((c = getopt_long(argc, argv, "d:p:s:n:ueb:c:t:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dst_s = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			if (addrlist_add(&srcs, optarg, "flow-client"))
				return 2;
			break;
		case 'n':
			nflows = atoi(optarg);
			break;
		case 'u':
			udp = true;
			break;
		case 'e':
			echo = true;
			break;
		case 'b':
			sport_base = atoi(optarg);
			break;
		case 'c':
			conc = atoi(optarg);
			break;
		case 't':
			timeout_ms = atoi(optarg);
			break;
		case 'm':
			map = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!dst_s || port <= 0 || port > 65535 || !srcs.n || nflows <= 0 || conc <= 0 ||
	    timeout_ms < 10 || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (addr_parse(dst_s, port, &dst, &dst_len)) {
		fprintf(stderr, "flow-client: bad VIP address '%s'\n", dst_s);
		return 2;
	}
	for (int i = 0; i < srcs.n; i++) {
		if (srcs.a[i].ss_family != dst.ss_family) {
			fprintf(stderr, "flow-client: source and VIP address families differ\n");
			return 2;
		}
	}
	if (sport_base < 1024 || sport_base + (nflows - 1) / srcs.n > 65535) {
		fprintf(stderr, "flow-client: source ports %d.. do not fit below 65536\n",
			sport_base);
		return 2;
	}
	flows = calloc(nflows, sizeof(*flows));
	epfd = epoll_create1(0);
	if (!flows || epfd < 0) {
		perror("flow-client");
		free(flows);
		return 1;
	}
	for (int i = 0; i < nflows; i++)
		flows[i].fd = -1;

	while (finished < nflows) {
		struct epoll_event ev[64];
		uint64_t now;
		int n;

		while (active < conc && started < nflows) {
			struct flow *f = &flows[started];

			if (flow_open(f, started, sport_base)) {
				if (udp)
					udp_send(f, started);
				active++;
			} else {
				finished++;
			}
			started++;
		}
		n = epoll_wait(epfd, ev, 64, 20);
		for (int k = 0; k < n; k++) {
			int i = ev[k].data.u32;
			struct flow *f = &flows[i];

			if (f->fd >= 0 && flow_event(f, i, ev[k].events)) {
				flow_close(f);
				active--;
				finished++;
			}
		}
		now = now_ms();
		for (int i = 0; i < started; i++) {
			struct flow *f = &flows[i];

			if (f->fd < 0 || now < f->deadline_ms)
				continue;
			if (udp && f->tries < udp_tries) {
				udp_send(f, i);
				f->deadline_ms = now + timeout_ms / udp_tries;
				continue;
			}
			flow_close(f);
			active--;
			finished++;
		}
	}

	for (int i = 0; i < nflows; i++) {
		int b;

		if (!flows[i].backend[0])
			continue;
		ok++;
		for (b = 0; b < nb && strcmp(names[b], flows[i].backend); b++)
			;
		if (b == nb) {
			if (nb == MAX_BACKENDS)
				continue;
			strcpy(names[nb++], flows[i].backend);
		}
		counts[b]++;
	}
	printf("flows %d ok %d failed %d\n", nflows, ok, nflows - ok);
	for (int b = 0; b < nb; b++)
		printf("backend %s %d\n", names[b], counts[b]);
	if (map) {
		FILE *m = fopen(map, "w");

		if (!m) {
			perror(map);
			rc = 1;
			goto out;
		}
		for (int i = 0; i < nflows; i++) {
			char a[INET6_ADDRSTRLEN];

			fprintf(m, "%s %d %s\n", addr_str(&srcs.a[i % srcs.n], a, sizeof(a)),
				sport_base + i / srcs.n,
				flows[i].backend[0] ? flows[i].backend : "-");
		}
		if (fclose(m)) {
			perror(map);
			rc = 1;
		}
	}
out:
	/* Freed so that a leak checker (selftests/sanitize) sees a clean exit. */
	free(flows);
	close(epfd);
	return rc;
}
