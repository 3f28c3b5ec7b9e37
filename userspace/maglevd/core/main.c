// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * maglevd: loads (or adopts) the XDP balancer, restores its state, and runs
 * the event loop serving the control socket, health checks and metrics.
 * SIGTERM/SIGINT exit and leave the program attached (forwarding goes on);
 * SIGHUP reloads the config file.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpffs.h"
#include "core/daemon.h"
#include "datapath/bounded.h"
#include "datapath/flow_count.h"
#include "fleet/fleet.h"
#include "health/admission.h"
#include "health/settle.h"
#include "core/log.h"
#include "datapath/readback.h"
#include "datapath/second_chance.h"
#include "datapath/slowpath.h"
#include "model/state.h"
#include "metrics/status.h"
#include "metrics/web_config.h"
#include "core/stream.h"
#include "datapath/table_swap.h"
#include "version.h"
#include "core/watchdog.h"
#include "hot/hot_flows.h"

#define TICK_MS 100

/* -v: debug logging whatever log_level says, also after a reload. */
static bool verbose;

static void usage(FILE *f)
{
	fprintf(f, "Usage: maglevd [-c FILE] [-t] [-v] [-V] [-W]\n"
		   "  -c, --config FILE  configuration file (default " MAGLEVD_DEFAULT_CONFIG ")\n"
		   "  -t, --test         check the configuration file and exit\n"
		   "  -v, --verbose      log at debug level (overrides log_level)\n"
		   "  -V, --version      print the version and exit\n"
		   "  -W, --withdraw     remove every announced route (announce_table) and\n"
		   "                     exit; refused while a maglevd answers on the\n"
		   "                     control socket (systemd's OnFailure= runs it)\n"
		   "  -h, --help         this help\n"
		   "Runs in the foreground, logs to stderr, notifies systemd when ready.\n"
		   "Signals: SIGTERM/SIGINT exit leaving the XDP program attached and\n"
		   "forwarding (announced VIPs are withdrawn first, announce_stop_grace_ms\n"
		   "before the exit); SIGUSR2 exits the same way but leaves the announced\n"
		   "routes, as a crash does, for a restart (systemd's RestartKillSignal);\n"
		   "SIGHUP reloads the configuration file (maglevctl reload does too, and\n"
		   "reports the result).\n"
		   "Control it with maglevctl(8); see maglevd(8) and maglevd.conf(5).\n");
}

static uint64_t clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

uint64_t real_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

uint64_t real_offset_ms(void)
{
	struct timespec m, r;
	int64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	ns = (int64_t)(r.tv_sec - m.tv_sec) * 1000000000 + (r.tv_nsec - m.tv_nsec);
	return ns > 0 ? (uint64_t)((ns + 500000) / 1000000) : 0;
}

uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int ev_add(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = src};

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, src->fd, &ev) ? -errno : 0;
}

int ev_mod(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = src};

	return epoll_ctl(d->epfd, EPOLL_CTL_MOD, src->fd, &ev) ? -errno : 0;
}

void ev_del(struct daemon *d, struct ev_source *src)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, src->fd, NULL);
}

/* After a restart: drop what the datapath holds that the state does not
 * (a crash between a datapath write and the state file's rename).
 */
static void purge_stale(struct daemon *d)
{
	struct maglev_vip_key key, next;
	struct maglev_backend mb;
	int fd = maglev_dp_map_fd(d->dp, "maglev_vips");
	uint32_t i, n = 0;
	bool first = true;

	while (fd >= 0 && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		if (!registry_find_vip(d->reg, &next)) {
			maglev_dp_vip_del(d->dp, &next);
			n++;
			continue; /* deleted: restart the walk from the start */
		}
		key = next;
	}
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (!d->reg->vips[i])
			maglev_dp_table_clear(d->dp, i);
	for (i = 1; i < MAGLEV_MAX_BACKENDS; i++) {
		if (d->reg->idx_used[i] || maglev_dp_backend_get(d->dp, i, &mb) || !mb.flags)
			continue;
		mb.flags = 0;
		maglev_dp_backend_set(d->dp, i, &mb);
	}
	if (n)
		log_info("removed %u VIP entries the state file does not know", n);
}

/* VIPs in the (possibly adopted) datapath's VIP map. */
static uint32_t dp_vip_count(struct daemon *d)
{
	struct maglev_vip_key key, next;
	int fd = maglev_dp_map_fd(d->dp, "maglev_vips");
	uint32_t n = 0;

	while (fd >= 0 && !bpf_map_get_next_key(fd, n ? &key : NULL, &next)) {
		key = next;
		n++;
	}
	return n;
}

/* The health verdict a backend had before a restart, from the datapath. */
static void adopt_health(struct daemon *d)
{
	struct maglev_backend mb;
	uint32_t i, j;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];

		for (j = 0; v && j < v->nbe; j++) {
			struct be *b = &v->bes[j];
			struct hc_params p;

			vip_hc(v, &d->cfg.hc, &p);
			if (p.type == HC_NONE || maglev_dp_backend_get(d->dp, b->idx, &mb) ||
			    mb.gen != b->gen || memcmp(mb.addr, b->addr.addr, sizeof(mb.addr)))
				continue;
			/* DRAIN is also what a failed backend of an on_fail drain VIP
			 * keeps; only the operator's drain or weight 0 make it up.
			 */
			if (!(mb.flags & MAGLEV_BACKEND_F_UP) &&
			    !(mb.flags & MAGLEV_BACKEND_F_DRAIN && (b->drain || !b->weight)))
				b->up = false;
		}
	}
}

/*
 * Attach to every interface of cfg. On failure, the interfaces this call
 * newly attached (not in old, the running configuration on a reload) are
 * detached again, so a refused reload leaves the attachments as they were.
 */
static int attach_all(struct daemon *d, const struct maglevd_config *cfg,
		      const struct maglevd_config *old, char *err, size_t errlen)
{
	int i, r = 0;

	for (i = 0; i < cfg->n_ifaces; i++) {
		int ifindex = (int)if_nametoindex(cfg->ifaces[i]);
		char e[256];

		if (!ifindex) {
			snprintf(err, errlen, "interface %s: %s", cfg->ifaces[i], strerror(errno));
			r = -ENODEV;
			break;
		}
		r = maglev_dp_attach(d->dp, ifindex, cfg->xdp_generic, e, sizeof(e));
		if (r) {
			snprintf(err, errlen, "attaching to %s (%s mode): %s%s", cfg->ifaces[i],
				 cfg->xdp_generic ? "generic" : "native", e,
				 cfg->xdp_generic ? ""
						  : " (xdp_mode generic if the driver lacks XDP)");
			break;
		}
		log_info("attached to %s (ifindex %d, %s mode)", cfg->ifaces[i], ifindex,
			 cfg->xdp_generic ? "generic" : "native");
	}
	while (r && old && i-- > 0) {
		int ifindex = (int)if_nametoindex(cfg->ifaces[i]);

		if (!config_has_iface(old, cfg->ifaces[i]) && ifindex &&
		    !maglev_dp_detach(d->dp, ifindex))
			log_info("detached from %s again", cfg->ifaces[i]);
	}
	return r;
}

/* Rebuild every table (the seed changed); 0 or -errno with err set. */
static int rebuild_all_tables(struct daemon *d, char *err, size_t errlen)
{
	struct registry *next = registry_clone(d->reg);

	if (!next) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	registry_mark_all(next);
	return daemon_commit(d, next, COMMIT_SRC_RELOAD, err, errlen);
}

/* A reload applied part-way (the new config is in use, a rebuild failed):
 * reported as failed, with what is in use and what to do.
 */
static int reload_part_way(struct daemon *d, const char *what, const char *todo, const char *why,
			   char *err, size_t errlen)
{
	char e[512];

	snprintf(e, sizeof(e), "%s (%s): %s", what, why, todo);
	status_reload_done(d, e);
	snprintf(err, errlen, "%s", e);
	log_err("reload failed: %s", e);
	sd_notify(0, "READY=1");
	return -1;
}

int daemon_reload(struct daemon *d, char *err, size_t errlen)
{
	struct maglev_config mc, old_mc;
	struct maglevd_config nc;
	char e[512], e2[256], pending[sizeof(d->restart_pending)];
	bool reseed, regroup, refail, resrc;
	char new_state[sizeof(nc.state_file)];
	size_t pending_n;
	int i, r;

	sd_notify(0, "RELOADING=1");
	if (config_load(d->config_path, &nc, e, sizeof(e)))
		goto fail;
	/* Settings bound at start stay; name each that changed rather than
	 * half-apply it. They wait for a restart (status, the reload's answer).
	 */
	snprintf(new_state, sizeof(new_state), "%s", nc.state_file);
	pending_n = config_keep_restart_only(&nc, &d->cfg, pending, sizeof(pending));
	if (pending_n)
		log_warn("reload: %s changed in %s but take%s effect on restart only; keeping the "
			 "running value%s until then",
			 pending, d->config_path, pending_n == 1 ? "s" : "",
			 pending_n == 1 ? "" : "s");
	if (strstr(pending, "state_file"))
		log_warn("reload: state_file changed: move %s to %s before restarting "
			 "(maglevd does not start without it while VIPs are live)",
			 d->cfg.state_file, new_state);
	/* A start with nc would refuse the state file of these VIPs. */
	if (state_check_config(d->reg, &nc, e2, sizeof(e2))) {
		snprintf(e, sizeof(e),
			 "the running VIPs do not fit the new configuration (the next start "
			 "would refuse the state file): %s",
			 e2);
		goto fail;
	}
	/* A web config that does not load refuses the reload whole, before anything changed. */
	if (nc.metrics_web_config[0]) {
		struct web_config wc;

		if (web_config_load(nc.metrics_web_config, &wc, e2, sizeof(e2))) {
			snprintf(e, sizeof(e), "metrics_web_config: %s", e2);
			goto fail;
		}
		web_config_free(&wc);
	}
	if (daemon_dp_config(d, &nc, &mc, e, sizeof(e)))
		goto fail;
	/* The datapath config first: what the datapath refuses is refused
	 * before anything else has changed, and a failed attach puts it back.
	 */
	r = maglev_dp_get_config(d->dp, &old_mc);
	if (!r)
		r = maglev_dp_set_config(d->dp, &mc);
	if (r) {
		snprintf(e, sizeof(e), "the datapath refused the new configuration: %s",
			 strerror(-r));
		goto fail;
	}
	if (attach_all(d, &nc, &d->cfg, e, sizeof(e))) {
		maglev_dp_set_config(d->dp, &old_mc);
		goto fail;
	}
	for (i = 0; i < d->cfg.n_ifaces; i++) {
		if (!config_has_iface(&nc, d->cfg.ifaces[i])) {
			int ifindex = (int)if_nametoindex(d->cfg.ifaces[i]);

			if (ifindex && !maglev_dp_detach(d->dp, ifindex))
				log_info("detached from %s", d->cfg.ifaces[i]);
		}
	}
	/* A web config is read again at every reload: renewed certificates, changed users. */
	if (strcmp(nc.metrics_listen, d->cfg.metrics_listen) ||
	    strcmp(nc.metrics_web_config, d->cfg.metrics_web_config) || nc.metrics_web_config[0]) {
		metrics_stop(d);
		if (metrics_start(d, nc.metrics_listen, nc.metrics_web_config, e, sizeof(e))) {
			log_err("reload: %s; metrics stay on %s as they were", e,
				d->cfg.metrics_listen);
			metrics_start(d, d->cfg.metrics_listen, d->cfg.metrics_web_config, e,
				      sizeof(e));
			strcpy(nc.metrics_listen, d->cfg.metrics_listen);
			strcpy(nc.metrics_web_config, d->cfg.metrics_web_config);
		}
	}
	slowpath_config(&mc);
	reseed = memcmp(&nc.seed, &d->cfg.seed, sizeof(nc.seed));
	resrc = nc.src4_set != d->cfg.src4_set || nc.src4_prefix != d->cfg.src4_prefix ||
		nc.src4_plen != d->cfg.src4_plen || nc.src6_set != d->cfg.src6_set ||
		memcmp(nc.src6_prefix, d->cfg.src6_prefix, sizeof(nc.src6_prefix)) ||
		nc.src6_plen != d->cfg.src6_plen;
	regroup = nc.has_group != d->cfg.has_group || nc.control_gid != d->cfg.control_gid;
	refail = nc.hc.on_fail != d->cfg.hc.on_fail;
	d->cfg = nc;
	if (hot_flows_apply(d, e2, sizeof(e2)))
		log_err("reload: %s", e2);
	netinfo_if_sync(d);
	log_set_level(verbose ? LOG_DEBUG : nc.log_level);
	if (regroup)
		ctl_server_apply_group(d);
	if (reseed && rebuild_all_tables(d, e2, sizeof(e2)))
		/* Applied part-way: the new seed hashes flows already. */
		return reload_part_way(
			d, "the new seed is in use but rebuilding the tables failed",
			"some VIPs may still have tables of the old seed; reload again", e2, err,
			errlen);
	if (reseed)
		log_info("reload: new seed, every table rebuilt");
	else if (refail && rebuild_all_tables(d, e2, sizeof(e2)))
		/* The failed backends' flags follow health_on_fail. */
		return reload_part_way(d,
				       "health_on_fail is in use but rewriting the backends failed",
				       "reload again", e2, err, errlen);
	status_reload_done(d, NULL);
	snprintf(d->restart_pending, sizeof(d->restart_pending), "%s", pending);
	/* Strict decap on the backends drops sources it was not told of: every
	 * check then fails and every VIP is blackholed, with nothing else to say why.
	 */
	d->reload_warning[0] = '\0';
	if (resrc) {
		snprintf(d->reload_warning, sizeof(d->reload_warning),
			 "the outer source prefix changed (src4_prefix, src6_prefix): backends "
			 "whose decap is strict must allow it (maglev-decap set DEV --allow-src "
			 "PREFIX) or they drop every packet and every check fails");
		log_warn("reload: %s", d->reload_warning);
	}
	log_info("configuration reloaded from %s%s%s", d->config_path,
		 pending[0] ? "; waiting for a restart: " : "", pending);
	sd_notify(0, "READY=1");
	return 0;
fail:
	snprintf(err, errlen, "reload refused, the running configuration stays: %s", e);
	status_reload_done(d, err);
	log_err("reload failed, keeping the running configuration: %s", e);
	sd_notify(0, "READY=1");
	return -1;
}

static void on_signal(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct signalfd_siginfo si;

	while (read(src->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			char err[512];

			log_info("SIGHUP: reloading %s", d->config_path);
			daemon_reload(d, err, sizeof(err)); /* logs the result */
		} else if (si.ssi_signo == SIGUSR2) {
			log_info("SIGUSR2: exiting for a restart; the XDP program stays attached");
			announce_keep();
			d->stop = true;
		} else {
			log_info("signal %u: exiting; the XDP program stays attached",
				 si.ssi_signo);
			d->stop = true;
		}
	}
}

static void on_tick(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t expirations, now = mono_ms();

	if (read(src->fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_debug("timer read: %s", strerror(errno));
	watchdog_tick(now);
	stream_sweep(d);
	health_tick(d);
	settle_tick(d);
	announce_tick(d);
	slowpath_tick(d);
	fleet_tick(d);
	second_chance_tick(d);
	readback_tick(d);
	bounded_tick(d);
	hot_flows_tick(d);
	if (metrics_sample(d)) {
		/* Interface MACs and their gateways, followed. */
		netinfo_if_sync(d);
	}
}

/*
 * maglevd -t: the checks a start makes before it touches the datapath, so
 * that what -t passes a start (or a reload of the running daemon, whose
 * state file this is) does not refuse: the file, its interfaces, and the
 * VIPs of the state file against its limits. Warnings (the default seed)
 * are printed; they do not fail the check. 0 or 1.
 */
static int test_config(struct daemon *d)
{
	struct registry_ctx ctx = {.dp = NULL, .cfg = &d->cfg};
	struct registry *reg = NULL;
	int i, bad = 0, warn = 0;
	char err[512];
	bool missing;

	for (i = 0; i < d->cfg.n_ifaces; i++)
		if (!if_nametoindex(d->cfg.ifaces[i])) {
			fprintf(stderr,
				"maglevd: error: %s: interface %s does not exist here: %s\n",
				d->config_path, d->cfg.ifaces[i], strerror(errno));
			bad++;
		}
	if (state_load(d->cfg.state_file, &ctx, &reg, &missing, err, sizeof(err))) {
		fprintf(stderr, "maglevd: error: %s: the state file does not fit it: %s\n",
			d->config_path, err);
		bad++;
	}
	if (reg)
		registry_free(reg);
	if (d->cfg.metrics_web_config[0]) {
		struct web_config wc;

		if (web_config_load(d->cfg.metrics_web_config, &wc, err, sizeof(err))) {
			fprintf(stderr, "maglevd: error: %s: metrics_web_config: %s\n",
				d->config_path, err);
			bad++;
		} else {
			web_config_free(&wc);
		}
	}
	if (d->cfg.seed_default) {
		fprintf(stderr,
			"maglevd: warning: %s: no seed: the documented default seed would be used; "
			"set a secret one (see docs/operations.md)\n",
			d->config_path);
		warn++;
	}
	if (bad)
		return 1;
	printf("maglevd: %s: configuration OK%s\n", d->config_path,
	       warn ? " (with the warning above)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"test", no_argument, NULL, 't'},
					     {"verbose", no_argument, NULL, 'v'},
					     {"version", no_argument, NULL, 'V'},
					     {"help", no_argument, NULL, 'h'},
					     {"withdraw", no_argument, NULL, 'W'},
					     {NULL, 0, NULL, 0}};
	struct ev_source sig_src = {.fd = -1, .cb = on_signal};
	struct ev_source tick_src = {.fd = -1, .cb = on_tick};
	struct itimerspec its = {.it_interval = {0, TICK_MS * 1000000L},
				 .it_value = {0, TICK_MS * 1000000L}};
	struct maglev_dp_opts dpo = {0};
	struct maglev_config mc;
	struct daemon d = {0};
	bool test_only = false, withdraw = false, missing;
	uint32_t live;
	char err[512];
	sigset_t sigs;
	int c, i;

	d.config_path = MAGLEVD_DEFAULT_CONFIG;
	while ((c = getopt_long(argc, argv, "c:tvVhW", opts, NULL)) != -1) {
		switch (c) {
		case 'W':
			withdraw = true;
			break;
		case 'c':
			d.config_path = optarg;
			break;
		case 't':
			test_only = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'V':
			printf("maglevd %s\n", MAGLEV_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init();
	log_libbpf();
	if (config_load(d.config_path, &d.cfg, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	if (test_only)
		return test_config(&d);
	if (withdraw) {
		if (!announce_withdraw_all(&d.cfg, err, sizeof(err)))
			return 0;
		log_err("--withdraw: %s", err);
		return 1;
	}
	log_set_level(verbose ? LOG_DEBUG : d.cfg.log_level);
	fd_limit_raise(&d.cfg);
	if (d.cfg.seed_default)
		log_warn("no seed in %s: using the documented default seed; set a secret one "
			 "(see docs/operations.md)",
			 d.config_path);
	d.start_ms = mono_ms();
	srand((unsigned int)(d.start_ms ^ (uint64_t)getpid()));
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR2);
	sigprocmask(SIG_BLOCK, &sigs, NULL);

	dpo.pin_dir = d.cfg.pin_dir;
	dpo.conn_table_size = d.cfg.conn_table_size;
	dpo.tcp_closed_ns = d.cfg.tcp_closed_ms * 1000000ULL;
	dpo.hot_flows = d.cfg.hot_flows;
	if (maglev_dp_open(&d.dp, &dpo, err, sizeof(err))) {
		log_err("loading the datapath: %s", err);
		return 1;
	}
	{
		char fresh[1024];

		if (maglev_dp_layout_pending(d.dp, fresh, sizeof(fresh)))
			log_info("upgrade: pinned maps of another layout, renewed: %s; the "
				 "attached program forwards from the old ones until this one "
				 "has its state and takes over",
				 fresh);
	}
	if (maglev_dp_mounted_bpffs(d.dp))
		log_info("no bpffs was mounted at " MAGLEV_BPFFS_ROOT
			 ": mounted one for pin dir %s",
			 d.cfg.pin_dir);
	d.ctx.dp = d.dp;
	d.ctx.cfg = &d.cfg;
	if (state_load(d.cfg.state_file, &d.ctx, &d.reg, &missing, err, sizeof(err))) {
		log_err("state file: %s (fix the file, or the configuration it does not fit)", err);
		goto fail_dp;
	}
	/* Starting empty would purge live VIPs: a lost or moved file is no
	 * reason to stop forwarding for every service.
	 */
	if (missing && (live = dp_vip_count(&d))) {
		log_err("state file %s does not exist, but the datapath in %s holds %u VIPs: "
			"refusing to start, which would delete them. Either put the state file "
			"back (after a state_file change: move the old file there), or, to "
			"delete those VIPs, start from an empty state: "
			"echo '{\"version\":1,\"vips\":[]}' > %s",
			d.cfg.state_file, d.cfg.pin_dir, live, d.cfg.state_file);
		goto fail_reg;
	}
	/* Only now the new config (seed, MTU, ...): a start refused above
	 * leaves the running datapath exactly as it was.
	 */
	if (daemon_dp_config(&d, &d.cfg, &mc, err, sizeof(err)) ||
	    (maglev_dp_set_config(d.dp, &mc) &&
	     snprintf(err, sizeof(err), "writing the datapath config") > 0)) {
		log_err("%s", err);
		goto fail_reg;
	}
	if (hot_flows_apply(&d, err, sizeof(err))) {
		log_err("%s", err);
		goto fail_reg;
	}
	adopt_health(&d);
	admission_restore(&d);
	second_chance_adopt(&d);
	{
		/* Write everything the state holds: identical tables for an
		 * unchanged seed, so established and new flows keep their backends.
		 */
		if (registry_commit(NULL, d.reg, &d.ctx, err, sizeof(err))) {
			log_err("restoring the datapath: %s", err);
			goto fail_reg;
		}
	}
	purge_stale(&d);
	log_info("state: %u VIPs, %u backends from %s", d.reg->nvips, d.reg->nbackends,
		 d.cfg.state_file);
	/* Each interface's own MACs before the first frame leaves by it. */
	netinfo_if_sync(&d);
	if (attach_all(&d, &d.cfg, NULL, err, sizeof(err))) {
		log_err("%s", err);
		goto fail_reg;
	}
	if (maglev_dp_layout_pending(d.dp, NULL, 0)) {
		/* The new program forwards now: its maps replace the old pins. */
		if (maglev_dp_layout_commit(d.dp, err, sizeof(err))) {
			log_err("upgrade: %s", err);
			goto fail_reg;
		}
		log_info("upgrade: renewed maps pinned, every pinned link on this program");
	}
	if (!d.cfg.n_ifaces)
		log_warn("no interface configured: the balancer is loaded but attached nowhere");

	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	sig_src.fd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	tick_src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d.epfd < 0 || sig_src.fd < 0 || tick_src.fd < 0 ||
	    timerfd_settime(tick_src.fd, 0, &its, NULL) || ev_add(&d, &sig_src, EPOLLIN) ||
	    ev_add(&d, &tick_src, EPOLLIN)) {
		log_err("event loop setup: %s", strerror(errno));
		goto fail_reg;
	}
	if (commit_queue_start(&d)) {
		log_err("event loop setup: table swaps: %s", strerror(errno));
		goto fail_reg;
	}
	if (nexthop_watch_start(&d, err, sizeof(err)))
		log_warn("%s: a new MAC of the gateway will not be followed", err);
	if (ctl_server_start(&d, err, sizeof(err))) {
		log_err("%s", err);
		goto fail_reg;
	}
	if (metrics_start(&d, d.cfg.metrics_listen, d.cfg.metrics_web_config, err, sizeof(err))) {
		log_err("%s", err);
		goto fail_ctl;
	}
	if (state_save(d.cfg.state_file, d.reg, err, sizeof(err)) ||
	    (state_writer_start(d.cfg.state_file) &&
	     snprintf(err, sizeof(err), "cannot start the state writer") > 0)) {
		log_err("state file: %s", err);
		goto fail_metrics;
	}
	if (announce_start(&d, err, sizeof(err))) {
		log_err("%s", err);
		goto fail_metrics;
	}
	if (fleet_start(&d, err, sizeof(err))) {
		log_err("%s", err);
		goto fail_metrics;
	}
	slowpath_tick(&d);
	if (flow_count_start(&d))
		log_warn("cannot start counting the connection table: no flows per backend");
	log_info("ready: control socket %s, metrics %s, pin dir %s", d.cfg.control_socket,
		 d.cfg.metrics_listen[0] ? d.cfg.metrics_listen : "off", d.cfg.pin_dir);
	sd_notify(0, "READY=1");
	watchdog_init();

	/* A stop first withdraws the announced VIPs and lets them converge. */
	while (!d.stop || announce_grace(&d)) {
		struct epoll_event evs[64];
		int n = epoll_wait(d.epfd, evs, 64, -1);

		if (n < 0 && errno != EINTR) {
			log_err("epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			struct ev_source *src = evs[i].data.ptr;

			src->cb(&d, src, evs[i].events);
		}
		/* Clients and checks dropped while handling this batch: nothing
		 * names them now.
		 */
		stream_reap();
		health_reap();
	}
	sd_notify(0, "STOPPING=1");
	commit_queue_drain(&d);
	fleet_stop(&d);
	stream_close_all(&d);
	metrics_stop(&d);
	metrics_scrape_join(&d);
	ctl_server_stop(&d);
	table_swap_quiesce();
	slowpath_close();
	flow_count_stop();
	if (state_writer_flush())
		log_err("the state file missed some changes (see above)");
	registry_free(d.reg);
	maglev_dp_close(d.dp);
	return 0;

fail_metrics:
	metrics_stop(&d);
fail_ctl:
	ctl_server_stop(&d);
fail_reg:
	registry_free(d.reg);
fail_dp:
	maglev_dp_close(d.dp);
	return 1;
}
