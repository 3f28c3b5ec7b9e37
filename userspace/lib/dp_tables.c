// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Maglev tables: one inner map per VIP, swapped whole.
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
