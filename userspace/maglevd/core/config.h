/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * maglevd's configuration file: one "key value" per line, '#' starts a
 * comment. docs/maglevd.conf.example documents every key.
 */
#ifndef MAGLEVD_CONFIG_H
#define MAGLEVD_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hc_fields.h"
#include "maglev_hash.h"

#define MAGLEVD_DEFAULT_CONFIG "/etc/maglev/maglevd.conf"
#define CFG_MAX_IFACES	       16
#define CFG_PATH_MAX	       256

struct maglevd_config {
	char ifaces[CFG_MAX_IFACES][IF_NAMESIZE];
	int n_ifaces;
	bool xdp_generic;
	struct maglev_seed seed;
	bool seed_default; /* no seed in the file: the documented default */
	bool nexthop_auto;
	uint8_t nexthop_mac[6];
	bool src4_set, src6_set;
	uint32_t src4_prefix, src4_plen; /* network order prefix */
	uint32_t src6_prefix[4], src6_plen;
	uint32_t mtu; /* 0: the first interface's MTU */
	uint32_t new_flow_limit;
	uint32_t slow_path_limit; /* slow-path packets per second per CPU; 0: unlimited */
	uint64_t udp_idle_ms;
	uint64_t tcp_closed_ms;	   /* bound at load: restart only */
	uint64_t second_chance_ms; /* previous owners kept this long after a change */
	uint64_t settle_ms;	   /* a down backend keeps its slots, marked, this long */
	uint64_t slow_start_ms;	   /* a joining backend reaches its weight over this */
	/* Flap damping (health/damping.h); damping_penalty 0: off. */
	uint32_t damping_penalty, damping_suppress, damping_reuse;
	uint64_t damping_half_life_ms;
	uint32_t conn_table_size;
	uint32_t max_vips;
	uint32_t max_backends_per_vip;
	struct hc_params hc;
	bool metrics_per_backend;	       /* the maglev_backend_* series */
	bool hc_via_encap;		       /* health checks through the encapsulation */
	char metrics_listen[64];	       /* "" when off */
	char metrics_web_config[CFG_PATH_MAX]; /* exporter-toolkit web config, "" for none */
	/* Hot flows (hot/hot_flows.c): on/off bound at start (the trackers'
	 * memory), the rest reloadable.
	 */
	bool hot_flows;
	uint32_t hot_flows_sample;	/* one forwarded packet in N per VIP and CPU */
	uint32_t hot_flows_threshold;	/* percent of a VIP's packets; 0: off */
	uint32_t hot_flows_metrics_top; /* top K in the metrics */
	char state_file[CFG_PATH_MAX];
	char control_socket[108];
	char control_group[64];
	bool has_group;
	gid_t control_gid;
	char pin_dir[CFG_PATH_MAX];
	int log_level;
	/* Announcing VIPs as kernel routes (announce.c); table 0: off. */
	uint32_t announce_table;
	uint32_t announce_protocol;
	uint32_t announce_min_backends;
	uint32_t announce_stop_grace_ms;
	/* Fleet mode (fleet.h): desired state in etcd; fleet_etcd "": off. */
	char fleet_etcd[512];	     /* comma-separated endpoint URLs */
	char fleet_prefix[128];	     /* key prefix, ends in '/' */
	char fleet_node[64];	     /* this balancer's name in the fleet */
	char fleet_ca[CFG_PATH_MAX]; /* TLS: CA bundle to verify etcd with */
	char fleet_cert[CFG_PATH_MAX], fleet_key[CFG_PATH_MAX]; /* TLS client certificate */
	/* health_scope fleet (fleet_health.h): the table follows a quorum of the
	 * live balancers' verdicts, not this balancer's own checks.
	 */
	bool health_fleet;
	/* Fleet input older than this: follow this balancer's own checks (0: never). */
	uint32_t health_fleet_max_age_ms;
};

void config_defaults(struct maglevd_config *cfg);
/* Parse text (len bytes, need not be NUL-terminated) over the defaults. */
int config_parse(const char *text, size_t len, struct maglevd_config *cfg, char *err,
		 size_t errlen);
int config_load(const char *path, struct maglevd_config *cfg, char *err, size_t errlen);
/* name is one of cfg's interfaces. */
bool config_has_iface(const struct maglevd_config *cfg, const char *name);

/* Check a health-check parameter set for consistency. */
int hc_params_check(const struct hc_params *p, char *err, size_t errlen);
/*
 * A reload: put back into nc the running value of every key bound at start
 * (restart only) that the file changed; their names, space-separated, in
 * changed. Returns how many.
 */
size_t config_keep_restart_only(struct maglevd_config *nc, const struct maglevd_config *run,
				char *changed, size_t len);

#endif /* MAGLEVD_CONFIG_H */
