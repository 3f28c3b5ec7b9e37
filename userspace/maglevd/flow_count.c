// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn_census.h"
#include "flow_count.h"
#include "log.h"

/*
 * Two counts: the thread fills the spare one, then swaps it in under the
 * lock; readers hold the lock only to read one number.
 */
static struct conn_census *cur, *spare;
/* With bounded loads: each backend's new-flow count read just before its
 * census, swapped with it (bounded.c adds the flows picked since).
 */
static struct maglev_backend_stats *nf_cur, *nf_spare;
static bool nf_have_cur, nf_have_spare;
/* The new-flow counts to read: indices below nf_below; nf_cur holds those
 * below nf_cur_below (what was asked when it was read).
 */
static uint32_t nf_below, nf_cur_below;
static uint64_t cur_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static bool stopping, running, fast, kick;
static pthread_t thread;
static struct maglev_dp *dp;

static void *run(void *arg)
{
	bool warned = false;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		uint64_t t0, took;
		struct timespec until;
		int r;

		uint32_t below = nf_below;

		nf_have_spare = fast;
		pthread_mutex_unlock(&lock);
		t0 = mono_ms();
		if (nf_have_spare && maglev_dp_backend_stats_below(dp, below, nf_spare))
			nf_have_spare = false;
		r = maglev_conn_census(dp, spare);
		took = mono_ms() - t0;
		pthread_mutex_lock(&lock);
		if (!r) {
			struct conn_census *t = cur;
			struct maglev_backend_stats *n = nf_cur;

			cur = spare;
			spare = t;
			nf_cur = nf_spare;
			nf_spare = n;
			nf_have_cur = nf_have_spare;
			nf_cur_below = below;
			cur_ms = mono_ms();
		} else if (!warned) {
			/* Logging from this thread is fine: log_msg is one fprintf. */
			log_warn("counting the connection table: %s", strerror(-r));
			warned = true;
		}
		/* A table that takes long to scan is scanned less often (<5% of a CPU). */
		{
			uint64_t every = fast ? FLOW_COUNT_FAST_MS : FLOW_COUNT_INTERVAL_MS;

			took = took * 20 > every ? took * 20 : every;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(took / 1000);
		until.tv_nsec += (long)(took % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (!stopping && !kick &&
		       pthread_cond_timedwait(&wake, &lock, &until) != ETIMEDOUT)
			;
		kick = false;
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int flow_count_start(struct daemon *d)
{
	int r;

	cur = calloc(1, sizeof(*cur));
	spare = calloc(1, sizeof(*spare));
	nf_cur = calloc(MAGLEV_MAX_BACKENDS, sizeof(*nf_cur));
	nf_spare = calloc(MAGLEV_MAX_BACKENDS, sizeof(*nf_spare));
	nf_have_cur = false;
	if (!cur || !spare || !nf_cur || !nf_spare)
		return -ENOMEM;
	cur_ms = 0;
	dp = d->dp;
	stopping = false;
	r = pthread_create(&thread, NULL, run, NULL);
	if (r)
		return -r;
	running = true;
	return 0;
}

void flow_count_stop(void)
{
	if (running) {
		pthread_mutex_lock(&lock);
		stopping = true;
		pthread_cond_signal(&wake);
		pthread_mutex_unlock(&lock);
		pthread_join(thread, NULL);
		running = false;
	}
	free(cur);
	free(spare);
	free(nf_cur);
	free(nf_spare);
	cur = spare = NULL;
	nf_cur = nf_spare = NULL;
}

void flow_count_fast(bool f, uint32_t below)
{
	pthread_mutex_lock(&lock);
	nf_below = below;
	if (f && !fast) {
		kick = true; /* the next count now, not in 2 s */
		pthread_cond_signal(&wake);
	}
	fast = f;
	pthread_mutex_unlock(&lock);
}

bool flow_count_backend_load(uint32_t idx, uint64_t *n, uint64_t *nf)
{
	bool ok;

	pthread_mutex_lock(&lock);
	ok = cur && cur_ms && nf_have_cur && idx < nf_cur_below;
	if (ok) {
		*n = cur->per_backend[idx];
		*nf = nf_cur[idx].new_flows;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

bool flow_count_epoch(uint64_t *ms)
{
	bool ok;

	pthread_mutex_lock(&lock);
	ok = cur && cur_ms;
	*ms = cur_ms;
	pthread_mutex_unlock(&lock);
	return ok;
}

bool flow_count_backend(uint32_t idx, uint64_t *n)
{
	bool ok;

	pthread_mutex_lock(&lock);
	ok = cur && cur_ms && idx < MAGLEV_MAX_BACKENDS;
	if (ok)
		*n = cur->per_backend[idx];
	pthread_mutex_unlock(&lock);
	return ok;
}

bool flow_count_table(uint64_t *slots, uint64_t *entries, uint64_t *live, double *age_s)
{
	bool ok;

	pthread_mutex_lock(&lock);
	ok = cur && cur_ms;
	if (ok) {
		*slots = cur->slots;
		*entries = cur->entries;
		*live = cur->live;
		*age_s = (double)(mono_ms() - cur_ms) / 1e3;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}
