// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "core/log.h"
#include "maglev_maps.h"
#include "datapath/table_swap.h"

/* Grace periods waited out at once: they sleep in the kernel, not on a CPU. */
#define SWAP_WORKERS 16
/* How often the loop looks whether a swap under way is live yet. */
#define SWAP_LIVE_POLL_NS 1000000

struct swap_job {
	struct swap_job *next;
	struct maglev_dp *dp;
	uint32_t vip_id;
	bool clear, commit;
	/* Live: the outer slot names the new table (or none, for a delete);
	 * the call may still be waiting out the grace period.
	 */
	bool live;
	uint32_t old_id; /* the inner map the slot named when the call began */
	uint32_t *prev;	 /* second chance: previous owners, or NULL */
	uint32_t table[MAGLEV_TABLE_SIZE];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static struct swap_job *head, **tail = &head;
static bool busy[MAGLEV_MAX_VIPS]; /* a worker is swapping this VIP's table */
static unsigned int pending, nworkers;
/* Commit jobs not live yet: what the commit waits for. */
static unsigned int unlive;
static struct swap_job *active[SWAP_WORKERS]; /* each worker's call under way */
static bool stopping;
static pthread_t workers[SWAP_WORKERS];
static int commit_err;
static char commit_msg[128];
/* Errors of swaps outside a commit, logged by the loop (2nd chance). */
static int other_err;
static uint32_t other_vip;

static int efd = -1;
static void (*on_idle)(struct daemon *d);
static struct ev_source src = {.fd = -1}, poll_src = {.fd = -1};
static bool poll_armed;
/* Tests only: while this file exists, workers hold each swap (daemon_loop_latency.sh). */
static const char *hold_path;
/* Tests only: a swap that finds this file removes it and fails, as a refused
 * map update would (daemon_commit_fail.sh): one failure per file made.
 */
static const char *fail_path;

static void poll_arm(bool on)
{
	struct itimerspec its = {.it_interval.tv_nsec = on ? SWAP_LIVE_POLL_NS : 0,
				 .it_value.tv_nsec = on ? SWAP_LIVE_POLL_NS : 0};

	if (poll_src.fd < 0 || poll_armed == on)
		return;
	if (timerfd_settime(poll_src.fd, 0, &its, NULL))
		log_warn("table swap: timerfd: %s", strerror(errno));
	else
		poll_armed = on;
}

/* The first queued job whose VIP no worker is swapping (lock held). */
static struct swap_job *take(void)
{
	struct swap_job **pp, *j;

	for (pp = &head; (j = *pp); pp = &j->next) {
		if (busy[j->vip_id])
			continue;
		*pp = j->next;
		if (tail == &j->next)
			tail = pp;
		busy[j->vip_id] = true;
		return j;
	}
	return NULL;
}

static int run(struct swap_job *j)
{
	struct stat st;
	struct timespec ms10 = {0, 10000000};
	int r;

	while (hold_path && !stat(hold_path, &st))
		nanosleep(&ms10, NULL);
	if (fail_path && !unlink(fail_path))
		return -EIO;
	if (j->clear) {
		r = maglev_dp_table_clear(j->dp, j->vip_id);
		return r == -ENOENT ? 0 : r;
	}
	return maglev_dp_table_swap_prev(j->dp, j->vip_id, j->table, j->prev);
}

/* The inner map id vip_id's slot names, 0 for none. */
static uint32_t slot_id(struct swap_job *j)
{
	int outer = maglev_dp_map_fd(j->dp, "maglev_tables");
	uint32_t id = 0;

	if (outer < 0 || bpf_map_lookup_elem(outer, &j->vip_id, &id))
		return 0;
	return id;
}

/* j's new table is live (lock held): the next swap of its VIP may start. */
static void went_live(struct swap_job *j)
{
	j->live = true;
	busy[j->vip_id] = false;
	if (j->commit)
		unlive--;
	pthread_cond_broadcast(&work);
}

/* Account for a finished job (lock held). */
static void finished(struct swap_job *j, int r)
{
	if (!j->live && !r)
		went_live(j);
	else if (!j->live) {
		busy[j->vip_id] = false;
		if (j->commit)
			unlive--;
	}
	if (r && j->commit && !commit_err) {
		commit_err = r;
		snprintf(commit_msg, sizeof(commit_msg), "datapath: table %s of VIP %u: %s",
			 j->clear ? "delete" : "swap", j->vip_id, strerror(-r));
	} else if (r && !j->commit && !other_err) {
		other_err = r;
		other_vip = j->vip_id;
	}
	pending--;
	free(j->prev);
	free(j);
	pthread_cond_broadcast(&done);
	/* A job held back behind this one's VIP may go now. */
	pthread_cond_broadcast(&work);
}

static void wake_loop(void)
{
	uint64_t one = 1;

	if (efd >= 0 && write(efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("table swap: eventfd: %s", strerror(errno));
}

static void *worker(void *arg)
{
	struct swap_job **mine = arg, *j;
	int r;

	pthread_mutex_lock(&lock);
	for (;;) {
		j = NULL;
		while (!stopping && !(j = take()))
			pthread_cond_wait(&work, &lock);
		if (!j)
			break;
		/* Read before the call: the slot names this once it changes. */
		j->old_id = slot_id(j);
		*mine = j;
		pthread_mutex_unlock(&lock);
		r = run(j);
		pthread_mutex_lock(&lock);
		*mine = NULL;
		finished(j, r);
		wake_loop();
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Start the workers on first use (lock held); false if none could be. */
static bool workers_up(void)
{
	sigset_t all, old;

	if (nworkers)
		return true;
	/* Signals stay with the loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	while (nworkers < SWAP_WORKERS &&
	       !pthread_create(&workers[nworkers], NULL, worker, &active[nworkers]))
		nworkers++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!nworkers)
		log_warn("table swap: no worker thread: swapping on the event loop");
	return nworkers > 0;
}

void table_swap_submit(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
		       const uint32_t *prev, bool commit)
{
	struct swap_job *j = malloc(sizeof(*j));
	bool inline_run;
	int r;

	if (j) {
		j->prev = prev ? malloc(sizeof(j->table)) : NULL;
		if (prev && !j->prev) {
			free(j);
			j = NULL;
		}
	}
	if (!j) {
		/* Last resort: the call itself, here, on the caller's copies. */
		r = table ? maglev_dp_table_swap_prev(dp, vip_id, table, prev)
			  : maglev_dp_table_clear(dp, vip_id);
		pthread_mutex_lock(&lock);
		if (r && r != -ENOENT && commit && !commit_err)
			commit_err = r;
		pthread_mutex_unlock(&lock);
		wake_loop();
		return;
	}
	j->next = NULL;
	j->dp = dp;
	j->vip_id = vip_id;
	j->clear = !table;
	j->commit = commit;
	j->live = false;
	j->old_id = 0;
	if (table)
		memcpy(j->table, table, sizeof(j->table));
	if (prev)
		memcpy(j->prev, prev, sizeof(j->table));
	pthread_mutex_lock(&lock);
	pending++;
	if (commit)
		unlive++;
	inline_run = !workers_up();
	if (!inline_run) {
		*tail = j;
		tail = &j->next;
		pthread_cond_signal(&work);
		pthread_mutex_unlock(&lock);
		poll_arm(true);
		return;
	}
	busy[vip_id] = true;
	pthread_mutex_unlock(&lock);
	r = run(j);
	pthread_mutex_lock(&lock);
	finished(j, r);
	pthread_mutex_unlock(&lock);
	wake_loop();
}

unsigned int table_swap_unlive(void)
{
	unsigned int n;

	pthread_mutex_lock(&lock);
	n = unlive;
	pthread_mutex_unlock(&lock);
	return n;
}

unsigned int table_swap_pending(void)
{
	unsigned int n;

	pthread_mutex_lock(&lock);
	n = pending;
	pthread_mutex_unlock(&lock);
	return n;
}

int table_swap_take_error(char *err, size_t errlen)
{
	int r;

	pthread_mutex_lock(&lock);
	r = commit_err;
	if (r)
		snprintf(err, errlen, "%s", commit_msg[0] ? commit_msg : strerror(-r));
	commit_err = 0;
	commit_msg[0] = '\0';
	pthread_mutex_unlock(&lock);
	return r;
}

void table_swap_wait(void)
{
	pthread_mutex_lock(&lock);
	while (pending)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
}

static void on_event(struct daemon *d, struct ev_source *s, uint32_t events)
{
	uint64_t n;
	int oe;
	uint32_t ov;

	(void)events;
	if (read(s->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("table swap: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&lock);
	oe = other_err;
	ov = other_vip;
	other_err = 0;
	n = unlive;
	pthread_mutex_unlock(&lock);
	if (oe)
		log_warn("table swap of VIP %u: %s", ov, strerror(-oe));
	if (!n && on_idle)
		on_idle(d);
}

/* Every SWAP_LIVE_POLL_NS while swaps are under way: which are live now. */
static void on_poll(struct daemon *d, struct ev_source *s, uint32_t events)
{
	unsigned int i, n, left;
	uint64_t ticks;

	(void)events;
	if (read(s->fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_warn("table swap: timerfd: %s", strerror(errno));
	pthread_mutex_lock(&lock);
	for (i = 0; i < nworkers; i++) {
		struct swap_job *j = active[i];
		uint32_t id;

		if (!j || j->live)
			continue;
		id = slot_id(j);
		if (j->clear ? !id : id && id != j->old_id)
			went_live(j);
	}
	n = unlive;
	left = pending;
	pthread_mutex_unlock(&lock);
	if (!left)
		poll_arm(false);
	if (!n && on_idle)
		on_idle(d);
}

int table_swap_init(struct daemon *d, void (*idle)(struct daemon *d))
{
	hold_path = getenv("MAGLEVD_TEST_SWAP_HOLD");
	fail_path = getenv("MAGLEVD_TEST_SWAP_FAIL");
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		return -errno;
	on_idle = idle;
	src.fd = efd;
	src.cb = on_event;
	poll_src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	poll_src.cb = on_poll;
	if (poll_src.fd < 0)
		return -errno;
	if (ev_add(d, &poll_src, EPOLLIN))
		return -errno;
	return ev_add(d, &src, EPOLLIN);
}

void table_swap_quiesce(void)
{
	unsigned int i;

	table_swap_wait();
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_broadcast(&work);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);
	nworkers = 0;
}
