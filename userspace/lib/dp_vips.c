// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * VIP entries (and the address index the program looks them up by) and
 * backend entries.
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
int dp_vip_index_rebuild(struct maglev_dp *dp)
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
