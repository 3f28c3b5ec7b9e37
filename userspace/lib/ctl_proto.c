// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Address syntax and the client side of the maglevd control protocol. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"

/* How long a client waits for the daemon to answer one request. */
#define CTL_CALL_TIMEOUT_MS 30000

int ctl_parse_uint(const char *s, const char *what, uint64_t min, uint64_t max, uint64_t *out,
		   char *err, size_t errlen)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') {
		snprintf(err, errlen, "bad %s '%s': not a number", what, s ? s : "");
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end) {
		snprintf(err, errlen, "bad %s '%s': not a number", what, s);
		return -EINVAL;
	}
	if (errno == ERANGE || v < min || v > max) {
		snprintf(err, errlen, "bad %s '%s': must be %llu..%llu", what, s,
			 (unsigned long long)min, (unsigned long long)max);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

/* Parse an address string with no brackets and no port. */
static int parse_bare_addr(const char *s, struct ctl_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->addr[0]) == 1) {
		a->family = MAGLEV_AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->addr) == 1) {
		a->family = MAGLEV_AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/*
 * Split "ADDR[:PORT]" / "[V6][:PORT]" into its address and port parts.
 * host gets the address text, *port_s points into s (or NULL if no port).
 */
static int split_host_port(const char *s, char *host, size_t hostlen, const char **port_s,
			   char *err, size_t errlen)
{
	const char *colon, *end;
	size_t n;

	*port_s = NULL;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end) {
			snprintf(err, errlen, "bad address '%s': missing ']'", s);
			return -EINVAL;
		}
		n = (size_t)(end - s - 1);
		if (end[1] == ':')
			*port_s = end + 2;
		else if (end[1]) {
			snprintf(err, errlen, "bad address '%s': junk after ']'", s);
			return -EINVAL;
		}
		s++;
	} else {
		colon = strchr(s, ':');
		/* More than one colon and no brackets: a bare IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			n = (size_t)(colon - s);
			*port_s = colon + 1;
		} else {
			n = strlen(s);
		}
	}
	if (n == 0 || n >= hostlen) {
		snprintf(err, errlen, "bad address '%s'", s);
		return -EINVAL;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	return 0;
}

int ctl_parse_vip(const char *s, struct maglev_vip_key *key, bool *port_any, char *err,
		  size_t errlen)
{
	char buf[CTL_ADDR_STRLEN * 2], host[CTL_ADDR_STRLEN];
	const char *port_s, *proto_s;
	struct ctl_addr a;
	uint64_t port = 0;
	char *slash;

	if (!s || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "bad VIP: too long or empty");
		return -EINVAL;
	}
	strcpy(buf, s);
	slash = strrchr(buf, '/');
	if (!slash) {
		snprintf(err, errlen, "bad VIP '%s': want ADDR:PORT/PROTO, e.g. 192.0.2.10:80/tcp",
			 s);
		return -EINVAL;
	}
	*slash = '\0';
	proto_s = slash + 1;
	memset(key, 0, sizeof(*key));
	if (!strcmp(proto_s, "tcp")) {
		key->proto = IPPROTO_TCP;
	} else if (!strcmp(proto_s, "udp")) {
		key->proto = IPPROTO_UDP;
	} else {
		snprintf(err, errlen, "bad VIP '%s': unknown protocol '%s' (tcp or udp)", s,
			 proto_s);
		return -EINVAL;
	}
	if (split_host_port(buf, host, sizeof(host), &port_s, err, errlen))
		return -EINVAL;
	if (parse_bare_addr(host, &a)) {
		snprintf(err, errlen, "bad VIP '%s': '%s' is not an IPv4 or IPv6 address", s, host);
		return -EINVAL;
	}
	/* Without brackets "2001:db8::10:80" would silently be an all-ports VIP. */
	if (a.family == MAGLEV_AF_INET6 && buf[0] != '[') {
		snprintf(err, errlen, "bad VIP '%s': put IPv6 addresses in brackets", s);
		return -EINVAL;
	}
	*port_any = !port_s || !strcmp(port_s, "*");
	if (!*port_any) {
		if (ctl_parse_uint(port_s, "port", 1, 65535, &port, err, errlen))
			return -EINVAL;
	}
	memcpy(key->addr, a.addr, sizeof(key->addr));
	key->family = a.family;
	key->port = htons((uint16_t)port);
	return 0;
}

void ctl_format_addr(const struct ctl_addr *a, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	if (!inet_ntop(a->family == MAGLEV_AF_INET6 ? AF_INET6 : AF_INET, a->addr, tmp,
		       sizeof(tmp)))
		strcpy(tmp, "?");
	snprintf(buf, len, "%s", tmp);
}

int ctl_cmp_vip(const struct maglev_vip_key *a, const struct maglev_vip_key *b)
{
	int c;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	c = memcmp(a->addr, b->addr, sizeof(a->addr));
	if (c)
		return c;
	if (a->port != b->port)
		return ntohs(a->port) < ntohs(b->port) ? -1 : 1;
	return (int)a->proto - (int)b->proto;
}

int ctl_cmp_addr(const struct ctl_addr *a, const struct ctl_addr *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->addr, b->addr, sizeof(a->addr));
}

const char *ctl_vip_parts(const struct maglev_vip_key *key, char host[CTL_ADDR_STRLEN],
			  char port[8])
{
	struct ctl_addr a = {.family = key->family};

	memcpy(a.addr, key->addr, sizeof(a.addr));
	ctl_format_addr(&a, host, CTL_ADDR_STRLEN);
	if (key->port)
		snprintf(port, 8, "%u", ntohs(key->port));
	else
		strcpy(port, "*");
	return key->proto == IPPROTO_UDP ? "udp" : "tcp";
}

void ctl_format_vip(const struct maglev_vip_key *key, char *buf, size_t len)
{
	char host[CTL_ADDR_STRLEN], port[8];
	const char *proto = ctl_vip_parts(key, host, port);
	bool v6 = key->family == MAGLEV_AF_INET6;

	snprintf(buf, len, "%s%s%s:%s/%s", v6 ? "[" : "", host, v6 ? "]" : "", port, proto);
}

int ctl_parse_addr(const char *s, struct ctl_addr *a, char *err, size_t errlen)
{
	char host[CTL_ADDR_STRLEN];
	const char *port_s;

	if (!s || !*s) {
		snprintf(err, errlen, "bad address: empty");
		return -EINVAL;
	}
	if (split_host_port(s, host, sizeof(host), &port_s, err, errlen))
		return -EINVAL;
	if (port_s) {
		snprintf(err, errlen,
			 "bad address '%s': a backend takes no port (DSR keeps the VIP's)", s);
		return -EINVAL;
	}
	if (parse_bare_addr(host, a)) {
		snprintf(err, errlen, "bad address '%s': not an IPv4 or IPv6 address", s);
		return -EINVAL;
	}
	return 0;
}

int ctl_parse_endpoint(const char *s, struct ctl_addr *a, uint16_t *port, char *err, size_t errlen)
{
	char host[CTL_ADDR_STRLEN];
	const char *port_s;
	uint64_t p;

	if (!s || !*s) {
		snprintf(err, errlen, "bad endpoint: empty");
		return -EINVAL;
	}
	if (split_host_port(s, host, sizeof(host), &port_s, err, errlen))
		return -EINVAL;
	if (!port_s) {
		snprintf(err, errlen, "bad endpoint '%s': want ADDR:PORT", s);
		return -EINVAL;
	}
	if (parse_bare_addr(host, a)) {
		snprintf(err, errlen, "bad endpoint '%s': '%s' is not an IPv4 or IPv6 address", s,
			 host);
		return -EINVAL;
	}
	if (ctl_parse_uint(port_s, "port", 1, 65535, &p, err, errlen))
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

const char *ctl_socket_path(const char *explicit_path)
{
	const char *env;

	if (explicit_path && *explicit_path)
		return explicit_path;
	env = getenv(CTL_SOCKET_ENV);
	if (env && *env)
		return env;
	return CTL_DEFAULT_SOCKET;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for fd to become ready for events before deadline (ms, monotonic). */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	long long left;
	int r;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

int ctl_call(const char *path, json_object *req, json_object **resp, char *err, size_t errlen)
{
	bool sent;

	return ctl_call_ex(path, req, resp, &sent, err, errlen);
}

int ctl_call_ex(const char *path, json_object *req, json_object **resp, bool *sent, char *err,
		size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	long long deadline = now_ms() + CTL_CALL_TIMEOUT_MS;
	size_t len, off = 0, cap = 65536;
	const char *text;
	char *buf = NULL;
	json_tokener *tok;
	int fd, r;
	ssize_t n;

	*resp = NULL;
	*sent = false;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		r = -errno;
		if (r == -ENOENT || r == -ECONNREFUSED)
			snprintf(err, errlen, "maglevd is not running (no daemon listening on %s)",
				 path);
		else if (r == -EACCES)
			snprintf(err, errlen,
				 "permission denied on %s (run as root or a member of the "
				 "configured control group)",
				 path);
		else
			snprintf(err, errlen, "cannot connect to maglevd at %s: %s", path,
				 strerror(-r));
		close(fd);
		return r;
	}

	text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	len = strlen(text);
	/* One write of the line; the daemon reads until the newline. */
	while (off <= len) {
		const char *p = off < len ? text + off : "\n";
		size_t left = off < len ? len - off : 1;

		n = send(fd, p, left, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			snprintf(err, errlen, "sending to maglevd: %s", strerror(errno));
			goto out;
		}
		off += (size_t)n;
		*sent = true;
	}

	buf = malloc(cap);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	off = 0;
	for (;;) {
		r = wait_fd(fd, POLLIN, deadline);
		if (r) {
			snprintf(err, errlen, "no answer from maglevd within %d s",
				 CTL_CALL_TIMEOUT_MS / 1000);
			goto out;
		}
		if (off + 1 >= cap) {
			char *nb;

			if (cap >= CTL_MAX_RESPONSE) {
				r = -E2BIG;
				snprintf(err, errlen, "answer from maglevd too large");
				goto out;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + off, cap - off - 1, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			r = -errno;
			snprintf(err, errlen, "reading from maglevd: %s", strerror(errno));
			goto out;
		}
		if (n == 0) {
			if (!off) {
				r = -ECONNRESET;
				snprintf(err, errlen,
					 "maglevd closed the connection without answering");
				goto out;
			}
			break;
		}
		off += (size_t)n;
		if (buf[off - 1] == '\n')
			break;
	}
	buf[off] = '\0';
	tok = json_tokener_new();
	*resp = json_tokener_parse_ex(tok, buf, (int)off);
	json_tokener_free(tok);
	if (!*resp || !json_object_is_type(*resp, json_type_object)) {
		json_object_put(*resp);
		*resp = NULL;
		r = -EPROTO;
		snprintf(err, errlen, "garbled answer from maglevd (%zu bytes)", off);
		goto out;
	}
	r = 0;
out:
	free(buf);
	close(fd);
	return r;
}
