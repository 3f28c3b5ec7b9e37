// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Announcing VIPs: maglevd decides per VIP whether this balancer should
 * attract its traffic and says so as a kernel route for the VIP's address
 * (a /32 or /128 blackhole, which only signals: nothing routes through the
 * table) in announce_table with protocol announce_protocol. A routing daemon
 * that imports that table (BIRD's kernel protocol with "learn", FRR's
 * "ip import-table") announces what is there; maglevd speaks no BGP itself.
 *
 * A VIP is ready when the program is attached on every configured
 * interface, its table is live, at least announce_min_backends backends are
 * up and neither draining nor at weight 0 (with health_scope fleet: by the
 * fleet's verdict and by this balancer's own checks), every backend has had its first
 * health check, and the balancer is not in maintenance (maglevctl announce
 * off, kept across restarts in STATE_FILE.announce-off). An address is
 * announced while any VIP on it is ready.
 *
 * "Live" and "usable" are judged by the registry the datapath holds
 * (daemon_applied), not by the newest one, which may wait in the commit
 * queue: in fleet mode a revision may rebuild any VIP, and a queued one
 * must not withdraw VIPs whose tables still forward. Usable backends must
 * be so in both: the datapath forwards to them, and no newer verdict says
 * they died.
 *
 * The routes outlive maglevd: a crash leaves them (the pinned program still
 * forwards), and a restart reads them back and leaves them alone until its
 * own first health checks have spoken, so it causes no withdraw-announce
 * flap. A graceful stop withdraws them, then waits announce_stop_grace_ms
 * for the network to converge before exiting; an exit for a restart
 * (SIGUSR2, systemd's RestartKillSignal) leaves them, as a crash does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/daemon.h"
#include "core/durable.h"
#include "core/log.h"
#include "core/rtnl.h"
#include "fleet/fleet_health.h"
#include "metrics/labels.h"

/* How often the table is read back: routes someone else removed come back. */
#define RESYNC_MS  5000
#define MAX_ROUTES 1024

enum why {
	WHY_READY,
	WHY_MAINTENANCE,
	WHY_STOPPING,
	WHY_NOT_ATTACHED,
	WHY_TABLE,
	WHY_BACKENDS,
	WHY_CHECKS, /* first health checks pending: the route is held as it is */
};

static const char *const why_code[] = {
	[WHY_READY] = "ready",		 [WHY_MAINTENANCE] = "maintenance",
	[WHY_STOPPING] = "stopping",	 [WHY_NOT_ATTACHED] = "not_attached",
	[WHY_TABLE] = "table_not_live",	 [WHY_BACKENDS] = "too_few_backends",
	[WHY_CHECKS] = "checks_pending",
};

struct route {
	uint8_t family; /* MAGLEV_AF_INET or MAGLEV_AF_INET6 */
	uint32_t addr[4];
};

struct vip_ann {
	struct maglev_vip_key key; /* the VIP this entry is about (ids are reused) */
	bool valid;
	bool checked; /* has had a full round of health checks */
	enum why why;
	char detail[96];
};

static struct {
	bool on;
	uint32_t table, proto; /* as at start: a reload does not move the routes */
	bool maintenance, stopping;
	bool keep; /* exiting for a restart: the routes stay */
	uint64_t stop_deadline_ms, next_resync_ms, retry_ms;
	struct route routes[MAX_ROUTES]; /* in the kernel table, as last seen or made */
	uint32_t nroutes;
	struct vip_ann vips[MAGLEV_MAX_VIPS];
	char not_attached[IF_NAMESIZE]; /* "" when attached everywhere */
	uint64_t adds, dels, errors;
	char marker[CFG_PATH_MAX + 16];
} an;

static int alen(uint8_t family)
{
	return family == MAGLEV_AF_INET ? 4 : 16;
}

static bool route_eq(const struct route *a, const struct route *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, (size_t)alen(a->family));
}

static int route_find(const struct route *r)
{
	uint32_t i;

	for (i = 0; i < an.nroutes; i++)
		if (route_eq(&an.routes[i], r))
			return (int)i;
	return -1;
}

static void route_name(const struct route *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(r->family == MAGLEV_AF_INET ? AF_INET : AF_INET6, r->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%d", a, alen(r->family) * 8);
}

static int route_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, RTA_MAX) >= 0)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

struct route_dump {
	struct route r[MAX_ROUTES];
	uint32_t n;
};

/* One route of the dump: ours when it is a host blackhole in our table and protocol. */
static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[RTA_MAX + 1] = {0};
	struct route_dump *out = data;
	struct route r = {0};
	uint32_t table;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rm), route_attr, tb);
	table = tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) : rm->rtm_table;
	if (table != an.table || rm->rtm_protocol != an.proto || rm->rtm_type != RTN_BLACKHOLE ||
	    (rm->rtm_family != AF_INET && rm->rtm_family != AF_INET6) || !tb[RTA_DST])
		return MNL_CB_OK;
	r.family = rm->rtm_family == AF_INET ? MAGLEV_AF_INET : MAGLEV_AF_INET6;
	if (rm->rtm_dst_len != alen(r.family) * 8 ||
	    mnl_attr_get_payload_len(tb[RTA_DST]) != (uint16_t)alen(r.family))
		return MNL_CB_OK;
	memcpy(r.addr, mnl_attr_get_payload(tb[RTA_DST]), (size_t)alen(r.family));
	if (out->n < MAX_ROUTES)
		out->r[out->n++] = r;
	return MNL_CB_OK;
}

/* Read our routes back from the kernel into an.routes. */
static int routes_read(void)
{
	static struct route_dump got;
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtmsg *rm;
	int fam, r;

	got.n = 0;
	for (fam = 0; fam < 2; fam++) {
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETROUTE;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		rm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rm));
		rm->rtm_family = fam ? AF_INET6 : AF_INET;
		r = rtnl_talk(nlh, dump_cb, &got);
		/* A namespace without IPv6 has no IPv6 routes to read. */
		if (r && !(fam && r == -EAFNOSUPPORT))
			return r;
	}
	memcpy(an.routes, got.r, got.n * sizeof(got.r[0]));
	an.nroutes = got.n;
	return 0;
}

static int route_write(const struct route *r, bool add)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rm;

	nlh->nlmsg_type = add ? RTM_NEWROUTE : RTM_DELROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
	rm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rm));
	rm->rtm_family = r->family == MAGLEV_AF_INET ? AF_INET : AF_INET6;
	rm->rtm_dst_len = (unsigned char)(alen(r->family) * 8);
	rm->rtm_table = an.table < 256 ? (unsigned char)an.table : RT_TABLE_UNSPEC;
	rm->rtm_protocol = (unsigned char)an.proto;
	rm->rtm_scope = RT_SCOPE_UNIVERSE;
	rm->rtm_type = RTN_BLACKHOLE;
	mnl_attr_put(nlh, RTA_DST, (size_t)alen(r->family), r->addr);
	mnl_attr_put_u32(nlh, RTA_TABLE, an.table);
	return rtnl_talk(nlh, NULL, NULL);
}

static bool route_add(const struct route *r)
{
	char name[64];
	int e;

	route_name(r, name, sizeof(name));
	if (an.nroutes == MAX_ROUTES) {
		an.errors++;
		log_err("announce: not announcing %s: table %u already holds %u routes of ours",
			name, an.table, MAX_ROUTES);
		return false;
	}
	e = route_write(r, true);
	if (e && e != -EEXIST) {
		an.errors++;
		log_err("announce: adding the route for %s to table %u: %s", name, an.table,
			strerror(-e));
		return false;
	}
	an.routes[an.nroutes++] = *r;
	an.adds++;
	log_info("announce: %s announced (route in table %u, protocol %u)", name, an.table,
		 an.proto);
	return true;
}

static bool route_del(uint32_t i, const char *why)
{
	char name[64];
	int e;

	route_name(&an.routes[i], name, sizeof(name));
	e = route_write(&an.routes[i], false);
	if (e && e != -ESRCH) {
		an.errors++;
		log_err("announce: removing the route for %s from table %u: %s", name, an.table,
			strerror(-e));
		return false;
	}
	an.routes[i] = an.routes[--an.nroutes];
	an.dels++;
	log_info("announce: %s withdrawn (%s)", name, why);
	return true;
}

/* The first configured interface the balancer's program is not attached to. */
static void check_attached(struct daemon *d)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = maglev_dp_prog_fd(d->dp), i;

	an.not_attached[0] = '\0';
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	for (i = 0; i < d->cfg.n_ifaces; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		int ifindex = (int)if_nametoindex(d->cfg.ifaces[i]);

		if (!info.id || !ifindex || bpf_xdp_query(ifindex, 0, &q) ||
		    (q.prog_id != info.id && q.drv_prog_id != info.id &&
		     q.skb_prog_id != info.id)) {
			snprintf(an.not_attached, sizeof(an.not_attached), "%s", d->cfg.ifaces[i]);
			return;
		}
	}
	if (!d->cfg.n_ifaces)
		snprintf(an.not_attached, sizeof(an.not_attached), "(no interface)");
}

/* Has every backend of v with a check had one since this VIP entry began? */
static bool first_checks_done(struct daemon *d, const struct vip *v)
{
	struct hc_params p;
	uint32_t j;

	vip_hc(v, &d->cfg.hc, &p);
	if (p.type == HC_NONE)
		return true;
	/* No backend, no check spoken: else the latch would close on an empty VIP. */
	if (!v->nbe)
		return false;
	for (j = 0; j < v->nbe; j++)
		if (!health_checks_total(v->bes[j].idx, true) &&
		    !health_checks_total(v->bes[j].idx, false))
			return false;
	return true;
}

static uint32_t usable_backends(const struct vip *v)
{
	uint32_t j, n = 0;

	for (j = 0; j < v->nbe; j++)
		n += v->bes[j].up && !v->bes[j].drain && v->bes[j].weight;
	return n;
}

/*
 * With health_scope fleet the table follows the fleet's quorum, but a
 * balancer that cannot reach the backends itself (its own path to them is
 * broken) should not attract their traffic: usable by its own checks too.
 */
static uint32_t own_usable_backends(const struct daemon *d, const struct vip *v)
{
	uint32_t j, n = 0;

	for (j = 0; j < v->nbe; j++)
		n += health_local_up(d, &v->bes[j]) && !v->bes[j].drain && v->bes[j].weight;
	return n;
}

/* v: the newest registry's; live: the same VIP in the datapath's, or NULL. */
static void decide(struct daemon *d, const struct vip *v, const struct vip *live, struct vip_ann *a)
{
	uint32_t usable = usable_backends(v), own = usable;

	if (!a->valid || memcmp(&a->key, &v->key, sizeof(v->key))) {
		memset(a, 0, sizeof(*a));
		a->key = v->key;
		a->valid = true;
	}
	a->detail[0] = '\0';
	if (live && usable_backends(live) < usable)
		usable = usable_backends(live);
	if (fleet_health_on(d))
		own = own_usable_backends(d, v);
	/* Checked once is enough: a backend added later does not withdraw the VIP. */
	if (!a->checked && first_checks_done(d, v))
		a->checked = true;
	if (an.stopping) {
		a->why = WHY_STOPPING;
	} else if (an.maintenance) {
		a->why = WHY_MAINTENANCE;
	} else if (an.not_attached[0]) {
		a->why = WHY_NOT_ATTACHED;
		snprintf(a->detail, sizeof(a->detail), "program not attached on %s",
			 an.not_attached);
	} else if (!live || !live->table_gen) {
		a->why = WHY_TABLE;
	} else if (!a->checked && v->nbe) {
		/* Before their first checks new backends are down (start_down):
		 * the checks, not the backends, are what the VIP waits for.
		 */
		a->why = WHY_CHECKS;
	} else if (usable < d->cfg.announce_min_backends) {
		a->why = WHY_BACKENDS;
		snprintf(a->detail, sizeof(a->detail), "%u of %u backends usable, %u wanted",
			 usable, v->nbe, d->cfg.announce_min_backends);
	} else if (own < d->cfg.announce_min_backends) {
		a->why = WHY_BACKENDS;
		snprintf(a->detail, sizeof(a->detail),
			 "%u of %u backends usable by this balancer's own checks, %u wanted", own,
			 v->nbe, d->cfg.announce_min_backends);
	} else if (!a->checked) {
		a->why = WHY_CHECKS;
	} else {
		a->why = WHY_READY;
	}
	if (!a->detail[0])
		snprintf(a->detail, sizeof(a->detail), "%s", why_code[a->why]);
}

/*
 * What the VIPs on r's address want: 1 announce, 0 withdraw (*why says
 * why), -1 hold as is.
 */
static int want(struct daemon *d, const struct route *r, const char **why)
{
	int w = 0;
	uint32_t i;

	*why = "no VIP";
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		struct route vr = {0};

		if (!v || !an.vips[i].valid)
			continue;
		vr.family = v->key.family;
		memcpy(vr.addr, v->key.addr, sizeof(vr.addr));
		if (!route_eq(&vr, r))
			continue;
		*why = an.vips[i].detail;
		if (an.vips[i].why == WHY_READY)
			return 1;
		if (an.vips[i].why == WHY_CHECKS)
			w = -1;
	}
	return w;
}

static void reconcile(struct daemon *d)
{
	uint64_t now = mono_ms();
	uint32_t i;

	if (now >= an.next_resync_ms) {
		int e = routes_read();

		an.next_resync_ms = now + RESYNC_MS;
		if (e) {
			an.errors++;
			log_err("announce: reading table %u: %s", an.table, strerror(-e));
			return;
		}
		an.retry_ms = 0;
	}
	/* After a refused write, wait for the next read-back: no log every tick. */
	if (now < an.retry_ms)
		return;
	for (i = 0; i < an.nroutes;) {
		const char *why;
		int w = want(d, &an.routes[i], &why);

		if (!w && route_del(i, why))
			continue; /* the last one moved into i */
		if (!w)
			an.retry_ms = an.next_resync_ms; /* logged */
		i++;
	}
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		struct route r = {0};

		if (!v || an.vips[i].why != WHY_READY)
			continue;
		r.family = v->key.family;
		memcpy(r.addr, v->key.addr, sizeof(r.addr));
		if (route_find(&r) < 0 && !route_add(&r))
			an.retry_ms = an.next_resync_ms; /* logged */
	}
}

void announce_tick(struct daemon *d)
{
	const struct registry *applied;
	uint32_t i;

	if (!an.on)
		return;
	check_attached(d);
	applied = daemon_applied(d);
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i], *live = applied->vips[i];

		if (live && v && memcmp(&live->key, &v->key, sizeof(v->key)))
			live = NULL; /* the id was given to another VIP */
		if (v)
			decide(d, v, live, &an.vips[i]);
		else
			an.vips[i].valid = false;
	}
	reconcile(d);
	if (an.stopping && mono_ms() >= an.stop_deadline_ms)
		d->stop = true;
}

int announce_start(struct daemon *d, char *err, size_t errlen)
{
	int e;

	an.on = d->cfg.announce_table != 0;
	if (!an.on)
		return 0;
	an.table = d->cfg.announce_table;
	an.proto = d->cfg.announce_protocol;
	snprintf(an.marker, sizeof(an.marker), "%s.announce-off", d->cfg.state_file);
	an.maintenance = !access(an.marker, F_OK);
	e = routes_read();
	if (e) {
		snprintf(err, errlen, "announce: reading routing table %u: %s", an.table,
			 strerror(-e));
		return e;
	}
	an.next_resync_ms = mono_ms() + RESYNC_MS;
	log_info("announce: routes in table %u protocol %u (%u already there, kept until "
		 "the first health checks)%s",
		 an.table, an.proto, an.nroutes,
		 an.maintenance ? "; in maintenance (announce off)" : "");
	return 0;
}

/* Whether a maglevd answers on path (a connect is enough). */
static bool socket_alive(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool alive;

	if (fd < 0)
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	alive = !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return alive;
}

int announce_withdraw_all(const struct maglevd_config *cfg, char *err, size_t errlen)
{
	uint32_t had;
	int e;

	if (!cfg->announce_table) {
		printf("maglevd: announce_table is off: nothing to withdraw\n");
		return 0;
	}
	/* A live maglevd owns the table (and would announce again). */
	if (socket_alive(cfg->control_socket)) {
		snprintf(err, errlen,
			 "a maglevd answers on %s: not withdrawing the routes it manages (stop it "
			 "first, or use maglevctl announce off)",
			 cfg->control_socket);
		return -EBUSY;
	}
	an.table = cfg->announce_table;
	an.proto = cfg->announce_protocol;
	e = routes_read();
	if (e) {
		snprintf(err, errlen, "reading routing table %u: %s", an.table, strerror(-e));
		return e;
	}
	had = an.nroutes;
	while (an.nroutes)
		if (!route_del(an.nroutes - 1, "maglevd is not running")) {
			snprintf(err, errlen, "could not remove every route from table %u",
				 an.table);
			return -EIO;
		}
	printf("maglevd: withdrew %u route%s from table %u protocol %u\n", had, had == 1 ? "" : "s",
	       an.table, an.proto);
	return 0;
}

void announce_keep(void)
{
	if (an.on && !an.stopping)
		log_info("announce: exiting for a restart: %u route%s left in table %u for the "
			 "next maglevd, as across a crash",
			 an.nroutes, an.nroutes == 1 ? "" : "s", an.table);
	an.keep = true;
}

bool announce_grace(struct daemon *d)
{
	uint32_t had = an.nroutes;

	if (!an.on || an.stopping || an.keep)
		return false; /* a second stop signal exits at once */
	an.stopping = true;
	announce_tick(d);
	if (!had || !d->cfg.announce_stop_grace_ms)
		return false;
	an.stop_deadline_ms = mono_ms() + d->cfg.announce_stop_grace_ms;
	d->stop = false;
	log_info("announce: %u route%s withdrawn; exiting in %u ms, once the network has "
		 "converged",
		 had, had == 1 ? "" : "s", d->cfg.announce_stop_grace_ms);
	return true;
}

int announce_set(struct daemon *d, bool on, char *err, size_t errlen)
{
	int r;

	if (!an.on) {
		snprintf(err, errlen, "announcing is off: set announce_table in the config file");
		return -EINVAL;
	}
	if (!on) {
		int fd = open(an.marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		/* Without the marker a restart would announce again: refuse. */
		if (fd < 0) {
			snprintf(err, errlen, "cannot record maintenance in %s: %s", an.marker,
				 strerror(errno));
			return -errno;
		}
		close(fd);
	} else if (unlink(an.marker) && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove %s: %s", an.marker, strerror(errno));
		return -errno;
	}
	/* A restart after a power loss must find the marker as it was left. */
	r = durable_dir_of(an.marker);
	if (r) {
		snprintf(err, errlen, "cannot make %s durable: %s", an.marker, strerror(-r));
		return r;
	}
	if (an.maintenance != !on)
		log_info("announce: %s", on ? "on: announcing ready VIPs again"
					    : "off (maintenance): withdrawing every VIP");
	an.maintenance = !on;
	announce_tick(d);
	return 0;
}

static bool vip_announced(const struct vip *v)
{
	struct route r = {0};

	r.family = v->key.family;
	memcpy(r.addr, v->key.addr, sizeof(r.addr));
	return route_find(&r) >= 0;
}

json_object *announce_json(struct daemon *d)
{
	json_object *o = json_object_new_object(), *arr, *routes;
	char name[CTL_ADDR_STRLEN + 8];
	uint32_t i;

	json_object_object_add(o, "enabled", json_object_new_boolean(an.on));
	if (!an.on)
		return o;
	json_object_object_add(o, "table", json_object_new_int64(an.table));
	json_object_object_add(o, "protocol", json_object_new_int64(an.proto));
	json_object_object_add(o, "min_backends",
			       json_object_new_int64(d->cfg.announce_min_backends));
	json_object_object_add(o, "maintenance", json_object_new_boolean(an.maintenance));
	json_object_object_add(o, "stopping", json_object_new_boolean(an.stopping));
	routes = json_object_new_array();
	for (i = 0; i < an.nroutes; i++) {
		route_name(&an.routes[i], name, sizeof(name));
		json_object_array_add(routes, json_object_new_string(name));
	}
	json_object_object_add(o, "routes", routes);
	arr = json_object_new_array();
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		json_object *vo;

		if (!v || !an.vips[i].valid)
			continue;
		vo = json_object_new_object();
		ctl_format_vip(&v->key, name, sizeof(name));
		json_object_object_add(vo, "vip", json_object_new_string(name));
		json_object_object_add(vo, "announced", json_object_new_boolean(vip_announced(v)));
		json_object_object_add(vo, "reason",
				       json_object_new_string(why_code[an.vips[i].why]));
		json_object_object_add(vo, "detail", json_object_new_string(an.vips[i].detail));
		json_object_array_add(arr, vo);
	}
	json_object_object_add(o, "vips", arr);
	return o;
}

void announce_metrics(struct daemon *d, FILE *f)
{
	char name[METRICS_VIP_LABELS_LEN];
	uint32_t i, w;

	if (!an.on)
		return;
	fprintf(f, "# HELP maglev_vip_announced 1 if the VIP's address is announced (its route is "
		   "in the announce table).\n"
		   "# TYPE maglev_vip_announced gauge\n");
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v || !an.vips[i].valid)
			continue;
		metrics_vip_labels(&v->key, name, sizeof(name));
		fprintf(f, "maglev_vip_announced{%s} %d\n", name, vip_announced(v));
	}
	/* Every reason 0 or 1, so that a series does not vanish when the reason changes. */
	fprintf(f, "# HELP maglev_vip_announce_reason 1 for why the VIP is announced or "
		   "withdrawn, 0 for the other reasons.\n"
		   "# TYPE maglev_vip_announce_reason gauge\n");
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v || !an.vips[i].valid)
			continue;
		metrics_vip_labels(&v->key, name, sizeof(name));
		for (w = 0; w < sizeof(why_code) / sizeof(why_code[0]); w++)
			fprintf(f, "maglev_vip_announce_reason{%s,reason=\"%s\"} %d\n", name,
				why_code[w], (uint32_t)an.vips[i].why == w);
	}
	fprintf(f,
		"# HELP maglev_announce_maintenance 1 while announcing is off (maglevctl announce "
		"off).\n# TYPE maglev_announce_maintenance gauge\nmaglev_announce_maintenance %d\n"
		"# HELP maglev_announce_routes Routes in the announce table.\n"
		"# TYPE maglev_announce_routes gauge\nmaglev_announce_routes %u\n"
		"# HELP maglev_announce_route_changes_total Routes added and removed.\n"
		"# TYPE maglev_announce_route_changes_total counter\n"
		"maglev_announce_route_changes_total{op=\"add\"} %llu\n"
		"maglev_announce_route_changes_total{op=\"del\"} %llu\n"
		"# HELP maglev_announce_errors_total Route writes or reads the kernel refused.\n"
		"# TYPE maglev_announce_errors_total counter\nmaglev_announce_errors_total %llu\n",
		an.maintenance, an.nroutes, (unsigned long long)an.adds,
		(unsigned long long)an.dels, (unsigned long long)an.errors);
}
