/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The http and https checks: one GET each on libcurl's multi interface,
 * whose sockets and timer maglevd's epoll loop drives (hc_http.c). Each
 * check has its own connection (no reuse, no TLS session resumption: the
 * backend and its certificate are judged anew every time), made on a
 * socket that carries the backend's mark, so the health encapsulation
 * takes it to that backend.
 */
#ifndef MAGLEVD_HC_HTTP_H
#define MAGLEVD_HC_HTTP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/daemon.h"
#include "hc_fields.h"

struct hc_http;

/* Errors of connect() that are the balancer's own, not the backend's. */
static inline bool hc_local_errno(int e)
{
	return e == EADDRNOTAVAIL || e == EAGAIN || e == ENOBUFS || e == ENOMEM;
}

/* The end of a check: HC_OK, HC_FAIL (the backend's answer or silence) or
 * HC_UNKNOWN (the balancer could not make it), with why for the last two.
 * The check is gone when this runs.
 */
typedef void (*hc_http_done_fn)(struct daemon *d, void *arg, enum hc_result r, const char *why);

/*
 * Start a GET of p->path on addr (p->type http or https), the socket marked
 * with mark unless 0. 0 with *out set; -1 when it could not start (why set:
 * unknown, nothing in flight).
 */
int hc_http_start(struct daemon *d, const struct hc_params *p, const struct sockaddr *addr,
		  uint32_t mark, hc_http_done_fn done, void *arg, struct hc_http **out, char *why,
		  size_t whylen);
/* Abandon a check in flight (its timeout): done is not called. */
void hc_http_cancel(struct hc_http *h);
/* Let curl start the checks added since the last call: at once, not after
 * the rest of the loop's tick (health_tick calls it after its starts).
 */
void hc_http_kick(void);
/* Free what ended during the loop's batch of events (health_reap). */
void hc_http_reap(void);

#endif /* MAGLEVD_HC_HTTP_H */
