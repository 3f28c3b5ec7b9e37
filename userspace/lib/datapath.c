// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP datapath library: loads the balancer skeleton, pins or adopts its
 * maps, attaches it with bpf_links, and reads and writes the maps. See
 * datapath.h for the API and docs/datapath.md for the map semantics.
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
#include "maglev_xdp.skel.h"

#define MAGLEV_DP_MAX_LINKS 64

struct maglev_dp {
	struct maglev_xdp *skel;
	char pin_dir[PATH_MAX - 64];
	bool pin;
	bool mounted_bpffs; /* this open mounted the bpffs at MAGLEV_BPFFS_ROOT */
	int ncpus;
	/* Unpinned links (pin_dir ""): closing the fd detaches. */
	int link_fd[MAGLEV_DP_MAX_LINKS];
	int link_ifindex[MAGLEV_DP_MAX_LINKS];
	/* Pinned maps this object could not adopt (an upgrade that changed
	 * their layout): unpinned until maglev_dp_layout_commit.
	 */
	struct maglev_layout_plan layout;
};

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
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

static int map_fd(const struct bpf_map *map);
static int ret_errno(int r);

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

static int vip_index_rebuild(struct maglev_dp *dp);

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
		return fail(err, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++)
		dp->link_fd[i] = -1;
	dp->pin = dir[0] != '\0';
	snprintf(dp->pin_dir, sizeof(dp->pin_dir), "%s", dir);
	dp->ncpus = libbpf_num_possible_cpus();
	if (dp->ncpus <= 0) {
		ret = fail(err, errlen, -EINVAL, "cannot count possible CPUs");
		goto out;
	}

	dp->skel = maglev_xdp__open();
	if (!dp->skel) {
		ret = fail(err, errlen, -errno ? -errno : -EINVAL, "open BPF object: %s",
			   strerror(errno));
		goto out;
	}
	if (opts && opts->tcp_closed_ns)
		dp->skel->rodata->maglev_tcp_closed_ns = opts->tcp_closed_ns;
	if (dp->pin) {
		ret = maglev_bpffs_ensure(dp->pin_dir, &dp->mounted_bpffs, err, errlen);
		if (ret)
			goto out;
		ret = mkdir_p(dp->pin_dir);
		if (ret) {
			fail(err, errlen, ret, "create pin directory %s: %s", dp->pin_dir,
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
				fail(err, errlen, ret, "pin path %s: %s", path, strerror(-ret));
				goto out;
			}
		}
	}
	ret = bpf_map__set_max_entries(dp->skel->maps.maglev_conns, conn_buckets(conn_size));
	if (ret) {
		fail(err, errlen, ret, "connection table size %u: %s", conn_size, strerror(-ret));
		goto out;
	}
	ret = maglev_xdp__load(dp->skel);
	if (ret) {
		fail(err, errlen, ret,
		     "load BPF program: %s (pinned maps in %s from an incompatible version?)",
		     strerror(-ret), dp->pin ? dp->pin_dir : "(none)");
		goto out;
	}
	write_default_config(dp);
	ret = vip_index_rebuild(dp);
	if (ret) {
		fail(err, errlen, ret, "recount the VIP address maps: %s", strerror(-ret));
		goto out;
	}
	ret = write_conn_params(dp);
	if (ret) {
		fail(err, errlen, ret, "connection table parameters: %s", strerror(-ret));
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

static void link_path(struct maglev_dp *dp, int ifindex, char *path, size_t len)
{
	snprintf(path, len, "%s/link_xdp_%d", dp->pin_dir, ifindex);
}

int maglev_dp_attach(struct maglev_dp *dp, int ifindex, bool generic, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	int prog_fd = bpf_program__fd(dp->skel->progs.maglev_xdp);
	char path[PATH_MAX];
	int fd, ret, i;

	if (ifindex <= 0)
		return fail(err, errlen, -EINVAL, "bad interface index %d", ifindex);
	if (dp->pin) {
		link_path(dp, ifindex, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			/* Same link, new program: no forwarding gap. */
			ret = bpf_link_update(fd, prog_fd, NULL);
			close(fd);
			if (!ret)
				return 0;
			ret = -errno;
			if (ret != -ENOLINK)
				return fail(err, errlen, ret, "update pinned link %s: %s", path,
					    strerror(-ret));
			/* The interface went away with its link: start over. */
			unlink(path);
		}
	}
	lopts.flags = generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lopts);
	if (fd < 0) {
		ret = -errno;
		return fail(err, errlen, ret, "attach XDP (%s mode) to ifindex %d: %s%s",
			    generic ? "generic" : "native", ifindex, strerror(-ret),
			    ret == -EBUSY ? " (another XDP program is attached)"
			    : !generic	  ? " (try generic mode)"
					  : "");
	}
	if (dp->pin) {
		ret = bpf_obj_pin(fd, path) ? -errno : 0;
		close(fd);
		if (ret)
			return fail(err, errlen, ret, "pin link %s: %s", path, strerror(-ret));
		return 0;
	}
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++) {
		if (dp->link_fd[i] < 0) {
			dp->link_fd[i] = fd;
			dp->link_ifindex[i] = ifindex;
			return 0;
		}
	}
	close(fd);
	return fail(err, errlen, -ENOSPC, "more than %d unpinned links", MAGLEV_DP_MAX_LINKS);
}

int maglev_dp_detach(struct maglev_dp *dp, int ifindex)
{
	char path[PATH_MAX];
	int fd, i, ret;

	if (dp->pin) {
		link_path(dp, ifindex, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return -errno;
		ret = bpf_link_detach(fd) ? -errno : 0;
		close(fd);
		unlink(path);
		return ret == -ENOLINK ? 0 : ret;
	}
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++) {
		if (dp->link_fd[i] >= 0 && dp->link_ifindex[i] == ifindex) {
			close(dp->link_fd[i]);
			dp->link_fd[i] = -1;
			return 0;
		}
	}
	return -ENOENT;
}

static int map_fd(const struct bpf_map *map)
{
	return bpf_map__fd(map);
}

static int ret_errno(int r)
{
	return r ? -errno : 0;
}

int maglev_dp_set_config(struct maglev_dp *dp, const struct maglev_config *cfg)
{
	__u32 zero = 0;

	if (cfg->src4_plen > 32 || cfg->src6_plen > 128)
		return -EINVAL;
	/* The in-place ICMP replies need room; no real path is that small. */
	if (cfg->mtu && (cfg->mtu < 576 || cfg->mtu > 65535))
		return -EINVAL;
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_cfg), &zero, cfg, 0));
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

static int vip_key_valid(const struct maglev_vip_key *key)
{
	if (key->proto != IPPROTO_TCP && key->proto != IPPROTO_UDP)
		return 0;
	if (key->family == MAGLEV_AF_INET)
		return !key->addr[1] && !key->addr[2] && !key->addr[3];
	return key->family == MAGLEV_AF_INET6;
}

/* Keep the address filter's counts in step with the VIP map. */
static int vaddr_adjust(struct maglev_dp *dp, const struct maglev_vip_key *key, int delta)
{
	int fd = map_fd(dp->skel->maps.maglev_vaddrs);
	__u32 slot = maglev_vip_filter_slot(key->addr, key->family);
	struct maglev_vip_addr va = {};

	if (bpf_map_lookup_elem(fd, &slot, &va))
		return -errno;
	if (key->proto == IPPROTO_TCP) {
		if (key->port)
			va.tcp_ports += delta;
		else
			va.tcp_any += delta;
	} else {
		if (key->port)
			va.udp_ports += delta;
		else
			va.udp_any += delta;
	}
	return ret_errno(bpf_map_update_elem(fd, &slot, &va, 0));
}

/* The address-only key of the exact address map (bpf/xdp_maps.h). */
static struct maglev_vip_key vip_addr_key(const struct maglev_vip_key *key)
{
	struct maglev_vip_key a = {.family = key->family};

	memcpy(a.addr, key->addr, sizeof(a.addr));
	return a;
}

/* Keep the exact address map's count of VIP keys per address in step. */
static int vipaddr_adjust(struct maglev_dp *dp, const struct maglev_vip_key *key, int delta)
{
	int fd = map_fd(dp->skel->maps.maglev_vipaddrs);
	struct maglev_vip_key a = vip_addr_key(key);
	__u32 n = 0;

	if (bpf_map_lookup_elem(fd, &a, &n) && errno != ENOENT)
		return -errno;
	n += delta;
	if (!n)
		return ret_errno(bpf_map_delete_elem(fd, &a));
	return ret_errno(bpf_map_update_elem(fd, &a, &n, 0));
}

/* Count key into its filter slot's entry f. */
static void vaddr_count(struct maglev_vip_addr *f, const struct maglev_vip_key *key)
{
	if (key->proto == IPPROTO_TCP) {
		if (key->port)
			f->tcp_ports++;
		else
			f->tcp_any++;
	} else if (key->port) {
		f->udp_ports++;
	} else {
		f->udp_any++;
	}
}

static int vip_gen_bump(struct maglev_dp *dp);

/*
 * Recount the address filter and the exact address map from the VIP map, on
 * open. Each VIP change writes these maps one after the other, so a process
 * killed in between leaves a count off (a VIP whose packets are never looked
 * up, or a count that wraps when it is deleted); maps pinned by a version
 * without the exact address map adopt a fresh, empty one. Then bump the VIP
 * generation: a change cut short may also have missed its bump.
 */
static int vip_index_rebuild(struct maglev_dp *dp)
{
	int vfd = map_fd(dp->skel->maps.maglev_vips), ffd = map_fd(dp->skel->maps.maglev_vaddrs),
	    afd = map_fd(dp->skel->maps.maglev_vipaddrs);
	struct maglev_vip_addr *want, *cur;
	struct maglev_vip_key k, next, a;
	__u32 i, n, *keys, count, out;
	void *prev = NULL;
	int ret = 0;

	want = calloc(MAGLEV_VIP_FILTER_SIZE, sizeof(*want));
	cur = calloc(MAGLEV_VIP_FILTER_SIZE, sizeof(*cur));
	keys = calloc(MAGLEV_VIP_FILTER_SIZE, sizeof(*keys));
	if (!want || !cur || !keys) {
		ret = -ENOMEM;
		goto out;
	}
	while (!bpf_map_get_next_key(afd, NULL, &next))
		if (bpf_map_delete_elem(afd, &next)) {
			ret = -errno;
			goto out;
		}
	while (!bpf_map_get_next_key(vfd, prev, &next)) {
		k = next;
		prev = &k;
		vaddr_count(&want[maglev_vip_filter_slot(k.addr, k.family)], &k);
		a = vip_addr_key(&k);
		n = bpf_map_lookup_elem(afd, &a, &n) ? 1 : n + 1;
		if (bpf_map_update_elem(afd, &a, &n, 0)) {
			ret = -errno;
			goto out;
		}
	}
	/* The whole filter in one batch read; only slots that differ are written. */
	count = MAGLEV_VIP_FILTER_SIZE;
	if (bpf_map_lookup_batch(ffd, NULL, &out, keys, cur, &count, NULL) && errno != ENOENT) {
		ret = -errno;
		goto out;
	}
	for (i = 0; i < count; i++) {
		if (keys[i] >= MAGLEV_VIP_FILTER_SIZE ||
		    !memcmp(&cur[i], &want[keys[i]], sizeof(cur[i])))
			continue;
		if (bpf_map_update_elem(ffd, &keys[i], &want[keys[i]], 0)) {
			ret = -errno;
			goto out;
		}
	}
	ret = vip_gen_bump(dp);
out:
	free(keys);
	free(cur);
	free(want);
	return ret;
}

/* After every VIP map change: cached VIPs in connection entries are
 * revalidated by their next packet.
 */
static int vip_gen_bump(struct maglev_dp *dp)
{
	int fd = map_fd(dp->skel->maps.maglev_vipgen);
	__u32 zero = 0, gen;

	if (bpf_map_lookup_elem(fd, &zero, &gen))
		return -errno;
	gen++;
	return ret_errno(bpf_map_update_elem(fd, &zero, &gen, 0));
}

/* Clear key's VIP cache slot if it holds key. */
static int vip_cache_drop(struct maglev_dp *dp, const struct maglev_vip_key *key)
{
	int fd = map_fd(dp->skel->maps.maglev_vipcache);
	__u32 i = maglev_vip_cache_index(key);
	struct maglev_vip_cache_slot c;

	if (bpf_map_lookup_elem(fd, &i, &c))
		return -errno;
	if (!maglev_vip_key_eq(&c.key, key))
		return 0;
	memset(&c, 0, sizeof(c));
	return ret_errno(bpf_map_update_elem(fd, &i, &c, 0));
}

/* Cache key -> info (after the hash map has it); a slot held by another
 * key is taken over, that key falls back to the hash map.
 */
static int vip_cache_put(struct maglev_dp *dp, const struct maglev_vip_key *key,
			 const struct maglev_vip_info *info)
{
	struct maglev_vip_cache_slot c;
	__u32 i = maglev_vip_cache_index(key);

	memset(&c, 0, sizeof(c));
	c.key = *key;
	c.info = *info;
	c.check = maglev_vip_cache_check(&c.key, &c.info);
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_vipcache), &i, &c, 0));
}

int maglev_dp_vip_set(struct maglev_dp *dp, const struct maglev_vip_key *key,
		      const struct maglev_vip_info *info)
{
	int fd = map_fd(dp->skel->maps.maglev_vips);
	struct maglev_vip_info old;
	bool existed;
	int ret;

	if (!vip_key_valid(key) || info->vip_id >= MAGLEV_MAX_VIPS ||
	    info->encap > MAGLEV_ENCAP_GUE)
		return -EINVAL;
	existed = !bpf_map_lookup_elem(fd, key, &old);
	/* The cache never names an outdated VIP: drop, change, re-add. */
	ret = vip_cache_drop(dp, key);
	if (ret)
		return ret;
	/* VIP entry first: the filter never points at a missing key. */
	ret = ret_errno(bpf_map_update_elem(fd, key, info, 0));
	if (!ret && !existed) {
		ret = vaddr_adjust(dp, key, 1);
		if (!ret) {
			ret = vipaddr_adjust(dp, key, 1);
			if (ret)
				vaddr_adjust(dp, key, -1);
		}
		if (ret)
			bpf_map_delete_elem(fd, key);
	}
	if (!ret)
		ret = vip_cache_put(dp, key, info);
	if (!ret)
		ret = vip_gen_bump(dp);
	return ret;
}

int maglev_dp_vip_del(struct maglev_dp *dp, const struct maglev_vip_key *key)
{
	int fd = map_fd(dp->skel->maps.maglev_vips);
	struct maglev_vip_info old;
	int ret;

	if (!vip_key_valid(key))
		return -EINVAL;
	if (bpf_map_lookup_elem(fd, key, &old))
		return -ENOENT;
	ret = vip_cache_drop(dp, key);
	if (!ret)
		ret = vaddr_adjust(dp, key, -1);
	if (!ret)
		ret = vipaddr_adjust(dp, key, -1);
	if (!ret)
		ret = ret_errno(bpf_map_delete_elem(fd, key));
	if (!ret)
		ret = vip_gen_bump(dp);
	return ret;
}

int maglev_dp_backend_set(struct maglev_dp *dp, uint32_t idx, const struct maglev_backend *b)
{
	if (!idx || idx >= MAGLEV_MAX_BACKENDS)
		return -EINVAL;
	if (b->family != MAGLEV_AF_INET && b->family != MAGLEV_AF_INET6)
		return -EINVAL;
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_backends), &idx, b, 0));
}

int maglev_dp_backend_get(struct maglev_dp *dp, uint32_t idx, struct maglev_backend *b)
{
	if (!idx || idx >= MAGLEV_MAX_BACKENDS)
		return -EINVAL;
	return ret_errno(bpf_map_lookup_elem(map_fd(dp->skel->maps.maglev_backends), &idx, b));
}

static size_t table_bytes(void)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return (sizeof(struct maglev_table) + page - 1) / page * page;
}

/*
 * A new inner map, filled through mmap with one memcpy, frozen (nothing can
 * change it afterwards), then put into the outer map with one update: the
 * program takes the inner map pointer once per packet, so a packet sees the
 * old table or the new one, never a mix.
 */
/* A new frozen inner map holding table and, if not NULL, the previous
 * owners prev (second chance; a fresh map is all zeros: none), or a
 * negative errno.
 */
static int table_map_new(const uint32_t *table, const uint32_t *prev)
{
	LIBBPF_OPTS(bpf_map_create_opts, copts, .map_flags = BPF_F_MMAPABLE);
	size_t len = table_bytes();
	struct maglev_table *mem;
	int fd, ret;
	uint32_t i;

	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		if (table[i] >= MAGLEV_MAX_BACKENDS || (prev && prev[i] >= MAGLEV_MAX_BACKENDS))
			return -EINVAL;
	/* One element holding the whole table (see bpf/xdp_maps.h). */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "maglev_table", sizeof(__u32),
			    sizeof(struct maglev_table), 1, &copts);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
		close(fd);
		return ret;
	}
	memcpy(mem->owner, table, sizeof(mem->owner));
	if (prev)
		memcpy(mem->prev, prev, sizeof(mem->prev));
	munmap(mem, len);
	if (bpf_map_freeze(fd)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * A new inner map, filled through mmap with one memcpy, frozen (nothing can
 * change it afterwards), then put into the outer map with one update: the
 * program takes the inner map pointer once per packet, so a packet sees the
 * old table or the new one, never a mix. The update returns after an RCU
 * grace period (the kernel waits for programs still using the old table).
 */
int maglev_dp_table_swap_prev(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
			      const uint32_t *prev)
{
	int fd, ret;

	if (vip_id >= MAGLEV_MAX_VIPS)
		return -EINVAL;
	fd = table_map_new(table, prev);
	if (fd < 0)
		return fd;
	ret = ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_tables), &vip_id, &fd, 0));
	close(fd);
	return ret;
}

int maglev_dp_table_swap(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table)
{
	return maglev_dp_table_swap_prev(dp, vip_id, table, NULL);
}

int maglev_dp_table_swap_batch(struct maglev_dp *dp, size_t n, const uint32_t *vip_ids,
			       const uint32_t *const *tables)
{
	int outer = map_fd(dp->skel->maps.maglev_tables), ret = 0;
	__u32 *keys = NULL, count = (__u32)n;
	int *fds = NULL;
	size_t i, made = 0;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (vip_ids[i] >= MAGLEV_MAX_VIPS)
			return -EINVAL;
	keys = calloc(n, sizeof(*keys));
	fds = calloc(n, sizeof(*fds));
	if (!keys || !fds) {
		ret = -ENOMEM;
		goto out;
	}
	/* Build every table first: a bad one changes nothing. */
	for (made = 0; made < n; made++) {
		fds[made] = table_map_new(tables[made], NULL);
		if (fds[made] < 0) {
			ret = fds[made];
			goto out;
		}
		keys[made] = vip_ids[made];
	}
	/* One call, one grace period on kernels that wait once per batch
	 * (per element on older ones); each VIP is still replaced whole.
	 */
	if (bpf_map_update_batch(outer, keys, fds, &count, NULL)) {
		ret = -errno;
		/* 524: the kernel's ENOTSUPP, no batch op for this map type. */
		if (ret == -EOPNOTSUPP || ret == -524) {
			ret = 0;
			for (i = count; i < n && !ret; i++)
				ret = ret_errno(bpf_map_update_elem(outer, &keys[i], &fds[i], 0));
		}
	}
out:
	for (i = 0; i < made; i++)
		close(fds[i]);
	free(keys);
	free(fds);
	return ret;
}

int maglev_dp_table_read_prev(struct maglev_dp *dp, uint32_t vip_id, uint32_t *table,
			      uint32_t *prev)
{
	size_t len = table_bytes();
	struct maglev_table *mem;
	__u32 id;
	int fd, ret = 0;

	if (vip_id >= MAGLEV_MAX_VIPS)
		return -EINVAL;
	if (bpf_map_lookup_elem(map_fd(dp->skel->maps.maglev_tables), &vip_id, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
	} else {
		if (table)
			memcpy(table, mem->owner, sizeof(mem->owner));
		if (prev)
			memcpy(prev, mem->prev, sizeof(mem->prev));
		munmap(mem, len);
	}
	close(fd);
	return ret;
}

int maglev_dp_table_read(struct maglev_dp *dp, uint32_t vip_id, uint32_t *table)
{
	return maglev_dp_table_read_prev(dp, vip_id, table, NULL);
}

int maglev_dp_table_clear(struct maglev_dp *dp, uint32_t vip_id)
{
	if (vip_id >= MAGLEV_MAX_VIPS)
		return -EINVAL;
	if (bpf_map_delete_elem(map_fd(dp->skel->maps.maglev_tables), &vip_id) && errno != ENOENT)
		return -errno;
	return 0;
}

/* Sum n u64 fields of a per-CPU value over all possible CPUs. */
static int percpu_sum(struct maglev_dp *dp, const struct bpf_map *map, uint32_t key, uint64_t *out,
		      size_t n)
{
	size_t stride = (bpf_map__value_size(map) + 7) / 8;
	uint64_t *vals;
	size_t i;
	int c, ret;

	vals = calloc(dp->ncpus, stride * 8);
	if (!vals)
		return -ENOMEM;
	ret = ret_errno(bpf_map_lookup_elem(map_fd(map), &key, vals));
	if (!ret) {
		memset(out, 0, n * sizeof(*out));
		for (c = 0; c < dp->ncpus; c++)
			for (i = 0; i < n; i++)
				out[i] += vals[c * stride + i];
	}
	free(vals);
	return ret;
}

/* Per-VIP and per-backend stats: the same three counters in the same order. */
_Static_assert(sizeof(struct maglev_vip_stats) == 3 * sizeof(__u64) &&
		       sizeof(struct maglev_backend_stats) == 3 * sizeof(__u64) &&
		       offsetof(struct maglev_vip_stats, new_flows) ==
			       offsetof(struct maglev_backend_stats, new_flows),
	       "stats structs: packets, bytes, new_flows");

static int traffic_stats(struct maglev_dp *dp, const struct bpf_map *map, uint32_t key,
			 uint32_t max, void *out)
{
	uint64_t v[3];
	int ret;

	if (key >= max)
		return -EINVAL;
	ret = percpu_sum(dp, map, key, v, 3);
	if (!ret)
		memcpy(out, v, sizeof(v));
	return ret;
}

int maglev_dp_vip_stats(struct maglev_dp *dp, uint32_t vip_id, struct maglev_vip_stats *out)
{
	return traffic_stats(dp, dp->skel->maps.maglev_vipstat, vip_id, MAGLEV_MAX_VIPS, out);
}

int maglev_dp_backend_stats(struct maglev_dp *dp, uint32_t idx, struct maglev_backend_stats *out)
{
	return traffic_stats(dp, dp->skel->maps.maglev_bestat, idx, MAGLEV_MAX_BACKENDS, out);
}

int maglev_dp_vip_spilled(struct maglev_dp *dp, uint32_t vip_id, uint64_t *out)
{
	if (vip_id >= MAGLEV_MAX_VIPS)
		return -EINVAL;
	return percpu_sum(dp, dp->skel->maps.maglev_vipspill, vip_id, out, 1);
}

int maglev_dp_overcap_set(struct maglev_dp *dp, uint32_t idx, bool over)
{
	__u32 v = over ? MAGLEV_OVERCAP : 0;

	if (!idx || idx >= MAGLEV_MAX_BACKENDS)
		return -EINVAL;
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_overcap), &idx, &v, 0));
}

int maglev_dp_backend_stats_all(struct maglev_dp *dp, struct maglev_backend_stats *out)
{
	return maglev_dp_backend_stats_below(dp, MAGLEV_MAX_BACKENDS, out);
}

int maglev_dp_backend_stats_below(struct maglev_dp *dp, uint32_t n,
				  struct maglev_backend_stats *out)
{
	int fd = map_fd(dp->skel->maps.maglev_bestat);
	/* Batches of at most ~4 MiB of per-CPU values, whatever the CPU count. */
	uint32_t chunk = (4u << 20) / ((uint32_t)dp->ncpus * sizeof(*out)), done = 0, in, next;
	uint64_t *vals;
	__u32 *keys;
	int ret = 0;

	if (chunk < 16)
		chunk = 16;
	if (chunk > MAGLEV_MAX_BACKENDS)
		chunk = MAGLEV_MAX_BACKENDS;
	vals = calloc((size_t)chunk * dp->ncpus, sizeof(*out));
	keys = calloc(chunk, sizeof(*keys));
	if (!vals || !keys) {
		ret = -ENOMEM;
		goto out;
	}
	if (n > MAGLEV_MAX_BACKENDS)
		n = MAGLEV_MAX_BACKENDS;
	memset(out, 0, MAGLEV_MAX_BACKENDS * sizeof(*out));
	while (done < n) {
		uint32_t count = n - done < chunk ? n - done : chunk, i;
		int c, r;

		r = bpf_map_lookup_batch(fd, done ? &in : NULL, &next, keys, vals, &count, NULL);
		if (r && errno != ENOENT) {
			ret = -errno;
			break;
		}
		for (i = 0; i < count; i++) {
			struct maglev_backend_stats *o = &out[keys[i] % MAGLEV_MAX_BACKENDS];
			const uint64_t *v = vals + (size_t)i * dp->ncpus * 3;

			for (c = 0; c < dp->ncpus; c++, v += 3) {
				o->packets += v[0];
				o->bytes += v[1];
				o->new_flows += v[2];
			}
		}
		done += count;
		in = next;
		if (r) /* ENOENT: that was the last batch */
			break;
	}
out:
	free(keys);
	free(vals);
	return ret;
}

int maglev_dp_reason_stats(struct maglev_dp *dp, uint64_t *counts)
{
	uint32_t i;
	int ret;

	for (i = 0; i < MAGLEV_REASON_MAX; i++) {
		ret = percpu_sum(dp, dp->skel->maps.maglev_reasons, i, &counts[i], 1);
		if (ret)
			return ret;
	}
	return 0;
}

int maglev_dp_counter_stats(struct maglev_dp *dp, uint64_t *counts)
{
	uint32_t i;
	int ret;

	for (i = 0; i < MAGLEV_CTR_MAX; i++) {
		ret = percpu_sum(dp, dp->skel->maps.maglev_ctrs, i, &counts[i], 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* The connection table, mapped read-write; NULL and *len 0 on failure. */
static struct maglev_conn_bucket *conn_map(struct maglev_dp *dp, size_t *len, uint32_t *nb)
{
	const struct bpf_map *m = dp->skel->maps.maglev_conns;
	size_t page = sysconf(_SC_PAGESIZE);
	void *mem;

	*nb = bpf_map__max_entries(m);
	*len = ((size_t)*nb * sizeof(struct maglev_conn_bucket) + page - 1) / page * page;
	mem = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd(m), 0);
	return mem == MAP_FAILED ? NULL : mem;
}

/* The way of key in its bucket (as the datapath finds it), or -1. */
static int conn_find(struct maglev_dp *dp, const struct maglev_flow_key *key,
		     struct maglev_conn_bucket *buckets, uint32_t *bidx)
{
	struct maglev_conn_params p;
	struct maglev_conn_bucket *b;
	__u32 zero = 0, tag;
	__u64 h;
	int i;

	if (bpf_map_lookup_elem(map_fd(dp->skel->maps.maglev_connkey), &zero, &p))
		return -1;
	h = maglev_conn_hash(key, p.seed);
	*bidx = (__u32)h & p.mask;
	b = &buckets[*bidx];
	tag = maglev_conn_tag(h);
	for (i = 0; i < MAGLEV_CONN_WAYS; i++) {
		const struct maglev_conn_slot *s = &b->slot[i];

		if (__atomic_load_n(&b->tag[i], __ATOMIC_ACQUIRE) == tag &&
		    maglev_conn_key_eq(&s->key, key) && maglev_conn_check(h, s) == s->check)
			return i;
	}
	return -1;
}

int maglev_dp_conn_lookup(struct maglev_dp *dp, const struct maglev_flow_key *key,
			  struct maglev_conn *conn)
{
	struct maglev_conn_bucket *m;
	uint32_t nb, bi;
	size_t len;
	int w, ret = -ENOENT;

	m = conn_map(dp, &len, &nb);
	if (!m)
		return -errno;
	w = conn_find(dp, key, m, &bi);
	if (w >= 0 && bi < nb) {
		*conn = m[bi].slot[w].conn;
		ret = 0;
	}
	munmap(m, len);
	return ret;
}

int maglev_dp_conn_delete(struct maglev_dp *dp, const struct maglev_flow_key *key)
{
	struct maglev_conn_bucket *m;
	uint32_t nb, bi;
	size_t len;
	int w, ret = -ENOENT;

	m = conn_map(dp, &len, &nb);
	if (!m)
		return -errno;
	w = conn_find(dp, key, m, &bi);
	if (w >= 0 && bi < nb) {
		/* Only the tag: a concurrent insert into another way of the
		 * bucket is not disturbed.
		 */
		__atomic_store_n(&m[bi].tag[w], 0, __ATOMIC_RELEASE);
		ret = 0;
	}
	munmap(m, len);
	return ret;
}

long maglev_dp_conn_flush(struct maglev_dp *dp)
{
	struct maglev_conn_bucket *m;
	uint32_t nb, i;
	long n = 0;
	size_t len;
	int w;

	m = conn_map(dp, &len, &nb);
	if (!m)
		return -errno;
	for (i = 0; i < nb; i++)
		for (w = 0; w < MAGLEV_CONN_WAYS; w++)
			if (m[i].tag[w]) {
				__atomic_store_n(&m[i].tag[w], 0, __ATOMIC_RELEASE);
				n++;
			}
	munmap(m, len);
	return n;
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
