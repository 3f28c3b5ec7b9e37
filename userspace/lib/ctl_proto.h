/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The control protocol between maglevctl (or any client) and maglevd, and
 * the address syntax both sides share.
 *
 * Transport: a Unix stream socket. The client writes one JSON object on one
 * line ("\n"-terminated), the daemon answers with one JSON object on one
 * line and closes. Every answer has "ok": true|false; a rejection carries
 * "error": a one-line reason. See docs/operations.md for the commands.
 *
 * Address syntax (the same everywhere an operator types one):
 *   VIP       192.0.2.10:80/tcp   [2001:db8::10]:80/udp
 *             192.0.2.10:*\/tcp or 192.0.2.10/tcp   (all ports)
 *   backend   198.51.100.5   2001:db8::5   [2001:db8::5]   (no port: DSR)
 *   endpoint  203.0.113.7:40000   [2001:db8::7]:40000
 */
#ifndef MAGLEV_CTL_PROTO_H
#define MAGLEV_CTL_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <json-c/json.h>
#include "maglev_maps.h"

#define CTL_DEFAULT_SOCKET "/run/maglev/maglevd.sock"
#define CTL_SOCKET_ENV	   "MAGLEV_SOCKET"
/* Largest request the daemon reads (a restore batch of many backends). */
#define CTL_MAX_REQUEST	 (8u << 20)
#define CTL_MAX_RESPONSE (64u << 20)

/* Longest formatted VIP: "[" + INET6_ADDRSTRLEN + "]:65535/tcp". */
#define CTL_ADDR_STRLEN 64

struct ctl_addr {
	uint8_t family;	  /* MAGLEV_AF_INET or MAGLEV_AF_INET6 */
	uint32_t addr[4]; /* network order, IPv4 in addr[0] */
};

/*
 * Parse a VIP. A port of "*" or no port at all gives port 0 (all ports)
 * and sets *port_any. Returns 0 or -EINVAL with err naming the problem.
 */
int ctl_parse_vip(const char *s, struct maglev_vip_key *key, bool *port_any, char *err,
		  size_t errlen);
void ctl_format_vip(const struct maglev_vip_key *key, char *buf, size_t len);
/* Its parts: the address (no brackets), the port ("*" for all ports), "tcp" or "udp". */
const char *ctl_vip_parts(const struct maglev_vip_key *key, char host[CTL_ADDR_STRLEN],
			  char port[8]);

/* Parse a bare address (IPv6 may be bracketed). No port allowed. */
int ctl_parse_addr(const char *s, struct ctl_addr *a, char *err, size_t errlen);
void ctl_format_addr(const struct ctl_addr *a, char *buf, size_t len);

/* The canonical orders (strcmp-like): family, then address bytes in network
 * order, then (VIPs) port and protocol. Balancers that hold the same set
 * list it alike whatever order it was added in.
 */
int ctl_cmp_vip(const struct maglev_vip_key *a, const struct maglev_vip_key *b);
int ctl_cmp_addr(const struct ctl_addr *a, const struct ctl_addr *b);

/* Parse ADDR:PORT (IPv6 bracketed). port is host order, 1..65535. */
int ctl_parse_endpoint(const char *s, struct ctl_addr *a, uint16_t *port, char *err, size_t errlen);

/* Parse an unsigned decimal in [min, max]; what names the value in err. */
int ctl_parse_uint(const char *s, const char *what, uint64_t min, uint64_t max, uint64_t *out,
		   char *err, size_t errlen);

/*
 * Send req to the daemon listening on path and return its answer in *resp
 * (caller puts it). Returns 0 when an answer arrived (look at "ok"), or a
 * negative errno with err saying why no answer came (no daemon, permission,
 * timeout, garbage).
 */
int ctl_call(const char *path, json_object *req, json_object **resp, char *err, size_t errlen);
/*
 * ctl_call, and on failure *sent says whether any of the request reached
 * the daemon: if not, nothing changed; if so, the outcome is unknown.
 */
int ctl_call_ex(const char *path, json_object *req, json_object **resp, bool *sent, char *err,
		size_t errlen);

/* The socket path a client uses: explicit, else $MAGLEV_SOCKET, else default. */
const char *ctl_socket_path(const char *explicit_path);

#endif /* MAGLEV_CTL_PROTO_H */
