// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Counters, summed over CPUs.
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

int maglev_dp_overcap_get(struct maglev_dp *dp, uint32_t idx, bool *over)
{
	__u32 v = 0;
	int r;

	if (!idx || idx >= MAGLEV_MAX_BACKENDS)
		return -EINVAL;
	r = ret_errno(bpf_map_lookup_elem(map_fd(dp->skel->maps.maglev_overcap), &idx, &v));
	if (!r)
		*over = v != 0;
	return r;
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
