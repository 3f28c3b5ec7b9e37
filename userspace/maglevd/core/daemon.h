/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * maglevd's process-wide state and its event loop: one thread, one epoll
 * set. Every source of events (signals, the control socket and its clients,
 * the metrics server and its clients, health-check sockets, the timer)
 * registers a struct ev_source whose callback runs when its fd is ready.
 */
#ifndef MAGLEVD_DAEMON_H
#define MAGLEVD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <json-c/json.h>

#include "core/config.h"
#include "datapath.h"
#include "model/registry.h"

struct daemon;

/* Who made a commit: its failures are counted by this (commit_queue.c). */
enum commit_source {
	COMMIT_SRC_CTL,		 /* a control client's change; the client hears the error */
	COMMIT_SRC_HEALTH,	 /* this balancer's health verdicts */
	COMMIT_SRC_FLEET,	 /* a desired state from etcd */
	COMMIT_SRC_FLEET_HEALTH, /* the fleet's health verdicts (health_scope fleet) */
	COMMIT_SRC_RELOAD,	 /* every table rebuilt by a reload (a new seed) */
	COMMIT_SOURCES
};

/* The source's name in metrics, status and the log. */
static inline const char *commit_source_name(enum commit_source src)
{
	/* In the order of enum commit_source. */
	static const char *const names[COMMIT_SOURCES] = {"ctl", "health", "fleet", "fleet_health",
							  "reload"};

	return src < COMMIT_SOURCES ? names[src] : "?";
}

struct ev_source {
	int fd;
	void (*cb)(struct daemon *d, struct ev_source *src, uint32_t events);
};

struct daemon {
	const char *config_path;
	struct maglevd_config cfg;
	struct maglev_dp *dp;
	struct registry *reg; /* newest: what the datapath will hold (daemon_applied) */
	struct registry_ctx ctx;
	int epfd;
	bool stop;
	uint64_t start_ms;
	uint64_t commits, reloads, reload_failures, ctl_requests, ctl_rejected;
	/* Commits not applied, by who made them (enum commit_source), and the
	 * last one's source, time (0: none yet) and error: a commit no client
	 * waits for (a health verdict, an etcd revision) has no one else to
	 * tell.
	 */
	uint64_t commit_failures[COMMIT_SOURCES];
	int last_commit_failure_source;
	time_t last_commit_failure_time;
	char last_commit_error[300];
	/* The last reload (SIGHUP or "maglevctl reload"), recorded by
	 * status_reload_done(): wall-clock time (0: none yet) and why it
	 * failed ("" if it did not).
	 */
	time_t last_reload_time;
	char reload_error[512];
	/* Keys the last good reload changed that take effect on restart only
	 * (space-separated; "" none): they wait, and status says so.
	 */
	char restart_pending[256];
	/* What the last good reload changed that needs action elsewhere ("": none). */
	char reload_warning[256];
	int ifindex[CFG_MAX_IFACES];
	int n_attached;
	/* metrics_sample(): samples taken, and the seconds the current rates
	 * (pps, bps) span.
	 */
	uint64_t rate_samples;
	double rate_window_s;
};

int ev_add(struct daemon *d, struct ev_source *src, uint32_t events);
int ev_mod(struct daemon *d, struct ev_source *src, uint32_t events);
void ev_del(struct daemon *d, struct ev_source *src);
uint64_t mono_ms(void);
uint64_t mono_us(void);
/* CLOCK_REALTIME ms: what balancers compare (fleet_health.c), within NTP's offset. */
uint64_t real_ms(void);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC, ms: one value, so that a time
 * converted there and back (the state file's, model/state.c) comes back
 * the same.
 */
uint64_t real_offset_ms(void);
/* CLOCK_REALTIME ms rt as CLOCK_MONOTONIC ms, given both clocks' now (never
 * 0, which the callers read as "not set").
 */
static inline uint64_t mono_of_real(uint64_t rt, uint64_t now, uint64_t rnow)
{
	if (rt >= rnow)
		return now + (rt - rnow);
	return rnow - rt < now ? now - (rnow - rt) : 1;
}

/*
 * Make next (taken over) the live registry: write its difference to the
 * datapath, then persist it (commit_queue.c). Nothing waits: 0 means
 * accepted, and d->reg is next from now on; the datapath follows once the
 * table swaps have returned, when done(d, arg, 0 or -errno, err) is called
 * (on the event loop, maybe before this returns). A failure then puts back
 * what the datapath held before and is logged. -errno with err set: refused
 * at once, nothing changed, done not called.
 */
typedef void (*commit_done_fn)(struct daemon *d, void *arg, int r, const char *err);
int daemon_commit_then(struct daemon *d, struct registry *next, enum commit_source src,
		       commit_done_fn done, void *arg, char *err, size_t errlen);
int daemon_commit(struct daemon *d, struct registry *next, enum commit_source src, char *err,
		  size_t errlen);

/* done(d, arg, r, err) once every commit made so far is written (or failed). */
void daemon_commit_barrier(struct daemon *d, commit_done_fn done, void *arg);
/* Whether a commit is still being written. */
bool daemon_commit_busy(void);
/*
 * The registry the datapath holds: d->reg, or while commits are queued the
 * last one written (a VIP whose new table is being swapped in still
 * forwards with this one's).
 */
const struct registry *daemon_applied(const struct daemon *d);
/* Hook the commits to the event loop (table swap completions). */
int commit_queue_start(struct daemon *d);
/* At exit: write every queued commit, waiting. */
void commit_queue_drain(struct daemon *d);

/*
 * Re-read the config file and apply it (SIGHUP, "maglevctl reload"). 0, or
 * -1 with err saying why: refused (nothing changed) or failed part-way.
 */
int daemon_reload(struct daemon *d, char *err, size_t errlen);

/*
 * Clients held at once by the control socket (ctl_server.c) and by the
 * metrics listener, which may face a network (metrics.c); fd_limit.c budgets
 * file descriptors for them.
 */
#define CTL_MAX_CLIENTS	    256
#define METRICS_MAX_CLIENTS 64

/* Control requests (requests.c): one JSON request line in, one answer out. */
json_object *ctl_handle(struct daemon *d, const char *line, size_t len);
/* The same, from a known client: an accepted change is logged with it (audit.h).
 * NULL: the answer is deferred (a change going to etcd in fleet mode, fleet.h).
 */
struct ctl_peer;
json_object *ctl_handle_peer(struct daemon *d, const struct ctl_peer *peer, const char *line,
			     size_t len);

/*
 * Commit a control client's change (ctl_commit.c): 0 done, answer now; 1
 * the answer is deferred until the datapath holds it (other clients are
 * served meanwhile); -errno refused, err says why, nothing changed. A
 * deferred change that fails is audit-logged as failed (peer, cmd: audit.h).
 */
int ctl_commit(struct daemon *d, struct registry *next, const struct ctl_peer *peer,
	       const char *cmd, char *err, size_t errlen);
/*
 * The same for an answer that must wait for the commits already made (a
 * reload's table rebuild): 0 the caller answers ok now; 1 deferred, ok
 * taken and sent once they are written (or an error if they failed).
 */
int ctl_answer_after_commits(struct daemon *d, json_object *ok);

/* Control socket (ctl_server.c). */
int ctl_server_start(struct daemon *d, char *err, size_t errlen);
void ctl_server_stop(struct daemon *d);
/* Socket owner group and mode from d->cfg (control_group), at start and on reload. */
void ctl_server_apply_group(struct daemon *d);

/* Metrics over HTTP (metrics.c). */
/* web_config: an exporter-toolkit web config file (TLS, basic auth), "" for none. */
int metrics_start(struct daemon *d, const char *listen_addr, const char *web_config, char *err,
		  size_t errlen);
void metrics_stop(struct daemon *d);
/* Rates over the last window of at least a second: true if sampled now. */
bool metrics_sample(struct daemon *d);
/* At exit, before the datapath closes: wait for a scrape in flight. */
void metrics_scrape_join(struct daemon *d);

/* Health checks (health.c). */
void health_tick(struct daemon *d);
/* Frees the check slots dropped during the last batch of events. */
void health_reap(void);
void health_json(struct daemon *d, const struct vip *v, const struct be *b, json_object *o);
/* A check's outcome; unknown: it could not be made, which changes nothing. */
enum hc_result { HC_OK, HC_FAIL, HC_UNKNOWN, HC_RESULTS };
const char *hc_result_name(enum hc_result r);
uint64_t health_checks_total(uint32_t idx, enum hc_result r);
/* Checks that could not be made since maglevd started. */
uint64_t health_unknown_total(void);
/* Counters of the health-check encapsulation program; false when it is not in use. */
bool health_encap_counters(uint64_t *out);
/*
 * Verdicts (health_verdicts.c): a backend's new state, held until
 * health_verdicts_apply() commits every one queued since the last call.
 */
void health_verdict(uint32_t vip_id, uint32_t idx, uint32_t gen, bool up, const char *why);
bool health_verdict_pending(uint32_t idx, uint32_t gen, bool *up);
void health_verdicts_apply(struct daemon *d);

/*
 * Raise the soft RLIMIT_NOFILE to what cfg's limits need (fd_limit.c): one
 * socket per backend with a check, the clients, and the daemon's own.
 */
void fd_limit_raise(const struct maglevd_config *cfg);

/* Datapath configuration derived from the config file (netinfo.c). */
int daemon_dp_config(struct daemon *d, const struct maglevd_config *cfg, struct maglev_config *out,
		     char *err, size_t errlen);
/*
 * Follow the default gateway's MAC for nexthop_mac auto (netinfo.c): route
 * and neighbour events, and the entry kept verified by the kernel; a new
 * MAC goes into the datapath config at once.
 */
int nexthop_watch_start(struct daemon *d, char *err, size_t errlen);
/* Write the per-interface MACs of every configured interface (netinfo.c);
 * at start, after a reload and every second.
 */
void netinfo_if_sync(struct daemon *d);
void nexthop_watch_stop(struct daemon *d);

/*
 * Announcing VIPs as kernel routes for a routing daemon (announce.c). Off
 * unless announce_table is set.
 */
int announce_start(struct daemon *d, char *err, size_t errlen);
/* Decide every VIP and keep the routes; called every tick. */
void announce_tick(struct daemon *d);
/* A stop was asked: withdraw, and true while the grace keeps the loop going. */
bool announce_grace(struct daemon *d);
/* The stop asked is a restart (SIGUSR2): leave the routes, as a crash does. */
void announce_keep(void);
/*
 * maglevd --withdraw: remove every route of cfg's announce table and
 * protocol, when no maglevd answers on the control socket (the unit run by
 * systemd's OnFailure= once maglevd is given up on). 0, or -errno with err.
 */
int announce_withdraw_all(const struct maglevd_config *cfg, char *err, size_t errlen);
/* maglevctl announce on|off: maintenance, kept across restarts. */
int announce_set(struct daemon *d, bool on, char *err, size_t errlen);
json_object *announce_json(struct daemon *d);
void announce_metrics(struct daemon *d, FILE *f);

#endif /* MAGLEVD_DAEMON_H */
