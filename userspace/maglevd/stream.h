/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One request/response exchange on a non-blocking stream socket, for the
 * control socket and the metrics server: read until a terminator (bounded in
 * size and time), hand the request to a handler, write its answer, close.
 * A client that sends too much, too slowly or nothing at all is dropped
 * without holding up the event loop.
 */
#ifndef MAGLEVD_STREAM_H
#define MAGLEVD_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

struct stream;

/* Build the answer to in[0..len) into *out (malloc'ed, *out_len bytes). */
typedef void (*stream_handler)(struct daemon *d, const char *in, size_t len, char **out,
			       size_t *out_len);

struct stream {
	struct ev_source src; /* first member */
	stream_handler handler;
	const char *terminator;
	/* What to answer when the request is too large or too slow. */
	const char *overflow_reply;
	char *in, *out;
	size_t in_len, in_cap, in_max, out_len, out_off;
	uint64_t deadline_ms;
	struct stream *prev, *next;
};

/* Take ownership of connected fd; returns 0 or -errno (fd closed). */
int stream_start(struct daemon *d, int fd, const char *terminator, size_t in_max,
		 uint32_t timeout_ms, const char *overflow_reply, stream_handler handler);
/* Drop streams past their deadline. */
void stream_sweep(struct daemon *d);
void stream_close_all(struct daemon *d);

#endif /* MAGLEVD_STREAM_H */
