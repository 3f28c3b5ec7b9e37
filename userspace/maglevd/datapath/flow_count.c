// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn_census.h"
#include "datapath/flow_count.h"
#include "core/log.h"

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
static bool stopping, running, fast, kick, kick_census;
static pthread_t thread;
static struct maglev_dp *dp;
/* The table, mapped once for every census and look between them. */
static struct conn_map map;
/* Per census: the entries it saw that may end before the next one. */
#define FLOW_COUNT_WATCH 262144
static struct conn_watch *watch_a, *watch_b;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This thread's CPU time: what the budget is of (wall time grows with the
 * machine's load, not with the census's cost).
 */
static uint64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void wait_until_ms(uint64_t at_mono_ms)
{
	struct timespec until;
	uint64_t now = mono_ms(), d = at_mono_ms > now ? at_mono_ms - now : 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(d / 1000);
	until.tv_nsec += (long)(d % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while (!stopping && !kick && pthread_cond_timedwait(&wake, &lock, &until) != ETIMEDOUT)
		;
	kick = false;
}

/*
 * Between two censuses (while fast): the entries the last one saw ending
 * by now (UDP idle, closed connections) are looked at again, and those that
 * did end leave its counts, so that a census slower than a tick (a large
 * table) still gives loads that are at most a tick old for the flows it
 * saw. Called with the lock held; drops it while reading the table.
 */
static void recheck(void)
{
	static uint32_t gone[4096];
	struct conn_census *c = cur;
	long n;
	int i;

	if (!map.m || !c || !c->watch || !c->nwatch)
		return;
	pthread_mutex_unlock(&lock);
	/* Only this thread changes c's watch list and swaps cur. */
	n = maglev_conn_recheck(dp, &map, c, mono_ns(), gone, sizeof(gone) / sizeof(gone[0]));
	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		if (c->per_backend[gone[i]])
			c->per_backend[gone[i]]--;
		if (c->live)
			c->live--;
	}
}

static void *run(void *arg)
{
	bool warned = false;
	uint64_t next = 0, every_last = FLOW_COUNT_INTERVAL_MS;

	(void)arg;
	if (maglev_conn_map_open(dp, &map))
		memset(&map, 0, sizeof(map)); /* each census maps the table itself */
	pthread_mutex_lock(&lock);
	while (!stopping) {
		uint64_t t0, c0, took, every;
		int r;

		uint32_t below = nf_below;

		every = fast ? FLOW_COUNT_FAST_MS : FLOW_COUNT_INTERVAL_MS;
		if (mono_ms() < next && !kick_census) {
			/* Not yet time for a census: a tick's look at what ended. */
			recheck();
			wait_until_ms(fast && mono_ms() + FLOW_COUNT_FAST_MS < next
					      ? mono_ms() + FLOW_COUNT_FAST_MS
					      : next);
			continue;
		}
		kick_census = false;
		nf_have_spare = fast;
		/* Watch what may end before the census after next. */
		spare->watch_until = mono_ns() + 2 * every_last * 1000000ull + 1000000000ull;
		pthread_mutex_unlock(&lock);
		t0 = mono_ms();
		c0 = cpu_ms();
		if (nf_have_spare && maglev_dp_backend_stats_below(dp, below, nf_spare))
			nf_have_spare = false;
		r = map.m ? maglev_conn_census_mapped(dp, &map, spare)
			  : maglev_conn_census(dp, spare);
		took = cpu_ms() - c0;
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
		every_last = took * 20 > every ? took * 20 : every;
		next = t0 + every_last;
		wait_until_ms(fast && every_last > FLOW_COUNT_FAST_MS ? t0 + FLOW_COUNT_FAST_MS
								      : next);
	}
	pthread_mutex_unlock(&lock);
	maglev_conn_map_close(&map);
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
	/* Untouched pages of these cost nothing until a census fills them. */
	watch_a = calloc(FLOW_COUNT_WATCH, sizeof(*watch_a));
	watch_b = calloc(FLOW_COUNT_WATCH, sizeof(*watch_b));
	if (!cur || !spare || !nf_cur || !nf_spare || !watch_a || !watch_b)
		return -ENOMEM;
	cur->watch = watch_a;
	spare->watch = watch_b;
	cur->watch_cap = spare->watch_cap = FLOW_COUNT_WATCH;
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
	free(watch_a);
	free(watch_b);
	watch_a = watch_b = NULL;
	cur = spare = NULL;
	nf_cur = nf_spare = NULL;
}

void flow_count_fast(bool f, uint32_t below)
{
	pthread_mutex_lock(&lock);
	nf_below = below;
	if (f && !fast) {
		kick = kick_census = true; /* the next count now, not in 2 s */
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
