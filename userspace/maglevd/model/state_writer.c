// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Persisting the state off the event loop. An fsync costs 5-15 ms on
 * ordinary disks and rendering a large state as JSON a few more, more than
 * the whole datapath update, so the answer to a change goes out once the
 * change is live, and the new state (the live registry, which is never
 * changed in place, shared by reference) is written behind it. Every write is still temp +
 * fsync + rename + fsync(dir): a crash leaves the old or the new file, never a torn one.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "model/state.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct registry *pending;
static char *path;
static bool writing;
static uint64_t failures;

static void *writer(void *arg)
{
	(void)arg;
	/* Below the event loop: on a busy host the answer to a change goes
	 * out before the file is rendered.
	 */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10))
		log_debug("state writer: setpriority: %s", strerror(errno));
	pthread_mutex_lock(&lock);
	for (;;) {
		struct registry *snap;
		char *text, err[300];
		size_t len = 0;
		int r = -1;

		while (!pending)
			pthread_cond_wait(&cond, &lock);
		snap = pending;
		pending = NULL;
		writing = true;
		pthread_mutex_unlock(&lock);
		/* Rendering 1,000 backends as JSON takes milliseconds: here, not in
		 * the event loop.
		 */
		text = state_render(snap, &len);
		registry_free(snap);
		if (text)
			r = state_write(path, text, len, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "out of memory rendering the state");
		free(text);
		if (r)
			log_err("state file: %s", err);
		pthread_mutex_lock(&lock);
		if (r)
			failures++;
		writing = false;
		pthread_cond_broadcast(&cond);
	}
	return NULL;
}

int state_writer_start(const char *p)
{
	pthread_t t;

	path = strdup(p);
	if (!path || pthread_create(&t, NULL, writer, NULL))
		return -1;
	pthread_detach(t);
	return 0;
}

void state_writer_submit(struct registry *snap)
{
	pthread_mutex_lock(&lock);
	registry_free(pending);
	pending = snap;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

uint64_t state_writer_flush(void)
{
	uint64_t f;

	pthread_mutex_lock(&lock);
	while (pending || writing)
		pthread_cond_wait(&cond, &lock);
	f = failures;
	pthread_mutex_unlock(&lock);
	return f;
}

uint64_t state_writer_failures(void)
{
	uint64_t f;

	pthread_mutex_lock(&lock);
	f = failures;
	pthread_mutex_unlock(&lock);
	return f;
}
