// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The datapath's global configuration, filled from the config file and,
 * where it says "auto" or leaves a value out, from the kernel: the
 * interface's MAC, MTU and addresses, and the next hop's MAC from the
 * neighbour table entry of the default route's gateway (rtnetlink), which
 * maglevd resolves when missing and then follows while it runs.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <ifaddrs.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/daemon.h"
#include "core/log.h"
#include "core/rtnl.h"
#include "datapath/slowpath.h"

/* Neighbour states whose link-layer address can be used (NUD_VALID without NOARP). */
#define NH_USABLE (NUD_PERMANENT | NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE)
/* How long start and reload wait for a default route and its gateway's MAC. */
#define NH_WAIT_MS 10000
#define NH_POLL_MS 50
/* How often the followed gateway's neighbour entry is "used" (see nh_tick). */
#define NH_REFRESH_MS 1000

struct gw_info {
	int family;
	uint32_t gw[4];
	int oif;
	uint32_t prio;
	bool ecmp; /* taken from a multipath route: its first nexthop */
	bool found;
	int want_oif; /* route_cb: only a gateway on this interface (0: any) */
};

struct neigh_info {
	const struct gw_info *gw;
	uint8_t mac[6];
	uint16_t state;
	bool found;
};

static int route_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (mnl_attr_type_valid(a, RTA_MAX) < 0)
		return MNL_CB_OK;
	tb[type] = a;
	return MNL_CB_OK;
}

/*
 * A default route of the main table with a gateway; the lowest metric wins.
 * An ECMP default route (RTA_MULTIPATH) gives its first nexthop: the
 * datapath has a single next-hop MAC, so that router takes all the
 * encapsulated traffic (set nexthop_mac to pick another one).
 */
static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[RTA_MAX + 1] = {0};
	struct gw_info *gi = data, c = {.family = gi->family, .want_oif = gi->want_oif};
	size_t alen = gi->family == AF_INET ? 4 : 16;

	if (rm->rtm_dst_len != 0 || rm->rtm_family != gi->family || rm->rtm_type != RTN_UNICAST)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rm), route_attr, tb);
	if (tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) != RT_TABLE_MAIN
			  : rm->rtm_table != RT_TABLE_MAIN)
		return MNL_CB_OK;
	c.prio = tb[RTA_PRIORITY] ? mnl_attr_get_u32(tb[RTA_PRIORITY]) : 0;
	if (gi->found && c.prio >= gi->prio)
		return MNL_CB_OK;
	if (tb[RTA_GATEWAY] && tb[RTA_OIF] && mnl_attr_get_payload_len(tb[RTA_GATEWAY]) == alen) {
		memcpy(c.gw, mnl_attr_get_payload(tb[RTA_GATEWAY]), alen);
		c.oif = (int)mnl_attr_get_u32(tb[RTA_OIF]);
		c.found = !c.want_oif || c.oif == c.want_oif;
	} else if (tb[RTA_MULTIPATH]) {
		const struct rtnexthop *nh = mnl_attr_get_payload(tb[RTA_MULTIPATH]);
		int rem = (int)mnl_attr_get_payload_len(tb[RTA_MULTIPATH]);

		for (; RTNH_OK(nh, rem); rem -= RTNH_ALIGN(nh->rtnh_len), nh = RTNH_NEXT(nh)) {
			const struct nlattr *ntb[RTA_MAX + 1] = {0};

			mnl_attr_parse_payload(RTNH_DATA(nh), nh->rtnh_len - sizeof(*nh),
					       route_attr, ntb);
			if (!ntb[RTA_GATEWAY] ||
			    mnl_attr_get_payload_len(ntb[RTA_GATEWAY]) != alen ||
			    (c.want_oif && nh->rtnh_ifindex != c.want_oif))
				continue;
			memcpy(c.gw, mnl_attr_get_payload(ntb[RTA_GATEWAY]), alen);
			c.oif = nh->rtnh_ifindex;
			c.ecmp = c.found = true;
			break;
		}
	}
	if (c.found)
		*gi = c;
	return MNL_CB_OK;
}

static int neigh_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, NDA_MAX) < 0)
		return MNL_CB_OK;
	tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* Fills ni when nlh is the gateway's entry: its state, and its MAC if it has one. */
static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NDA_MAX + 1] = {0};
	struct neigh_info *ni = data;
	size_t alen = ni->gw->family == AF_INET ? 4 : 16;

	if (nd->ndm_family != ni->gw->family || nd->ndm_ifindex != ni->gw->oif)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*nd), neigh_attr, tb);
	if (!tb[NDA_DST] || mnl_attr_get_payload_len(tb[NDA_DST]) != alen ||
	    memcmp(mnl_attr_get_payload(tb[NDA_DST]), ni->gw->gw, alen))
		return MNL_CB_OK;
	ni->found = true;
	ni->state = nlh->nlmsg_type == RTM_DELNEIGH ? NUD_NONE : nd->ndm_state;
	if (tb[NDA_LLADDR] && mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6)
		memcpy(ni->mac, mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
	else
		ni->state &= (uint16_t)~NH_USABLE;
	return MNL_CB_OK;
}

/* One rtnetlink dump request of type with a family header, fed to cb. */
static int nl_dump(int type, int family, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = (uint16_t)type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	if (type == RTM_GETROUTE) {
		struct rtmsg *rm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rm));

		rm->rtm_family = (unsigned char)family;
	} else {
		struct ndmsg *nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));

		nd->ndm_family = (unsigned char)family;
	}
	return rtnl_talk(nlh, cb, data);
}

/*
 * Have the kernel resolve the gateway, or revalidate its entry, as if it
 * were sending to it (NTF_USE): a missing or failed entry is created and
 * solicited (ARP request / neighbour solicitation), a stale one is probed,
 * a reachable one is left alone. Nothing is sent but ARP/ND to the gateway.
 */
static int neigh_use(const struct gw_info *gi)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = (unsigned char)gi->family;
	nd->ndm_ifindex = gi->oif;
	nd->ndm_state = NUD_NONE;
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, gi->family == AF_INET ? 4 : 16, gi->gw);
	return rtnl_talk(nlh, NULL, NULL);
}

static bool gw_equal(const struct gw_info *a, const struct gw_info *b)
{
	return a->found == b->found && a->family == b->family && a->oif == b->oif &&
	       !memcmp(a->gw, b->gw, sizeof(a->gw));
}

static void gw_names(const struct gw_info *gi, char gws[INET6_ADDRSTRLEN], char ifn[IF_NAMESIZE])
{
	inet_ntop(gi->family, gi->gw, gws, INET6_ADDRSTRLEN);
	if (!if_indextoname((unsigned int)gi->oif, ifn))
		snprintf(ifn, IF_NAMESIZE, "ifindex %d", gi->oif);
}

/*
 * The default gateway, IPv4 first, on an interface maglevd attaches to:
 * the datapath sends out of the interface a packet came in on, so a
 * gateway behind another interface would get frames it never sees.
 * -ENOENT: no default route (yet); -EXDEV: one on another interface.
 */
static int gw_lookup(const struct maglevd_config *cfg, struct gw_info *out, char *err,
		     size_t errlen)
{
	static const int families[] = {AF_INET, AF_INET6};
	char gws[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE];
	int i, r = -ENOENT;

	snprintf(err, errlen, "nexthop_mac auto: no default route with a gateway; set nexthop_mac");
	for (i = 0; i < 2; i++) {
		struct gw_info gi = {.family = families[i]};

		if (nl_dump(RTM_GETROUTE, gi.family, route_cb, &gi) || !gi.found)
			continue;
		gw_names(&gi, gws, ifn);
		if (config_has_iface(cfg, ifn)) {
			*out = gi;
			return 0;
		}
		if (r != -EXDEV)
			snprintf(
				err, errlen,
				"nexthop_mac auto: the default route's gateway %s is on %s, not on "
				"an interface maglevd attaches to; add it to 'interface' or set "
				"nexthop_mac",
				gws, ifn);
		r = -EXDEV;
	}
	return r;
}

/* The gateway's MAC if its neighbour entry has a usable one. */
static int neigh_get(const struct gw_info *gi, uint8_t mac[6])
{
	struct neigh_info ni = {.gw = gi};
	int r = nl_dump(RTM_GETNEIGH, gi->family, neigh_cb, &ni);

	if (r)
		return r;
	if (!ni.found || !(ni.state & NH_USABLE))
		return -ENOENT;
	memcpy(mac, ni.mac, 6);
	return 0;
}

/* The gateway maglevd follows (nh_event, nh_tick). */
static struct {
	struct ev_source nl_src, tick_src;
	struct mnl_socket *nl;
	struct gw_info gw;
	bool gw_lost; /* said once that the gateway is gone */
} nh = {.nl_src = {.fd = -1}, .tick_src = {.fd = -1}};

/*
 * Find the default gateway and its MAC. A missing or incomplete
 * neighbour entry is not an error at first: at boot the gateway has often
 * not been talked to yet. The kernel is asked to resolve it and maglevd
 * waits, up to NH_WAIT_MS, for the answer (or for a default route).
 */
static int resolve_nexthop(const struct maglevd_config *cfg, uint8_t mac[6], char *err,
			   size_t errlen)
{
	uint64_t t0 = mono_ms(), last_use = 0;
	char gws[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE];
	struct gw_info gi;
	int r;

	for (;;) {
		r = gw_lookup(cfg, &gi, err, errlen);
		if (r == -EXDEV)
			return r;
		if (!r) {
			gw_names(&gi, gws, ifn);
			r = neigh_get(&gi, mac);
			if (!r)
				break;
			if (!last_use)
				log_info("next hop: resolving gateway %s on %s", gws, ifn);
			if (!last_use || mono_ms() - last_use >= NH_REFRESH_MS) {
				int u = neigh_use(&gi);

				if (u)
					log_warn("next hop: asking the kernel to resolve %s: %s",
						 gws, strerror(-u));
				last_use = mono_ms();
			}
			snprintf(err, errlen,
				 "nexthop_mac auto: gateway %s on %s did not answer ARP/ND within "
				 "%d s (no usable neighbour entry; is it up? or set nexthop_mac)",
				 gws, ifn, NH_WAIT_MS / 1000);
		}
		if (mono_ms() - t0 >= NH_WAIT_MS)
			return -ENOENT;
		usleep(NH_POLL_MS * 1000);
	}
	log_info("next hop: gateway %s on %s%s is %02x:%02x:%02x:%02x:%02x:%02x", gws, ifn,
		 gi.ecmp ? " (first nexthop of the ECMP default route)" : "", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
	nh.gw = gi;
	nh.gw_lost = false;
	return 0;
}

static bool nh_following(struct daemon *d)
{
	return d->cfg.nexthop_auto && d->cfg.n_ifaces && d->dp;
}

static bool same_ifaces(const struct maglevd_config *a, const struct maglevd_config *b)
{
	int i;

	if (a->n_ifaces != b->n_ifaces)
		return false;
	for (i = 0; i < a->n_ifaces; i++)
		if (strcmp(a->ifaces[i], b->ifaces[i]))
			return false;
	return true;
}

/*
 * A reload while maglevd already follows the gateway over the same
 * interfaces: the follower keeps the datapath's MAC current, and keeps the
 * last one while the gateway is gone, so the reload takes that MAC. Waiting
 * up to NH_WAIT_MS for a gateway that does not answer would stall the
 * control socket and the health checks and then refuse a reload that may
 * only change the log level.
 */
static bool nh_keep_on_reload(struct daemon *d, const struct maglevd_config *cfg, uint8_t mac[6])
{
	static const uint8_t none[6];
	struct maglev_config cur;

	if (!nh.nl || !nh_following(d) || !same_ifaces(cfg, &d->cfg) ||
	    maglev_dp_get_config(d->dp, &cur) || !memcmp(cur.nexthop_mac, none, 6))
		return false;
	memcpy(mac, cur.nexthop_mac, 6);
	return true;
}

/*
 * Any other reload to "auto" (a switch to auto, changed interfaces) looks
 * once and does not wait: the loop serves the control socket and the
 * health checks meanwhile. Without a usable entry yet the datapath keeps
 * its MAC, the kernel is asked to resolve the gateway, and the follower
 * (nh_event, nh_tick) writes the MAC when it answers. -EXDEV (a gateway on
 * another interface) still refuses the reload.
 */
static int nh_adopt_on_reload(struct daemon *d, const struct maglevd_config *cfg, uint8_t mac[6],
			      char *err, size_t errlen)
{
	char gws[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE];
	struct maglev_config cur;
	struct gw_info gi;
	int r = gw_lookup(cfg, &gi, err, errlen);

	if (r == -EXDEV)
		return r;
	if (!maglev_dp_get_config(d->dp, &cur))
		memcpy(mac, cur.nexthop_mac, 6);
	nh.gw_lost = false;
	if (r) {
		log_warn("next hop: %s; keeping the datapath's MAC until there is one", err);
		nh.gw.found = false;
		return 0;
	}
	nh.gw = gi;
	gw_names(&gi, gws, ifn);
	if (!neigh_get(&gi, mac)) {
		log_info("next hop: gateway %s on %s is %02x:%02x:%02x:%02x:%02x:%02x", gws, ifn,
			 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
		return 0;
	}
	log_warn("next hop: gateway %s on %s has no usable neighbour entry yet; resolving it, "
		 "the datapath keeps its MAC until it answers",
		 gws, ifn);
	neigh_use(&gi);
	return 0;
}

/* A new MAC for the followed gateway: into the datapath at once. */
static void nh_apply(struct daemon *d, const uint8_t mac[6])
{
	char gws[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE];
	struct maglev_config mc;
	int r = maglev_dp_get_config(d->dp, &mc);

	if (r) {
		log_err("next hop: reading the datapath config: %s", strerror(-r));
		return;
	}
	if (!memcmp(mc.nexthop_mac, mac, 6))
		return;
	memcpy(mc.nexthop_mac, mac, 6);
	gw_names(&nh.gw, gws, ifn);
	r = maglev_dp_set_config(d->dp, &mc);
	if (r) {
		log_err("next hop: writing the datapath config: %s", strerror(-r));
		return;
	}
	slowpath_config(&mc);
	log_info("next hop: gateway %s on %s is now %02x:%02x:%02x:%02x:%02x:%02x", gws, ifn,
		 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

/* Look at the default route and the gateway's entry again (route change, lost events). */
static void nh_resync(struct daemon *d)
{
	char err[300], gws[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE];
	struct gw_info gi;
	uint8_t mac[6];

	if (gw_lookup(&d->cfg, &gi, err, sizeof(err))) {
		if (!nh.gw_lost)
			log_warn("next hop: %s; the datapath keeps sending to the last MAC", err);
		nh.gw_lost = true;
		nh.gw.found = false;
		return;
	}
	if (!gw_equal(&gi, &nh.gw)) {
		gw_names(&gi, gws, ifn);
		log_info("next hop: the default route now goes through %s on %s", gws, ifn);
	}
	nh.gw = gi;
	nh.gw_lost = false;
	if (!neigh_get(&gi, mac))
		nh_apply(d, mac);
	else
		neigh_use(&gi);
}

static int nh_event(const struct nlmsghdr *nlh, void *data)
{
	struct daemon *d = data;

	if (nlh->nlmsg_type == RTM_NEWROUTE || nlh->nlmsg_type == RTM_DELROUTE) {
		const struct rtmsg *rm = mnl_nlmsg_get_payload(nlh);

		if (rm->rtm_dst_len == 0)
			nh_resync(d);
	} else if (nh.gw.found &&
		   (nlh->nlmsg_type == RTM_NEWNEIGH || nlh->nlmsg_type == RTM_DELNEIGH)) {
		struct neigh_info ni = {.gw = &nh.gw};

		neigh_cb(nlh, &ni);
		if (ni.found && (ni.state & NH_USABLE))
			nh_apply(d, ni.mac);
	}
	return MNL_CB_OK;
}

static void nh_on_netlink(struct daemon *d, struct ev_source *src, uint32_t events)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	bool lost = false;

	for (;;) {
		ssize_t n = recv(src->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno == ENOBUFS) {
			lost = true; /* the socket overflowed: events were dropped */
			continue;
		}
		if (n <= 0)
			break;
		if (nh_following(d))
			mnl_cb_run(buf, (size_t)n, 0, 0, nh_event, d);
	}
	if (lost && nh_following(d))
		nh_resync(d);
}

/*
 * The XDP datapath sends every encapsulated frame to the gateway without
 * the kernel seeing it, so for the kernel the entry is unused: it would go
 * stale, be garbage-collected, and a gateway that changed its MAC would
 * never be looked up again. Using the entry every second makes the kernel
 * confirm it as for its own traffic: a reachable entry is left alone, a
 * stale one is probed (unicast), a failed or missing one is solicited
 * afresh, and the answer comes back as an event (nh_event).
 */
static void nh_tick(struct daemon *d, struct ev_source *src, uint32_t events)
{
	uint64_t expirations;

	if (read(src->fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_debug("next hop timer: %s", strerror(errno));
	if (!nh_following(d))
		return;
	if (!nh.gw.found)
		nh_resync(d);
	else
		neigh_use(&nh.gw);
}

int nexthop_watch_start(struct daemon *d, char *err, size_t errlen)
{
	struct itimerspec its = {.it_interval = {NH_REFRESH_MS / 1000, 0},
				 .it_value = {NH_REFRESH_MS / 1000, 0}};
	int rcvbuf = 1 << 20;

	nh.nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!nh.nl || mnl_socket_bind(nh.nl, RTMGRP_NEIGH | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
				      MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "next hop: rtnetlink events: %s", strerror(errno));
		goto fail;
	}
	setsockopt(mnl_socket_get_fd(nh.nl), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	nh.nl_src.fd = mnl_socket_get_fd(nh.nl);
	nh.nl_src.cb = nh_on_netlink;
	nh.tick_src.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	nh.tick_src.cb = nh_tick;
	if (nh.tick_src.fd < 0 || timerfd_settime(nh.tick_src.fd, 0, &its, NULL) ||
	    ev_add(d, &nh.nl_src, EPOLLIN) || ev_add(d, &nh.tick_src, EPOLLIN)) {
		snprintf(err, errlen, "next hop: event setup: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	nexthop_watch_stop(d);
	return -EIO;
}

void nexthop_watch_stop(struct daemon *d)
{
	if (nh.nl_src.fd >= 0)
		ev_del(d, &nh.nl_src);
	if (nh.tick_src.fd >= 0) {
		ev_del(d, &nh.tick_src);
		close(nh.tick_src.fd);
	}
	if (nh.nl)
		mnl_socket_close(nh.nl);
	nh.nl = NULL;
	nh.nl_src.fd = nh.tick_src.fd = -1;
}

static int iface_info(const char *name, uint8_t mac[6], uint32_t *mtu);

/* The MAC of the default route's gateway on interface ifindex (IPv4
 * first); -ENOENT: no default route through it, or no usable neighbour
 * entry yet (then the kernel is asked to resolve it).
 */
static int iface_nexthop(int ifindex, uint8_t mac[6])
{
	static const int families[] = {AF_INET, AF_INET6};
	int i;

	for (i = 0; i < 2; i++) {
		struct gw_info gi = {.family = families[i], .want_oif = ifindex};

		if (nl_dump(RTM_GETROUTE, gi.family, route_cb, &gi) || !gi.found)
			continue;
		if (!neigh_get(&gi, mac))
			return 0;
		neigh_use(&gi);
	}
	return -ENOENT;
}

/*
 * The per-interface MACs (maglev_ifl2) of every attached interface: its own
 * MAC and its own next hop (nexthop_mac if set, else the gateway of the
 * default route through it, else the datapath's global next hop: one
 * interface, or a gateway not resolved yet). Entries of interfaces no longer
 * configured go. Only netlink dumps and an ioctl: nothing waits.
 */
void netinfo_if_sync(struct daemon *d)
{
	int fd = d->dp ? maglev_dp_map_fd(d->dp, "maglev_ifl2") : -1, keep[CFG_MAX_IFACES],
	    nkeep = 0;
	const struct maglevd_config *cfg = &d->cfg;
	struct maglev_config mc;
	uint32_t key, next, *prev = NULL;
	int i, r;

	if (fd < 0 || maglev_dp_get_config(d->dp, &mc))
		return;
	for (i = 0; i < cfg->n_ifaces; i++) {
		struct maglev_if_l2 want, cur;
		uint32_t ifindex = if_nametoindex(cfg->ifaces[i]), mtu;
		char ifn[IF_NAMESIZE];

		if (!ifindex || iface_info(cfg->ifaces[i], want.src_mac, &mtu))
			continue;
		keep[nkeep++] = (int)ifindex;
		if (!cfg->nexthop_auto)
			memcpy(want.nexthop_mac, cfg->nexthop_mac, 6);
		else if (iface_nexthop((int)ifindex, want.nexthop_mac))
			memcpy(want.nexthop_mac, mc.nexthop_mac, 6);
		if (!bpf_map_lookup_elem(fd, &ifindex, &cur) && !memcmp(&cur, &want, sizeof(want)))
			continue;
		r = maglev_dp_if_l2_set(d->dp, ifindex, &want);
		if (r) {
			log_err("interface %s: writing its MACs: %s", cfg->ifaces[i], strerror(-r));
			continue;
		}
		snprintf(ifn, sizeof(ifn), "%s", cfg->ifaces[i]);
		log_info("interface %s: frames leave from %02x:%02x:%02x:%02x:%02x:%02x to "
			 "%02x:%02x:%02x:%02x:%02x:%02x",
			 ifn, want.src_mac[0], want.src_mac[1], want.src_mac[2], want.src_mac[3],
			 want.src_mac[4], want.src_mac[5], want.nexthop_mac[0], want.nexthop_mac[1],
			 want.nexthop_mac[2], want.nexthop_mac[3], want.nexthop_mac[4],
			 want.nexthop_mac[5]);
	}
	/* Interfaces no longer attached: their entries go. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool kept = false;

		for (i = 0; i < nkeep; i++)
			kept |= keep[i] == (int)next;
		if (!kept && !maglev_dp_if_l2_delete(d->dp, next))
			continue; /* deleted: the walk goes on from prev */
		key = next;
		prev = &key;
	}
}

static int iface_info(const char *name, uint8_t mac[6], uint32_t *mtu)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		r = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!r && ioctl(fd, SIOCGIFMTU, &ifr))
		r = -errno;
	else if (!r)
		*mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return r;
}

/* The interface's first IPv4 and first global IPv6 address, as /32 and /128. */
static void iface_addrs(const char *name, struct maglev_config *mc, bool want4, bool want6)
{
	struct ifaddrs *ifa, *p;

	if (getifaddrs(&ifa))
		return;
	for (p = ifa; p; p = p->ifa_next) {
		if (!p->ifa_addr || strcmp(p->ifa_name, name))
			continue;
		if (want4 && p->ifa_addr->sa_family == AF_INET) {
			mc->src4_prefix = ((struct sockaddr_in *)p->ifa_addr)->sin_addr.s_addr;
			mc->src4_plen = 32;
			want4 = false;
		} else if (want6 && p->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *a = &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(a))
				continue;
			memcpy(mc->src6_prefix, a, 16);
			mc->src6_plen = 128;
			want6 = false;
		}
	}
	freeifaddrs(ifa);
}

int daemon_dp_config(struct daemon *d, const struct maglevd_config *cfg, struct maglev_config *mc,
		     char *err, size_t errlen)
{
	uint32_t mtu = 1500;

	memset(mc, 0, sizeof(*mc));
	mc->seed_k0 = cfg->seed.k0;
	mc->seed_k1 = cfg->seed.k1;
	if (cfg->n_ifaces) {
		int r = iface_info(cfg->ifaces[0], mc->src_mac, &mtu);

		if (r) {
			snprintf(err, errlen, "interface %s: %s", cfg->ifaces[0], strerror(-r));
			return r;
		}
	}
	mc->mtu = cfg->mtu ? cfg->mtu : mtu;
	if (mc->mtu < MAGLEV_MTU_MIN_IPV6) {
		const struct vip *v = registry_first_ipv6_vip(d->reg);

		if (v) {
			char name[64];

			ctl_format_vip(&v->key, name, sizeof(name));
			snprintf(err, errlen,
				 "%s%s %u is below %u, the least an IPv6 VIP (%s) works with: its "
				 "clients cannot take a packet-too-big under 1280 and the outer "
				 "headers take up to 52 bytes",
				 cfg->mtu ? "mtu" : "the MTU of ", cfg->mtu ? "" : cfg->ifaces[0],
				 mc->mtu, MAGLEV_MTU_MIN_IPV6, name);
			return -EINVAL;
		}
	}
	if (cfg->src4_set) {
		mc->src4_prefix = cfg->src4_prefix;
		mc->src4_plen = cfg->src4_plen;
	}
	if (cfg->src6_set) {
		memcpy(mc->src6_prefix, cfg->src6_prefix, sizeof(mc->src6_prefix));
		mc->src6_plen = cfg->src6_plen;
	}
	if (cfg->n_ifaces && (!cfg->src4_set || !cfg->src6_set))
		iface_addrs(cfg->ifaces[0], mc, !cfg->src4_set, !cfg->src6_set);
	mc->new_flow_limit = cfg->new_flow_limit;
	mc->slow_path_limit = cfg->slow_path_limit;
	mc->udp_idle_ns = cfg->udp_idle_ms * 1000000ULL;
	if (!cfg->nexthop_auto) {
		memcpy(mc->nexthop_mac, cfg->nexthop_mac, 6);
	} else if (cfg->n_ifaces && !nh_keep_on_reload(d, cfg, mc->nexthop_mac)) {
		/* The follower runs once the daemon does: a reload never waits. */
		int r = nh.nl ? nh_adopt_on_reload(d, cfg, mc->nexthop_mac, err, errlen)
			      : resolve_nexthop(cfg, mc->nexthop_mac, err, errlen);

		if (r)
			return r;
	}
	return 0;
}
