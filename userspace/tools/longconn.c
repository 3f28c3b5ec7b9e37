// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longconn: hold N long-lived TCP connections to a VIP (backend-server's line
 * echo, or with --http its HTTP/1.1 keep-alive service) and exchange a line
 * (a request) on each every INTERVAL ms, to prove that
 * connections survive changes to the load balancer. It counts what a user
 * would notice: resets, connections closed or timed out, replies from a
 * different backend than the connection started on, and the longest stall
 * (the largest gap between two replies on one connection, or since the last
 * reply for one still waiting at the end).
 *
 * Runs for DURATION seconds or until SIGTERM/SIGINT, then prints the report;
 * SIGUSR1 prints an interim one. Report lines:
 *   conns N established N alive N resets N closed N errors N switched N
 *   replies N max_stall_ms N
 *   backend NAME CONNS alive N   (per backend the connections started on,
 *                                 and how many of them are still up)
 * Exit status 0 when every connection stayed up with no stall over the
 * --max-stall limit (default 1000 ms), 1 otherwise, 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "addrlist.h"

#define NAME_LEN	   64
#define MAX_CONNS	   1000
#define CONNECT_TIMEOUT_MS 5000

enum state { CONNECTING, UP, DEAD };

struct conn {
	int fd;
	enum state state;
	bool waiting; /* a line was sent and its reply has not come back */
	unsigned int seq;
	uint64_t next_send_ms, last_reply_ms, max_gap_ms, started_ms;
	size_t len;
	char buf[512];
	char backend[NAME_LEN + 1];
};

static struct conn conns[MAX_CONNS];
static int nconns = 50, interval_ms = 100;
static bool http;
static unsigned long resets, closed, errors, switched, replies;
static volatile sig_atomic_t stop, want_report;

static void on_stop(int sig)
{
	stop = 1;
}

static void on_usr1(int sig)
{
	want_report = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static void conn_fail(struct conn *c, int err)
{
	if (c->state == DEAD)
		return;
	if (err == ECONNRESET || err == EPIPE)
		resets++;
	else if (err == 0)
		closed++;
	else
		errors++;
	c->state = DEAD;
	close(c->fd);
	c->fd = -1;
}

/* Largest stall so far; a connection still waiting counts up to now. */
static uint64_t max_stall(uint64_t now)
{
	uint64_t m = 0;

	for (int i = 0; i < nconns; i++) {
		const struct conn *c = &conns[i];
		uint64_t gap = c->max_gap_ms;

		if (c->state == UP && c->last_reply_ms && now - c->last_reply_ms > gap)
			gap = now - c->last_reply_ms;
		if (gap > m)
			m = gap;
	}
	return m;
}

static void report(const char *prefix)
{
	int established = 0, alive = 0, done[MAX_CONNS] = {0};

	for (int i = 0; i < nconns; i++) {
		established += conns[i].backend[0] != 0;
		alive += conns[i].state == UP;
	}
	printf("%sconns %d established %d alive %d resets %lu closed %lu errors %lu switched %lu "
	       "replies %lu max_stall_ms %llu\n",
	       prefix, nconns, established, alive, resets, closed, errors, switched, replies,
	       (unsigned long long)max_stall(now_ms()));
	for (int i = 0; i < nconns; i++) {
		int n = 0, up = 0;

		if (done[i] || !conns[i].backend[0])
			continue;
		for (int j = i; j < nconns; j++) {
			if (!strcmp(conns[j].backend, conns[i].backend)) {
				done[j] = 1;
				n++;
				up += conns[j].state == UP;
			}
		}
		printf("%sbackend %s %d alive %d\n", prefix, conns[i].backend, n, up);
	}
	fflush(stdout);
}

/* One complete reply at the start of c->buf: 1 with its backend name and
 * length, 0 when more bytes are needed, -1 when it is not what was asked.
 */
static int reply_parse(struct conn *c, int i, char *name, size_t *len)
{
	if (http) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4), *h, *eol;
		size_t hdr_len, body = 0;

		if (!end)
			return 0;
		hdr_len = end + 4 - c->buf;
		end[2] = 0; /* search the headers only, each still ending in CRLF */
		h = strcasestr(c->buf, "\r\nContent-Length:");
		if (h)
			body = strtoul(h + 17, NULL, 10);
		h = strcasestr(c->buf, "\r\nX-Backend: ");
		eol = h ? strchr(h + 13, '\r') : NULL;
		end[2] = '\r';
		if (strncmp(c->buf, "HTTP/1.1 200 ", 13) || !eol || eol - (h + 13) > NAME_LEN ||
		    hdr_len + body > sizeof(c->buf))
			return -1;
		if (c->len < hdr_len + body)
			return 0;
		memcpy(name, h + 13, eol - (h + 13));
		name[eol - (h + 13)] = 0;
		*len = hdr_len + body;
		return 1;
	} else {
		char *nl = memchr(c->buf, '\n', c->len);
		unsigned int ci, seq;

		if (!nl)
			return 0;
		*nl = 0;
		if (sscanf(c->buf, "%64s c%u %u", name, &ci, &seq) != 3 || ci != (unsigned)i ||
		    seq != c->seq)
			return -1;
		*len = nl + 1 - c->buf;
		return 1;
	}
}

/* Consume the replies that have arrived. */
static void conn_read(struct conn *c, int i, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
		char name[NAME_LEN + 1] = "";
		size_t len;
		int r;

		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn_fail(c, n < 0 ? errno : 0);
			return;
		}
		c->len += n;
		c->buf[c->len] = 0;
		while ((r = reply_parse(c, i, name, &len)) == 1 && c->waiting) {
			if (!c->backend[0])
				strcpy(c->backend, name);
			else if (strcmp(c->backend, name))
				switched++;
			if (c->last_reply_ms && now - c->last_reply_ms > c->max_gap_ms)
				c->max_gap_ms = now - c->last_reply_ms;
			c->last_reply_ms = now;
			c->waiting = false;
			c->seq++;
			replies++;
			c->len -= len;
			memmove(c->buf, c->buf + len, c->len);
			c->buf[c->len] = 0;
		}
		if (r < 0 || (r == 1 && !c->waiting) || c->len == sizeof(c->buf) - 1) {
			fprintf(stderr, "longconn: conn %d: unexpected reply\n", i);
			conn_fail(c, EPROTO);
			return;
		}
	}
}

static void conn_send(struct conn *c, int i, uint64_t now)
{
	char line[128];
	int n = http ? snprintf(line, sizeof(line), "GET /c%d/%u HTTP/1.1\r\nHost: vip\r\n\r\n", i,
				c->seq)
		     : snprintf(line, sizeof(line), "c%d %u\n", i, c->seq);

	if (send(c->fd, line, n, MSG_NOSIGNAL) != n) {
		conn_fail(c, errno);
		return;
	}
	c->waiting = true;
	c->next_send_ms = now + interval_ms;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: longconn -d VIP -p PORT -s SRC[,SRC...] [-n CONNS] [-i INTERVAL_MS]\n"
		   "                -T DURATION_S [--max-stall MS] [--http]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"max-stall", required_argument, NULL, 'M'},
					     {"http", no_argument, NULL, 'H'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct sockaddr_storage dst;
	socklen_t dst_len;
	struct addrlist srcs = {0};
	const char *dst_s = NULL;
	int port = 0, duration_s = 0, max_stall_limit = 1000, c, epfd, one = 1;
	struct sigaction sa = {.sa_handler = on_stop}, su = {.sa_handler = on_usr1};
	uint64_t start, end;

	while ((c = getopt_long(argc, argv, "d:p:s:n:i:T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dst_s = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			if (addrlist_add(&srcs, optarg, "longconn"))
				return 2;
			break;
		case 'n':
			nconns = atoi(optarg);
			break;
		case 'i':
			interval_ms = atoi(optarg);
			break;
		case 'T':
			duration_s = atoi(optarg);
			break;
		case 'M':
			max_stall_limit = atoi(optarg);
			break;
		case 'H':
			http = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!dst_s || port <= 0 || port > 65535 || !srcs.n || nconns <= 0 || nconns > MAX_CONNS ||
	    interval_ms <= 0 || duration_s <= 0 || optind != argc ||
	    addr_parse(dst_s, port, &dst, &dst_len)) {
		usage(stderr);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &su, NULL);
	epfd = epoll_create1(0);
	start = now_ms();
	end = start + duration_s * 1000ull;

	for (int i = 0; i < nconns; i++) {
		struct conn *k = &conns[i];
		struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = i};

		k->fd = socket(dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (k->fd < 0 ||
		    bind(k->fd, (struct sockaddr *)&srcs.a[i % srcs.n], srcs.len[i % srcs.n]) < 0 ||
		    (connect(k->fd, (struct sockaddr *)&dst, dst_len) < 0 &&
		     errno != EINPROGRESS)) {
			fprintf(stderr, "longconn: conn %d: %s\n", i, strerror(errno));
			errors++;
			k->state = DEAD;
			continue;
		}
		setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		epoll_ctl(epfd, EPOLL_CTL_ADD, k->fd, &ev);
		k->started_ms = start;
	}

	while (!stop) {
		struct epoll_event ev[64];
		uint64_t now = now_ms(), next = end;
		int n, live = 0;

		if (now >= end)
			break;
		for (int i = 0; i < nconns; i++) {
			struct conn *k = &conns[i];

			if (k->state == CONNECTING && now - k->started_ms > CONNECT_TIMEOUT_MS)
				conn_fail(k, ETIMEDOUT);
			if (k->state == UP && !k->waiting && now >= k->next_send_ms)
				conn_send(k, i, now);
			if (k->state == UP && !k->waiting && k->next_send_ms < next)
				next = k->next_send_ms;
			live += k->state != DEAD;
		}
		if (!live)
			break;
		if (want_report) {
			want_report = 0;
			report("interim ");
		}
		n = epoll_wait(epfd, ev, 64, next > now ? (int)(next - now) : 0);
		now = now_ms();
		for (int j = 0; j < n; j++) {
			int i = ev[j].data.u32;
			struct conn *k = &conns[i];

			if (k->state == CONNECTING && (ev[j].events & (EPOLLOUT | EPOLLERR))) {
				int err = 0;
				socklen_t el = sizeof(err);
				struct epoll_event in = {.events = EPOLLIN, .data.u32 = i};

				getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err) {
					conn_fail(k, err);
					continue;
				}
				k->state = UP;
				epoll_ctl(epfd, EPOLL_CTL_MOD, k->fd, &in);
				conn_send(k, i, now);
				continue;
			}
			if (k->state == UP)
				conn_read(k, i, now);
		}
	}
	report("");
	for (int i = 0; i < nconns; i++) {
		if (conns[i].state != UP || !conns[i].backend[0])
			return 1;
	}
	return switched || max_stall(now_ms()) > (uint64_t)max_stall_limit ? 1 : 0;
}
