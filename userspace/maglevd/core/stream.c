// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/stream.h"

static struct stream *streams;
/* Dropped while other events may still name them; see stream_reap(). */
static struct stream *zombies;
/* The stream whose handler runs: what stream_defer_id() marks. */
static struct stream *handling;

static void out_release(struct stream *s)
{
	free(s->out);
	/* A large answer (table --dump: tens of thousands of ranges) leaves its
	 * JSON tree's small blocks free in the heap; give them back so RSS stays
	 * bounded however often an operator dumps.
	 */
	if (s->out_len > (64u << 10))
		malloc_trim(0);
	s->out = NULL;
}

static void stream_unlink(struct daemon *d, struct stream *s)
{
	ev_del(d, &s->src);
	close(s->src.fd);
	s->src.fd = -1;
	if (s->prev)
		s->prev->next = s->next;
	else
		streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	if (s->pool)
		s->pool->n--;
}

/* From the stream's own event: nothing else can name it any more. */
static void stream_free(struct daemon *d, struct stream *s)
{
	stream_unlink(d, s);
	free(s->in);
	out_release(s);
	free(s);
}

/* From anywhere else: close now, free after the current batch of events. */
static void stream_kill(struct daemon *d, struct stream *s)
{
	stream_unlink(d, s);
	s->dead = true;
	s->prev = NULL;
	s->next = zombies;
	zombies = s;
}

void stream_reap(void)
{
	while (zombies) {
		struct stream *s = zombies;

		zombies = s->next;
		free(s->in);
		out_release(s);
		free(s);
	}
}

static void stream_reply(struct daemon *d, struct stream *s, char *out, size_t len)
{
	out_release(s);
	s->out = out;
	s->out_len = len;
	s->out_off = 0;
	if (ev_mod(d, &s->src, EPOLLOUT))
		stream_free(d, s);
}

static void on_event(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct stream *s = (struct stream *)src;
	ssize_t n;

	if (s->dead)
		return;
	if (s->out) {
		while (s->out_off < s->out_len) {
			n = send(src->fd, s->out + s->out_off, s->out_len - s->out_off,
				 MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					return;
				break;
			}
			s->out_off += (size_t)n;
		}
		/* Closing a Unix socket with unread input resets the peer, which can
		 * lose the answer just sent: drop what the client sent past its
		 * request first.
		 */
		{
			char sink[4096];
			int k;

			for (k = 0; k < 256; k++)
				if (recv(src->fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
					break;
		}
		stream_free(d, s);
		return;
	}
	for (;;) {
		char *t;

		if (s->in_len + 1 >= s->in_cap) {
			size_t cap = s->in_cap * 2;
			char *nb;

			if (s->in_cap >= s->in_max + 1) {
				char *o = strdup(s->overflow_reply);

				if (o)
					stream_reply(d, s, o, strlen(o));
				else
					stream_free(d, s);
				return;
			}
			if (cap > s->in_max + 1)
				cap = s->in_max + 1;
			nb = realloc(s->in, cap);
			if (!nb) {
				stream_free(d, s);
				return;
			}
			s->in = nb;
			s->in_cap = cap;
		}
		n = recv(src->fd, s->in + s->in_len, s->in_cap - 1 - s->in_len, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			stream_free(d, s);
			return;
		}
		if (n == 0) {
			/* EOF: a request without its terminator still gets answered. */
			if (!s->in_len) {
				stream_free(d, s);
				return;
			}
			break;
		}
		s->in[s->in_len + (size_t)n] = '\0';
		/* Search only the new bytes (and the terminator's overlap). */
		t = strstr(s->in + (s->in_len > 4 ? s->in_len - 4 : 0), s->terminator);
		s->in_len += (size_t)n;
		if (t || memchr(s->in + s->in_len - n, '\0', (size_t)n)) {
			if (t)
				s->in_len = (size_t)(t - s->in);
			break;
		}
	}
	{
		char *out = NULL;
		size_t len = 0;

		handling = s;
		s->handler(d, s->src.fd, s->in, s->in_len, &out, &len);
		handling = NULL;
		if (!out && s->deferred)
			return;
		if (!out) {
			stream_free(d, s);
			return;
		}
		stream_reply(d, s, out, len);
	}
}

/* Make room in a full pool; false if every client is being answered. */
static bool pool_make_room(struct daemon *d, struct stream_pool *pool)
{
	struct stream *s, *oldest = NULL;

	/* Newest first: the last match is the one that has waited longest. */
	for (s = streams; s; s = s->next)
		if (s->pool == pool && !s->out && !s->deferred)
			oldest = s;
	if (!oldest)
		return false;
	log_debug("%s: %u clients, dropping the longest-waiting one", pool->name, pool->n);
	stream_kill(d, oldest);
	return true;
}

int stream_start(struct daemon *d, int fd, const char *terminator, size_t in_max,
		 uint32_t timeout_ms, const char *overflow_reply, stream_handler handler,
		 struct stream_pool *pool)
{
	struct stream *s;

	if (pool && pool->n >= pool->max && !pool_make_room(d, pool)) {
		log_debug("%s: %u clients being answered, closing a new one", pool->name, pool->n);
		close(fd);
		return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	s->in_cap = 4096;
	s->in = malloc(s->in_cap);
	if (!s->in) {
		free(s);
		close(fd);
		return -ENOMEM;
	}
	s->src.fd = fd;
	s->src.cb = on_event;
	s->terminator = terminator;
	s->overflow_reply = overflow_reply;
	s->in_max = in_max;
	s->handler = handler;
	s->deadline_ms = mono_ms() + timeout_ms;
	s->pool = pool;
	{
		static uint64_t next_id;

		s->id = ++next_id;
	}
	if (pool)
		pool->n++;
	s->next = streams;
	if (streams)
		streams->prev = s;
	streams = s;
	if (ev_add(d, &s->src, EPOLLIN)) {
		stream_free(d, s);
		return -EIO;
	}
	return 0;
}

uint64_t stream_defer_id(struct daemon *d, uint32_t timeout_ms)
{
	struct stream *s = handling;

	if (!s)
		return 0;
	s->deferred = true;
	s->deadline_ms = mono_ms() + timeout_ms;
	/* Not watched meanwhile: its request is read, nothing more is wanted. */
	ev_del(d, &s->src);
	return s->id;
}

void stream_answer_id(struct daemon *d, uint64_t id, char *out, size_t len)
{
	struct stream *s;

	for (s = streams; s; s = s->next) {
		if (s->id != id || !s->deferred || s->dead)
			continue;
		s->deferred = false;
		out_release(s);
		s->out = out;
		s->out_len = len;
		s->out_off = 0;
		/* Not from the stream's own event: a failure must not free it now. */
		if (ev_add(d, &s->src, EPOLLOUT))
			stream_kill(d, s);
		return;
	}
	free(out);
}

void stream_sweep(struct daemon *d)
{
	uint64_t now = mono_ms();
	struct stream *s = streams, *next;

	for (; s; s = next) {
		next = s->next;
		if (now >= s->deadline_ms) {
			log_debug("dropping a client that took too long");
			stream_kill(d, s);
		}
	}
}

void stream_close_all(struct daemon *d)
{
	while (streams)
		stream_free(d, streams);
	stream_reap();
}
