/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The datagram health checks (health.c sends them, like the TCP checks,
 * through the encapsulation): `udp` sends a payload and expects a reply
 * holding a given byte string; `dns` sends a DNS query (type A, class IN,
 * recursion desired) for a name and expects the reply with the query's id,
 * QR set and RCODE NOERROR (0). No reply within the timeout, or an ICMP port
 * unreachable (ECONNREFUSED on the connected socket), is a failure.
 *
 * Payloads and expected strings are text with the escapes \n \r \t \0 \\
 * and \xNN, so binary protocols fit a config line and a JSON string alike.
 */
#ifndef MAGLEVD_HC_UDP_H
#define MAGLEVD_HC_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HC_UDP_MAX 512 /* bytes of a decoded payload or query */

/* Decode escaped text s into out (at most cap bytes); the length, or -1
 * with err naming the problem (a bad escape, too long).
 */
int hc_udp_decode(const char *s, uint8_t *out, size_t cap, char *err, size_t errlen);
/* A DNS name is dotted labels of 1..63 bytes of [A-Za-z0-9_-], 253 in all;
 * a final dot is allowed, "." alone is the root.
 */
bool hc_dns_name_ok(const char *name);
/* The query for name with id into out; its length (at most HC_UDP_MAX). */
size_t hc_dns_query(const char *name, uint16_t id, uint8_t *out);
/*
 * A datagram received for the query id: 1 up, 0 down (why set), -1 not the
 * answer to this query (too short, another id, no QR bit): keep waiting.
 */
int hc_dns_judge(const uint8_t *buf, size_t len, uint16_t id, char *why, size_t whylen);

#endif /* MAGLEVD_HC_UDP_H */
