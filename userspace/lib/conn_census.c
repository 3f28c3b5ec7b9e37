// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "conn_census.h"
#include "maglev_conn.h"

/*
 * Backend idx's generation and flags, read the first time an entry names it
 * (have[idx]): a lookup per backend in use, not a read of all 65,536 slots
 * (~70 ms even for a small table, which held bounded loads' census to one
 * every few seconds). An index that cannot be read stays zero: not live.
 */
static const struct maglev_backend *backend_of(int fd, struct maglev_backend *bes, uint8_t *have,
					       __u32 idx)
{
	if (!have[idx]) {
		have[idx] = 1;
		if (bpf_map_lookup_elem(fd, &idx, &bes[idx]))
			memset(&bes[idx], 0, sizeof(bes[idx]));
	}
	return &bes[idx];
}

int maglev_conn_census(struct maglev_dp *dp, struct conn_census *c)
{
	int cfd = maglev_dp_map_fd(dp, "maglev_conns"),
	    kfd = maglev_dp_map_fd(dp, "maglev_connkey");
	int bfd = maglev_dp_map_fd(dp, "maglev_backends");
	struct maglev_conn_params p;
	struct maglev_config mc;
	struct maglev_backend *bes;
	struct maglev_conn_bucket *m;
	uint8_t *have;
	struct bpf_map_info info = {0};
	__u32 ilen = sizeof(info), zero = 0, i;
	size_t len, page = (size_t)sysconf(_SC_PAGESIZE);
	struct timespec ts;
	uint64_t now, tcp_closed_ns;
	int w, ret;

	if (cfd < 0 || kfd < 0 || bfd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(cfd, &info, &ilen) || bpf_map_lookup_elem(kfd, &zero, &p))
		return -errno;
	ret = maglev_dp_get_config(dp, &mc);
	if (ret)
		return ret;
	bes = malloc(MAGLEV_MAX_BACKENDS * sizeof(*bes));
	have = calloc(MAGLEV_MAX_BACKENDS, sizeof(*have));
	if (!bes || !have) {
		ret = -ENOMEM;
		goto out;
	}
	len = ((size_t)info.max_entries * sizeof(*m) + page - 1) / page * page;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, cfd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	tcp_closed_ns = maglev_dp_tcp_closed_ns(dp);
	memset(c, 0, sizeof(*c));
	c->slots = (uint64_t)info.max_entries * MAGLEV_CONN_WAYS;
	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (i = 0; i < info.max_entries; i++) {
		for (w = 0; w < MAGLEV_CONN_WAYS; w++) {
			const struct maglev_conn_slot *s = &m[i].slot[w];
			const struct maglev_backend *b;
			__u32 idx;
			__u64 h;

			if (!__atomic_load_n(&m[i].tag[w], __ATOMIC_ACQUIRE))
				continue;
			/* A torn or half-written slot is a miss for the datapath too. */
			h = maglev_conn_hash(&s->key, p.seed);
			if (maglev_conn_check(h, s) != s->check)
				continue;
			c->entries++;
			idx = s->conn.backend_idx;
			if (idx >= MAGLEV_MAX_BACKENDS)
				continue;
			b = backend_of(bfd, bes, have, idx);
			if (b->gen != s->conn.backend_gen ||
			    !(b->flags & (MAGLEV_BACKEND_F_UP | MAGLEV_BACKEND_F_DRAIN)))
				continue;
			/* The datapath's clock is the coarse one: it may trail ours. */
			if (s->key.proto == IPPROTO_UDP && mc.udp_idle_ns &&
			    now > s->conn.last_seen_ns &&
			    now - s->conn.last_seen_ns > mc.udp_idle_ns)
				continue;
			/* Closed by the client (FIN/RST) longer ago than tcp_closed_ns:
			 * the datapath takes it for a new flow and may reuse the way.
			 */
			if ((s->flags & MAGLEV_CONN_F_CLOSING) && now > s->conn.last_seen_ns &&
			    now - s->conn.last_seen_ns > tcp_closed_ns)
				continue;
			c->live++;
			c->per_backend[idx]++;
		}
	}
	munmap(m, len);
out:
	free(have);
	free(bes);
	return ret;
}
