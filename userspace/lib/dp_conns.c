// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The connection table, read and written from userspace.
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
