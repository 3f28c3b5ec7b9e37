// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP datapath library, its handle: loads the balancer skeleton, pins or
 * adopts its maps, writes its config, closes. See datapath.h for the API and
 * docs/datapath.md for the map semantics.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpffs.h"
#include "datapath.h"
#include "dp_layout.h"
#include "maglev_hash.h"
#include "maglev_conn.h"
#include "maglev_second.h"
#include "dp_priv.h"

int dp_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", dir);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Buckets for a connection table of at least n flows: a power of two. */
static uint32_t conn_buckets(uint32_t n)
{
	uint32_t b = 1;

	while ((uint64_t)b * MAGLEV_CONN_WAYS < n && b < (1u << 30) / MAGLEV_CONN_WAYS)
		b <<= 1;
	return b;
}

/* The connection table keeps the size it was created with when adopted. */
static uint32_t pinned_max_entries(const char *path)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	uint32_t n = 0;
	int fd;

	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		n = info.max_entries;
	close(fd);
	return n;
}

static void write_default_config(struct maglev_dp *dp)
{
	struct maglev_config cfg;

	/* A freshly created config map is all zero: give it the documented
	 * default seed so the datapath and the table builder agree.
	 */
	if (maglev_dp_get_config(dp, &cfg) || cfg.seed_k0 || cfg.seed_k1)
		return;
	cfg.seed_k0 = MAGLEV_DEFAULT_SEED_K0;
	cfg.seed_k1 = MAGLEV_DEFAULT_SEED_K1;
	maglev_dp_set_config(dp, &cfg);
}

/* The connection table's hash seed (random, kept while the table is
 * pinned) and bucket mask (from the table's actual size).
 */
static int write_conn_params(struct maglev_dp *dp)
{
	int fd = map_fd(dp->skel->maps.maglev_connkey);
	struct maglev_conn_params p = {};
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &p))
		return -errno;
	while (!p.seed)
		if (getrandom(&p.seed, sizeof(p.seed), 0) != sizeof(p.seed))
			return -errno;
	p.mask = bpf_map__max_entries(dp->skel->maps.maglev_conns) - 1;
	return ret_errno(bpf_map_update_elem(fd, &zero, &p, 0));
}

/* Whether the pinned map name is one this object renews (dp_layout.c). */
static bool layout_fresh(const struct maglev_dp *dp, const char *name)
{
	int i;

	for (i = 0; i < dp->layout.n; i++)
		if (!strcmp(dp->layout.maps[i].name, name))
			return dp->layout.maps[i].fresh;
	return false;
}

int maglev_dp_layout_pending(const struct maglev_dp *dp, char *buf, size_t len)
{
	return maglev_layout_describe(&dp->layout, buf, len);
}

int maglev_dp_layout_commit(struct maglev_dp *dp, char *err, size_t errlen)
{
	if (!dp->pin)
		return 0;
	return maglev_layout_commit(dp->skel->obj, dp->pin_dir,
				    bpf_program__fd(dp->skel->progs.maglev_xdp), &dp->layout, err,
				    errlen);
}

int maglev_dp_open(struct maglev_dp **dpp, const struct maglev_dp_opts *opts, char *err,
		   size_t errlen)
{
	const char *dir = opts && opts->pin_dir ? opts->pin_dir : MAGLEV_PIN_DIR;
	uint32_t conn_size =
		opts && opts->conn_table_size ? opts->conn_table_size : MAGLEV_CONN_TABLE_SIZE;
	struct bpf_map *map;
	struct maglev_dp *dp;
	char path[PATH_MAX];
	int i, ret;

	*dpp = NULL;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return dp_fail(err, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++)
		dp->link_fd[i] = -1;
	dp->pin = dir[0] != '\0';
	snprintf(dp->pin_dir, sizeof(dp->pin_dir), "%s", dir);
	dp->ncpus = libbpf_num_possible_cpus();
	if (dp->ncpus <= 0) {
		ret = dp_fail(err, errlen, -EINVAL, "cannot count possible CPUs");
		goto out;
	}

	dp->skel = maglev_xdp__open();
	if (!dp->skel) {
		ret = dp_fail(err, errlen, -errno ? -errno : -EINVAL, "open BPF object: %s",
			      strerror(errno));
		goto out;
	}
	if (opts && opts->tcp_closed_ns)
		dp->skel->rodata->maglev_tcp_closed_ns = opts->tcp_closed_ns;
	dp->skel->rodata->maglev_hot_on = opts && opts->hot_flows;
	/* Before the layout plan: the entry count is part of the layout. */
	ret = bpf_map__set_max_entries(dp->skel->maps.maglev_hot,
				       opts && opts->hot_flows ? MAGLEV_MAX_VIPS : 1);
	if (ret) {
		dp_fail(err, errlen, ret, "hot-flow trackers: %s", strerror(-ret));
		goto out;
	}
	if (dp->pin) {
		ret = maglev_bpffs_ensure(dp->pin_dir, &dp->mounted_bpffs, err, errlen);
		if (ret)
			goto out;
		ret = mkdir_p(dp->pin_dir);
		if (ret) {
			dp_fail(err, errlen, ret, "create pin directory %s: %s", dp->pin_dir,
				strerror(-ret));
			goto out;
		}
		ret = maglev_layout_plan(dp->skel->obj, dp->pin_dir,
					 bpf_map__name(dp->skel->maps.maglev_conns), &dp->layout,
					 err, errlen);
		if (ret)
			goto out;
		snprintf(path, sizeof(path), "%s/%s", dp->pin_dir,
			 bpf_map__name(dp->skel->maps.maglev_conns));
		if (!layout_fresh(dp, bpf_map__name(dp->skel->maps.maglev_conns)) &&
		    pinned_max_entries(path))
			conn_size = pinned_max_entries(path) * MAGLEV_CONN_WAYS;
		bpf_object__for_each_map(map, dp->skel->obj)
		{
			if (bpf_map__is_internal(map) || layout_fresh(dp, bpf_map__name(map)))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dp->pin_dir, bpf_map__name(map));
			ret = bpf_map__set_pin_path(map, path);
			if (ret) {
				dp_fail(err, errlen, ret, "pin path %s: %s", path, strerror(-ret));
				goto out;
			}
		}
	}
	ret = bpf_map__set_max_entries(dp->skel->maps.maglev_conns, conn_buckets(conn_size));
	if (ret) {
		dp_fail(err, errlen, ret, "connection table size %u: %s", conn_size,
			strerror(-ret));
		goto out;
	}
	ret = maglev_xdp__load(dp->skel);
	if (ret) {
		dp_fail(err, errlen, ret,
			"load BPF program: %s (pinned maps in %s from an incompatible version?)",
			strerror(-ret), dp->pin ? dp->pin_dir : "(none)");
		goto out;
	}
	write_default_config(dp);
	ret = dp_vip_index_rebuild(dp);
	if (ret) {
		dp_fail(err, errlen, ret, "recount the VIP address maps: %s", strerror(-ret));
		goto out;
	}
	ret = write_conn_params(dp);
	if (ret) {
		dp_fail(err, errlen, ret, "connection table parameters: %s", strerror(-ret));
		goto out;
	}
	*dpp = dp;
	return 0;
out:
	maglev_dp_close(dp);
	return ret;
}

bool maglev_dp_mounted_bpffs(const struct maglev_dp *dp)
{
	return dp->mounted_bpffs;
}

void maglev_dp_close(struct maglev_dp *dp)
{
	int i;

	if (!dp)
		return;
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++)
		if (dp->link_fd[i] >= 0)
			close(dp->link_fd[i]);
	maglev_xdp__destroy(dp->skel);
	free(dp);
}

int maglev_dp_set_config(struct maglev_dp *dp, const struct maglev_config *cfg)
{
	struct maglev_config c = *cfg;
	__u32 zero = 0;

	if (cfg->src4_plen > 32 || cfg->src6_plen > 128)
		return -EINVAL;
	/* The in-place ICMP replies need room; no real path is that small. */
	if (cfg->mtu && (cfg->mtu < 576 || cfg->mtu > 65535))
		return -EINVAL;
	/* Against this config's pair, not the caller's word (dp_if_l2.c). */
	c.if_l2_differs = dp_if_l2_differs(dp, &c);
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_cfg), &zero, &c, 0));
}

int maglev_dp_get_config(struct maglev_dp *dp, struct maglev_config *cfg)
{
	__u32 zero = 0;

	return ret_errno(bpf_map_lookup_elem(map_fd(dp->skel->maps.maglev_cfg), &zero, cfg));
}

uint64_t maglev_dp_tcp_closed_ns(const struct maglev_dp *dp)
{
	return dp->skel->rodata->maglev_tcp_closed_ns;
}

int maglev_dp_prog_fd(struct maglev_dp *dp)
{
	return bpf_program__fd(dp->skel->progs.maglev_xdp);
}

int maglev_dp_map_fd(struct maglev_dp *dp, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(dp->skel->obj, name);

	return map ? bpf_map__fd(map) : -ENOENT;
}
