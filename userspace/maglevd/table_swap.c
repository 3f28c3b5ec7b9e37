// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "maglev_maps.h"
#include "table_swap.h"

#define SWAP_LIVE_TIMEOUT_NS 2000000000LL
/* Swaps still in their grace period at once; more waits for one to end. */
#define SWAP_MAX_INFLIGHT 16

struct swap_job {
	struct maglev_dp *dp;
	uint32_t vip_id;
	int result;
	bool done;
	int refs; /* the thread and the caller; the last one frees */
	bool has_prev;
	uint32_t table[MAGLEV_TABLE_SIZE];
	uint32_t prev[MAGLEV_TABLE_SIZE]; /* second chance: previous owners */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int inflight;

static void job_put(struct swap_job *j)
{
	bool last;

	pthread_mutex_lock(&lock);
	last = --j->refs == 0;
	pthread_mutex_unlock(&lock);
	if (last)
		free(j);
}

static void *swap_thread(void *arg)
{
	struct swap_job *j = arg;
	int r = maglev_dp_table_swap_prev(j->dp, j->vip_id, j->table, j->has_prev ? j->prev : NULL);

	pthread_mutex_lock(&lock);
	j->result = r;
	j->done = true;
	inflight--;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	job_put(j);
	return NULL;
}

void table_swap_quiesce(void)
{
	pthread_mutex_lock(&lock);
	while (inflight)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int sync_swap(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
		     const uint32_t *prev, char *err, size_t errlen)
{
	int r = maglev_dp_table_swap_prev(dp, vip_id, table, prev);

	if (r)
		snprintf(err, errlen, "datapath: table swap: %s", strerror(-r));
	return r;
}

/*
 * Several swaps may be in their grace period at once, even of one VIP: each
 * starts only after the previous one's outer-slot update was seen, so the
 * updates land in order and the newest table stays live.
 */
int table_swap_live(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
		    const uint32_t *prev, char *err, size_t errlen)
{
	int outer = maglev_dp_map_fd(dp, "maglev_tables"), r = 0;
	uint32_t old_id = 0, id;
	struct swap_job *j;
	long long deadline;
	pthread_attr_t attr;
	pthread_t t;
	bool done;

	j = outer < 0 ? NULL : malloc(sizeof(*j));
	if (!j)
		return sync_swap(dp, vip_id, table, prev, err, errlen);
	if (bpf_map_lookup_elem(outer, &vip_id, &old_id))
		old_id = 0;
	j->dp = dp;
	j->vip_id = vip_id;
	j->done = false;
	j->result = 0;
	j->refs = 2;
	memcpy(j->table, table, sizeof(j->table));
	j->has_prev = prev != NULL;
	if (prev)
		memcpy(j->prev, prev, sizeof(j->prev));

	pthread_mutex_lock(&lock);
	while (inflight >= SWAP_MAX_INFLIGHT)
		pthread_cond_wait(&cond, &lock);
	inflight++;
	pthread_mutex_unlock(&lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, swap_thread, j)) {
		pthread_attr_destroy(&attr);
		pthread_mutex_lock(&lock);
		inflight--;
		pthread_mutex_unlock(&lock);
		free(j);
		return sync_swap(dp, vip_id, table, prev, err, errlen);
	}
	pthread_attr_destroy(&attr);

	deadline = now_ns() + SWAP_LIVE_TIMEOUT_NS;
	for (;;) {
		pthread_mutex_lock(&lock);
		done = j->done;
		r = j->result;
		pthread_mutex_unlock(&lock);
		if (done)
			break;
		if (!bpf_map_lookup_elem(outer, &vip_id, &id) && id != old_id)
			break; /* live; the thread sits out the grace period */
		if (now_ns() > deadline) {
			/* Not visible yet: wait for the call itself. */
			pthread_mutex_lock(&lock);
			while (!j->done)
				pthread_cond_wait(&cond, &lock);
			r = j->result;
			pthread_mutex_unlock(&lock);
			break;
		}
		sched_yield();
	}
	job_put(j);
	if (r)
		snprintf(err, errlen, "datapath: table swap: %s", strerror(-r));
	return r;
}
