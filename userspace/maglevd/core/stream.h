/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One request/response exchange on a non-blocking stream socket, for the
 * control socket: read until a terminator (bounded in
 * size and time), hand the request to a handler, write its answer, close.
 * A client that sends too much, too slowly or nothing at all is dropped
 * without holding up the event loop, and a pool bounds how many clients of
 * one server are held at once.
 */
#ifndef MAGLEVD_STREAM_H
#define MAGLEVD_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/daemon.h"

struct stream;

/*
 * Build the answer to in[0..len) into *out (malloc'ed, *out_len bytes); fd
 * is the client's socket, for its peer credentials.
 */
typedef void (*stream_handler)(struct daemon *d, int fd, const char *in, size_t len, char **out,
			       size_t *out_len);

/*
 * The clients of one server. At max, a new client takes the place of the
 * one that has waited longest without completing its request (a flood of
 * idle connections cannot lock the operator out); if every client is
 * already being answered, the new one is closed at once.
 */
struct stream_pool {
	unsigned int n, max;
	const char *name; /* for the log */
};

struct stream {
	struct ev_source src; /* first member */
	stream_handler handler;
	const char *terminator;
	/* What to answer when the request is too large or too slow. */
	const char *overflow_reply;
	char *in, *out;
	size_t in_len, in_cap, in_max, out_len, out_off;
	uint64_t deadline_ms;
	struct stream_pool *pool;
	bool dead;     /* closed; freed by stream_reap() after the current events */
	bool deferred; /* request read, answer to come: stream_answer_id() */
	uint64_t id;   /* unique: names a deferred client safely */
	struct stream *prev, *next;
};

/* Take ownership of connected fd; returns 0 or -errno (fd closed). */
int stream_start(struct daemon *d, int fd, const char *terminator, size_t in_max,
		 uint32_t timeout_ms, const char *overflow_reply, stream_handler handler,
		 struct stream_pool *pool);
/*
 * From a handler, instead of an answer: the answer comes later, within
 * timeout_ms or the client is dropped. Deferred clients count as being
 * answered (a full pool keeps them). Returns the client's id (0 outside a
 * handler) for stream_answer_id(), which answers it with out[0..len)
 * (malloc'ed, taken over) if it is still there, and frees out if not.
 */
uint64_t stream_defer_id(struct daemon *d, uint32_t timeout_ms);
void stream_answer_id(struct daemon *d, uint64_t id, char *out, size_t len);
/* Drop streams past their deadline. */
void stream_sweep(struct daemon *d);
/*
 * Free the streams dropped by stream_sweep() or by a full pool. They are
 * closed at once but freed only here, called by the event loop between two
 * epoll_wait() batches: the batch being handled may still hold an event
 * that points at one of them.
 */
void stream_reap(void);
void stream_close_all(struct daemon *d);

#endif /* MAGLEVD_STREAM_H */
