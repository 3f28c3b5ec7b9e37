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
 * With --udp each "connection" is a connected UDP socket to backend-server's
 * UDP echo (one datagram a request; an answer missing after --udp-timeout ms
 * is counted lost and asked again); its backend may change only with the
 * table, so a change is counted as switched and the new backend followed.
 * For a soak: --reopen MS opens a dead connection again (new source port)
 * after MS, --requests N closes each connection (FIN) after N answers and
 * opens a new one (short connections), and --events prints one line per
 * break as it happens (wall-clock ms, so it can be matched against a fault
 * log):
 *   event MS KIND conn I SRC:SPORT backend NAME|-
 * with KIND first (the connection's first answer: its backend), reset,
 * closed, error, timeout (never connected), refused, switched (an answer
 * from another backend than the connection's) or lost (UDP: no answer in
 * time).
 *
 * Runs for DURATION seconds or until SIGTERM/SIGINT, then prints the report;
 * SIGUSR1 prints an interim one. Report lines:
 *   conns N established N alive N resets N closed N errors N switched N
 *   replies N max_stall_ms N opened N finished N lost N
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
#include <stdarg.h>
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
	unsigned int seq, answers;
	uint64_t next_send_ms, last_reply_ms, max_gap_ms, started_ms, sent_ms, dead_ms;
	char tuple[INET6_ADDRSTRLEN + 8];
	size_t len;
	char buf[512];
	char backend[NAME_LEN + 1];
};

static struct conn conns[MAX_CONNS];
static int nconns = 50, interval_ms = 100, reopen_ms = -1, requests_max, udp_timeout_ms = 1000;
static bool http, udp, events;
static unsigned long resets, closed, errors, switched, replies, opened, finished, lost;
static struct sockaddr_storage dst;
static socklen_t dst_len;
static struct addrlist srcs;
static int epfd;
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

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* One "event" line (--events), flushed at once: the soak reads them live. */
static void event(const struct conn *c, int i, const char *kind)
{
	if (!events)
		return;
	printf("event %llu %s conn %d %s backend %s\n", (unsigned long long)wall_ms(), kind, i,
	       c->tuple[0] ? c->tuple : "-", c->backend[0] ? c->backend : "-");
	fflush(stdout);
}

/* The connection's own address and port, as "A:P" ("[A]:P" for IPv6). */
static void conn_tuple(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	c->tuple[0] = 0;
	if (getsockname(c->fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(c->tuple, sizeof(c->tuple), "%s:%u", a, ntohs(s4->sin_port));
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(c->tuple, sizeof(c->tuple), "[%s]:%u", a, ntohs(s6->sin6_port));
	}
}

static void conn_fail(struct conn *c, int i, int err)
{
	if (c->state == DEAD)
		return;
	if (err == ECONNRESET || err == EPIPE) {
		resets++;
		event(c, i, "reset");
	} else if (err == 0) {
		closed++;
		event(c, i, "closed");
	} else {
		errors++;
		event(c, i,
		      err == ETIMEDOUT	    ? "timeout"
		      : err == ECONNREFUSED ? "refused"
					    : "error");
	}
	c->state = DEAD;
	c->dead_ms = now_ms();
	close(c->fd);
	c->fd = -1;
}

/* Open connection i from its source address (again: a new source port). */
static void conn_open(struct conn *k, int i, uint64_t now)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = i};
	int one = 1;

	memset(k, 0, sizeof(*k));
	k->started_ms = now;
	k->fd = socket(dst.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0);
	if (k->fd < 0 ||
	    bind(k->fd, (struct sockaddr *)&srcs.a[i % srcs.n], srcs.len[i % srcs.n]) < 0 ||
	    (connect(k->fd, (struct sockaddr *)&dst, dst_len) < 0 && errno != EINPROGRESS)) {
		fprintf(stderr, "longconn: conn %d: %s\n", i, strerror(errno));
		errors++;
		if (k->fd >= 0)
			close(k->fd);
		k->fd = -1;
		k->state = DEAD;
		k->dead_ms = now;
		return;
	}
	opened++;
	conn_tuple(k);
	if (!udp)
		setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	epoll_ctl(epfd, EPOLL_CTL_ADD, k->fd, &ev);
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
	       "replies %lu max_stall_ms %llu opened %lu finished %lu lost %lu\n",
	       prefix, nconns, established, alive, resets, closed, errors, switched, replies,
	       (unsigned long long)max_stall(now_ms()), opened, finished, lost);
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
		if (n < 0 && udp && errno == ECONNREFUSED)
			continue; /* an ICMP error: the answer is counted lost */
		if (n <= 0) {
			conn_fail(c, i, n < 0 ? errno : 0);
			return;
		}
		if (udp) /* one datagram, one answer: nothing kept from the last */
			c->len = 0;
		c->len += n;
		c->buf[c->len] = 0;
		while ((r = reply_parse(c, i, name, &len)) == 1 && c->waiting) {
			if (!c->backend[0]) {
				strcpy(c->backend, name);
				event(c, i, "first");
			} else if (strcmp(c->backend, name)) {
				switched++;
				event(c, i, "switched");
				if (udp) /* follow it: count each move once */
					strcpy(c->backend, name);
			}
			if (c->last_reply_ms && now - c->last_reply_ms > c->max_gap_ms)
				c->max_gap_ms = now - c->last_reply_ms;
			c->last_reply_ms = now;
			c->waiting = false;
			c->seq++;
			c->answers++;
			replies++;
			c->len -= len;
			memmove(c->buf, c->buf + len, c->len);
			c->buf[c->len] = 0;
		}
		if (udp && (r < 0 || (r == 1 && !c->waiting))) {
			c->len = 0; /* a late answer to a request counted lost */
			continue;
		}
		if (r < 0 || (r == 1 && !c->waiting) || c->len == sizeof(c->buf) - 1) {
			fprintf(stderr, "longconn: conn %d: unexpected reply\n", i);
			conn_fail(c, i, EPROTO);
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
		if (udp) { /* an ICMP error reported on send: try again later */
			c->next_send_ms = now + interval_ms;
			return;
		}
		conn_fail(c, i, errno);
		return;
	}
	c->waiting = true;
	c->sent_ms = now;
	c->next_send_ms = now + interval_ms;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: longconn -d VIP -p PORT -s SRC[,SRC...] [-n CONNS] [-i INTERVAL_MS]\n"
		   "                -T DURATION_S [--max-stall MS] [--http | --udp]\n"
		   "                [--udp-timeout MS] [--reopen MS] [--requests N] [--events]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"max-stall", required_argument, NULL, 'M'},
					     {"http", no_argument, NULL, 'H'},
					     {"udp", no_argument, NULL, 'U'},
					     {"udp-timeout", required_argument, NULL, 'W'},
					     {"reopen", required_argument, NULL, 'R'},
					     {"requests", required_argument, NULL, 'N'},
					     {"events", no_argument, NULL, 'E'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *dst_s = NULL;
	int port = 0, duration_s = 0, max_stall_limit = 1000, c;
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
		case 'U':
			udp = true;
			break;
		case 'W':
			udp_timeout_ms = atoi(optarg);
			break;
		case 'R':
			reopen_ms = atoi(optarg);
			break;
		case 'N':
			requests_max = atoi(optarg);
			break;
		case 'E':
			events = true;
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
	    interval_ms <= 0 || duration_s <= 0 || optind != argc || (http && udp) ||
	    udp_timeout_ms <= 0 || reopen_ms < -1 || requests_max < 0 ||
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

	for (int i = 0; i < nconns; i++)
		conn_open(&conns[i], i, start);

	while (!stop) {
		struct epoll_event ev[64];
		uint64_t now = now_ms(), next = end;
		int n, live = 0;

		if (now >= end)
			break;
		for (int i = 0; i < nconns; i++) {
			struct conn *k = &conns[i];

			if (k->state == CONNECTING && now - k->started_ms > CONNECT_TIMEOUT_MS)
				conn_fail(k, i, ETIMEDOUT);
			if (k->state == UP && requests_max &&
			    k->answers >= (unsigned)requests_max && !k->waiting) {
				/* a short connection done: FIN, then a new one */
				epoll_ctl(epfd, EPOLL_CTL_DEL, k->fd, NULL);
				close(k->fd);
				finished++;
				conn_open(k, i, now);
			}
			if (k->state == DEAD && reopen_ms >= 0 &&
			    now - k->dead_ms >= (uint64_t)reopen_ms)
				conn_open(k, i, now);
			if (udp && k->state == UP && k->waiting &&
			    now - k->sent_ms > (uint64_t)udp_timeout_ms) {
				lost++;
				event(k, i, "lost");
				k->waiting = false;
				k->seq++; /* a late answer to the old request is not this one's */
			}
			if (udp && k->state == UP && k->waiting &&
			    k->sent_ms + udp_timeout_ms < next)
				next = k->sent_ms + udp_timeout_ms;
			if (k->state == DEAD && reopen_ms >= 0 && k->dead_ms + reopen_ms < next)
				next = k->dead_ms + reopen_ms;
			if (k->state == UP && !k->waiting && now >= k->next_send_ms)
				conn_send(k, i, now);
			if (k->state == UP && !k->waiting && k->next_send_ms < next)
				next = k->next_send_ms;
			live += k->state != DEAD || reopen_ms >= 0;
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
					conn_fail(k, i, err);
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
