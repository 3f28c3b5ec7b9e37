/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Address parsing shared by the test clients: a list of source addresses
 * ("A,B,C", the option repeatable) and one destination address, IPv4 or IPv6.
 */
#ifndef MAGLEV_TOOLS_ADDRLIST_H
#define MAGLEV_TOOLS_ADDRLIST_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define ADDRLIST_MAX 1024

struct addrlist {
	int n;
	struct sockaddr_storage a[ADDRLIST_MAX];
	socklen_t len[ADDRLIST_MAX];
};

/* Fill ss from a numeric address and a host-order port; 0 or -1. */
static inline int addr_parse(const char *s, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	return -1;
}

/* Append the comma-separated addresses of s; -1 (with a message) on error. */
static inline int addrlist_add(struct addrlist *l, const char *s, const char *prog)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int rc = 0;

	for (tok = strtok_r(copy, ", \n", &save); tok; tok = strtok_r(NULL, ", \n", &save)) {
		if (l->n == ADDRLIST_MAX) {
			fprintf(stderr, "%s: more than %d source addresses\n", prog, ADDRLIST_MAX);
			rc = -1;
			break;
		}
		if (addr_parse(tok, 0, &l->a[l->n], &l->len[l->n])) {
			fprintf(stderr, "%s: bad address '%s'\n", prog, tok);
			rc = -1;
			break;
		}
		l->n++;
	}
	free(copy);
	return rc;
}

static inline void addr_set_port(struct sockaddr_storage *ss, int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static inline const char *addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET
				? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;

	return inet_ntop(ss->ss_family, a, buf, len);
}

#endif /* MAGLEV_TOOLS_ADDRLIST_H */
