// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * backend-server: the real server every end-to-end test and the demo run on
 * each backend. Every answer names the backend, so a client can tell which
 * backend the load balancer picked for its flow:
 *   --http PORT  HTTP/1.1 with keep-alive; the body and the X-Backend header
 *                carry the name (any method, any path)
 *   --echo PORT  TCP line echo for long-lived connections: "NAME LINE\n"
 *   --udp PORT   UDP echo: "NAME PAYLOAD", sent from the address the request
 *                was sent to (the VIP), as DSR requires
 * Each service listens on IPv4 and IPv6 wildcard addresses, so it answers for
 * every VIP configured on lo. One thread, epoll, non-blocking sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define IN_MAX	     8192
#define OUT_MAX	     16384
#define NAME_MAX_LEN 64

enum kind { K_HTTP_LISTEN, K_ECHO_LISTEN, K_UDP, K_HTTP, K_ECHO };

struct sock {
	struct sock *prev, *next; /* every open socket, freed on exit */
	enum kind kind;
	int fd;
	bool close_after; /* HTTP "Connection: close" seen: close once flushed */
	size_t in_len, out_len;
	char in[IN_MAX];
	char out[OUT_MAX];
};

static char name[NAME_MAX_LEN + 1];
static int epfd;
/* Listed so that they are freed at exit: a leak checker (selftests/sanitize)
 * cannot see pointers held only in the kernel's epoll set.
 */
static struct sock *socks;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static struct sock *sock_new(enum kind kind, int fd)
{
	struct sock *s = calloc(1, sizeof(*s));

	if (!s) {
		perror("backend-server: calloc");
		exit(1);
	}
	s->kind = kind;
	s->fd = fd;
	s->next = socks;
	if (socks)
		socks->prev = s;
	socks = s;
	return s;
}

static void sock_free(struct sock *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		socks = s->next;
	if (s->next)
		s->next->prev = s->prev;
	epoll_ctl(epfd, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	free(s);
}

static void watch(struct sock *s, uint32_t events, int op)
{
	struct epoll_event ev = {.events = events, .data.ptr = s};

	if (epoll_ctl(epfd, op, s->fd, &ev) < 0) {
		perror("backend-server: epoll_ctl");
		exit(1);
	}
}

static int listen_on(int family, int type, int port)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int one = 1, fd;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		len = sizeof(*a6);
		if (type == SOCK_DGRAM)
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;

		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		len = sizeof(*a4);
		if (type == SOCK_DGRAM)
			setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) < 0)) {
		fprintf(stderr, "backend-server: %s port %d: %s\n",
			family == AF_INET6 ? "IPv6" : "IPv4", port, strerror(errno));
		exit(1);
	}
	return fd;
}

static void add_service(enum kind kind, int type, int port)
{
	int families[] = {AF_INET, AF_INET6};

	for (int i = 0; i < 2; i++) {
		struct sock *s = sock_new(kind, listen_on(families[i], type, port));

		watch(s, EPOLLIN, EPOLL_CTL_ADD);
	}
}

/* Append to the output buffer; false if it does not fit (peer not reading). */
static bool out_append(struct sock *s, const char *buf, size_t len)
{
	if (s->out_len + len > OUT_MAX)
		return false;
	memcpy(s->out + s->out_len, buf, len);
	s->out_len += len;
	return true;
}

/* Header value lookup within one request's header block, case-insensitive. */
static bool header_has(const char *hdrs, size_t len, const char *field, const char *value)
{
	size_t flen = strlen(field), vlen = strlen(value);

	for (size_t i = 0; i + flen < len; i++) {
		if ((i == 0 || hdrs[i - 1] == '\n') && !strncasecmp(hdrs + i, field, flen)) {
			for (size_t j = i + flen; j + vlen <= len && hdrs[j] != '\r'; j++)
				if (!strncasecmp(hdrs + j, value, vlen))
					return true;
		}
	}
	return false;
}

/* Answer every complete request in the input buffer. Bodies (Content-Length)
 * are not expected from the test clients and are not supported: a request
 * with one is answered and the connection closed.
 */
static bool http_process(struct sock *s)
{
	char *end;

	while (!s->close_after && (end = memmem(s->in, s->in_len, "\r\n\r\n", 4))) {
		size_t req_len = end + 4 - s->in;
		char resp[256];
		int n;

		if (header_has(s->in, req_len, "Connection:", "close") ||
		    header_has(s->in, req_len, "Content-Length:", "") ||
		    memmem(s->in, req_len, "HTTP/1.0", 8))
			s->close_after = true;
		n = snprintf(resp, sizeof(resp),
			     "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
			     "Content-Length: %zu\r\nX-Backend: %s\r\n%s\r\n%s\n",
			     strlen(name) + 1, name, s->close_after ? "Connection: close\r\n" : "",
			     name);
		if (!out_append(s, resp, n))
			return false;
		memmove(s->in, s->in + req_len, s->in_len - req_len);
		s->in_len -= req_len;
	}
	return s->in_len < IN_MAX;
}

static bool echo_process(struct sock *s)
{
	char *nl;

	while ((nl = memchr(s->in, '\n', s->in_len))) {
		size_t line_len = nl + 1 - s->in;

		if (s->out_len + strlen(name) + 1 + line_len > OUT_MAX)
			break; /* retried once the peer has read */
		out_append(s, name, strlen(name));
		out_append(s, " ", 1);
		out_append(s, s->in, line_len);
		memmove(s->in, s->in + line_len, s->in_len - line_len);
		s->in_len -= line_len;
	}
	return s->in_len < IN_MAX;
}

/* Flush what we can; false when the connection is finished or broken. */
static bool flush_out(struct sock *s)
{
	while (s->out_len) {
		ssize_t n = send(s->fd, s->out, s->out_len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			return false;
		}
		memmove(s->out, s->out + n, s->out_len - n);
		s->out_len -= n;
	}
	watch(s, s->out_len ? EPOLLIN | EPOLLOUT : EPOLLIN, EPOLL_CTL_MOD);
	return !(s->close_after && !s->out_len);
}

static void serve_stream(struct sock *s)
{
	for (;;) {
		ssize_t n = 0;
		bool ok;

		/* A full input buffer waits for the output to drain first. */
		if (s->in_len < IN_MAX) {
			n = recv(s->fd, s->in + s->in_len, IN_MAX - s->in_len, 0);
			if (n == 0 || (n < 0 && errno != EAGAIN)) {
				sock_free(s);
				return;
			}
			if (n > 0)
				s->in_len += n;
		}
		ok = s->kind == K_HTTP ? http_process(s) : echo_process(s);
		if (!flush_out(s) || (!ok && !s->out_len)) {
			sock_free(s);
			return;
		}
		if (n <= 0)
			return;
	}
}

static void accept_all(struct sock *l)
{
	int fd, one = 1;

	while ((fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct sock *s = sock_new(l->kind == K_HTTP_LISTEN ? K_HTTP : K_ECHO, fd);

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		watch(s, EPOLLIN, EPOLL_CTL_ADD);
	}
}

/* Reply from the address the datagram was sent to: the VIP, not whatever
 * source the routing table would choose.
 */
static void serve_udp(struct sock *s)
{
	for (;;) {
		char buf[2048], reply[2048 + NAME_MAX_LEN + 1], cbuf[256];
		struct sockaddr_storage peer;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr mh = {.msg_name = &peer,
				    .msg_namelen = sizeof(peer),
				    .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		char obuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = {0};
		struct cmsghdr *c;
		ssize_t n = recvmsg(s->fd, &mh, 0);
		int len;

		if (n < 0)
			return;
		len = snprintf(reply, sizeof(reply), "%s %.*s", name, (int)n, buf);
		iov.iov_base = reply;
		iov.iov_len = len;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct cmsghdr *o = (struct cmsghdr *)obuf;

			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi = *(struct in_pktinfo *)CMSG_DATA(c);

				pi.ipi_ifindex = 0;
				pi.ipi_spec_dst = pi.ipi_addr;
				o->cmsg_level = IPPROTO_IP;
				o->cmsg_type = IP_PKTINFO;
				o->cmsg_len = CMSG_LEN(sizeof(pi));
				memcpy(CMSG_DATA(o), &pi, sizeof(pi));
				mh.msg_controllen = CMSG_SPACE(sizeof(pi));
				break;
			}
			if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi = *(struct in6_pktinfo *)CMSG_DATA(c);

				pi.ipi6_ifindex = 0;
				o->cmsg_level = IPPROTO_IPV6;
				o->cmsg_type = IPV6_PKTINFO;
				o->cmsg_len = CMSG_LEN(sizeof(pi));
				memcpy(CMSG_DATA(o), &pi, sizeof(pi));
				mh.msg_controllen = CMSG_SPACE(sizeof(pi));
				break;
			}
		}
		if (!c)
			mh.msg_controllen = 0;
		mh.msg_control = mh.msg_controllen ? obuf : NULL;
		sendmsg(s->fd, &mh, MSG_DONTWAIT);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: backend-server --name NAME [--http PORT] [--echo PORT] [--udp PORT]\n"
		   "                      [--pidfile FILE]\n"
		   "Serves until SIGTERM/SIGINT. The pid file is written once every socket "
		   "listens.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"name", required_argument, NULL, 'n'},
					     {"http", required_argument, NULL, 'H'},
					     {"echo", required_argument, NULL, 'e'},
					     {"udp", required_argument, NULL, 'u'},
					     {"pidfile", required_argument, NULL, 'p'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	int http = 0, echo = 0, udp = 0, c;
	const char *pidfile = NULL;
	struct sigaction sa = {.sa_handler = on_signal};

	while ((c = getopt_long(argc, argv, "n:H:e:u:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (strlen(optarg) > NAME_MAX_LEN || !*optarg || strpbrk(optarg, " \r\n")) {
				fprintf(stderr, "backend-server: bad name '%s'\n", optarg);
				return 2;
			}
			strcpy(name, optarg);
			break;
		case 'H':
			http = atoi(optarg);
			break;
		case 'e':
			echo = atoi(optarg);
			break;
		case 'u':
			udp = atoi(optarg);
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!*name || optind != argc || (!http && !echo && !udp) || http < 0 || http > 65535 ||
	    echo < 0 || echo > 65535 || udp < 0 || udp > 65535) {
		usage(stderr);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		perror("backend-server: epoll_create1");
		return 1;
	}
	if (http)
		add_service(K_HTTP_LISTEN, SOCK_STREAM, http);
	if (echo)
		add_service(K_ECHO_LISTEN, SOCK_STREAM, echo);
	if (udp)
		add_service(K_UDP, SOCK_DGRAM, udp);
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			fprintf(stderr, "backend-server: cannot write %s\n", pidfile);
			return 1;
		}
	}

	while (!stop) {
		struct epoll_event ev[64];
		int n = epoll_wait(epfd, ev, 64, -1);

		for (int i = 0; i < n; i++) {
			struct sock *s = ev[i].data.ptr;

			switch (s->kind) {
			case K_HTTP_LISTEN:
			case K_ECHO_LISTEN:
				accept_all(s);
				break;
			case K_UDP:
				serve_udp(s);
				break;
			default:
				if ((ev[i].events & EPOLLOUT) && !flush_out(s)) {
					sock_free(s);
					break;
				}
				/* After a flush, requests held back may now be answered. */
				serve_stream(s);
			}
		}
	}
	while (socks)
		sock_free(socks);
	if (pidfile)
		unlink(pidfile);
	return 0;
}
