/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The https checks: one GET each on libcurl's multi interface, whose
 * sockets and timer maglevd's epoll loop drives (hc_https.c). Plain http
 * stays on the built-in client (health.c): at thousands of checks a second
 * libcurl cost a quarter more CPU per check and timed a third to a half of
 * them out (docs/benchmarks.md). Each
 * check has its own connection (no reuse, no TLS session resumption: the
 * backend and its certificate are judged anew every time), made on a
 * socket that carries the backend's mark, so the health encapsulation
 * takes it to that backend.
 */
#ifndef MAGLEVD_HC_HTTPS_H
#define MAGLEVD_HC_HTTPS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/daemon.h"
#include "hc_fields.h"

struct hc_https;

/* Errors of connect() that are the balancer's own, not the backend's. */
static inline bool hc_local_errno(int e)
{
	return e == EADDRNOTAVAIL || e == EAGAIN || e == ENOBUFS || e == ENOMEM;
}

/* The end of a check: HC_OK, HC_FAIL (the backend's answer or silence) or
 * HC_UNKNOWN (the balancer could not make it), with why for the last two.
 * The check is gone when this runs.
 */
typedef void (*hc_https_done_fn)(struct daemon *d, void *arg, enum hc_result r, const char *why);

/*
 * Start a GET of p->path on addr over TLS, the socket marked
 * with mark unless 0. 0 with *out set; -1 when it could not start (why set:
 * unknown, nothing in flight).
 */
int hc_https_start(struct daemon *d, const struct hc_params *p, const struct sockaddr *addr,
		   uint32_t mark, hc_https_done_fn done, void *arg, struct hc_https **out,
		   char *why, size_t whylen);
/* Abandon a check in flight (its timeout): done is not called. */
void hc_https_cancel(struct hc_https *h);
/* Let curl start the checks added since the last call: at once, not after
 * the rest of the loop's tick (health_tick calls it after its starts).
 */
void hc_https_kick(void);
/* Free what ended during the loop's batch of events (health_reap). */
void hc_https_reap(void);

#endif /* MAGLEVD_HC_HTTPS_H */
