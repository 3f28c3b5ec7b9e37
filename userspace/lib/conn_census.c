// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
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

int maglev_conn_map_open(struct maglev_dp *dp, struct conn_map *cm)
{
	int cfd = maglev_dp_map_fd(dp, "maglev_conns");
	struct bpf_map_info info = {0};
	__u32 ilen = sizeof(info);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	memset(cm, 0, sizeof(*cm));
	if (cfd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(cfd, &info, &ilen))
		return -errno;
	cm->len = ((size_t)info.max_entries * sizeof(*cm->m) + page - 1) / page * page;
	m = mmap(NULL, cm->len, PROT_READ, MAP_SHARED, cfd, 0);
	if (m == MAP_FAILED)
		return -errno;
	cm->m = m;
	cm->buckets = info.max_entries;
	return 0;
}

void maglev_conn_map_close(struct conn_map *cm)
{
	if (cm->m)
		munmap((void *)cm->m, cm->len);
	memset(cm, 0, sizeof(*cm));
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* When a live entry stops being live if its flow sends nothing more: a UDP
 * flow udp_idle_ns after its last packet, a closed connection tcp_closed_ns
 * after its last packet since its FIN or RST; 0: not by time (a TCP
 * connection still open).
 */
static uint64_t entry_due(const struct maglev_conn_slot *s, uint64_t udp_idle_ns,
			  uint64_t tcp_closed_ns)
{
	if (s->key.proto == IPPROTO_UDP)
		return udp_idle_ns ? s->conn.last_seen_ns + udp_idle_ns + 1 : 0;
	if (s->flags & MAGLEV_CONN_F_CLOSING)
		return s->conn.last_seen_ns + tcp_closed_ns + 1;
	return 0;
}

/* What deciding liveness takes: the table's seed and the datapath's idle
 * and closed times.
 */
static int read_params(struct maglev_dp *dp, struct maglev_conn_params *p, struct maglev_config *mc)
{
	int kfd = maglev_dp_map_fd(dp, "maglev_connkey");
	__u32 zero = 0;

	if (kfd < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem(kfd, &zero, p))
		return -errno;
	return maglev_dp_get_config(dp, mc);
}

int maglev_conn_census(struct maglev_dp *dp, struct conn_census *c)
{
	struct conn_map cm;
	int ret = maglev_conn_map_open(dp, &cm);

	if (ret)
		return ret;
	ret = maglev_conn_census_mapped(dp, &cm, c);
	maglev_conn_map_close(&cm);
	return ret;
}

int maglev_conn_census_mapped(struct maglev_dp *dp, const struct conn_map *cm,
			      struct conn_census *c)
{
	int bfd = maglev_dp_map_fd(dp, "maglev_backends");
	const struct maglev_conn_bucket *m = cm->m;
	struct maglev_conn_params p;
	struct maglev_config mc;
	struct maglev_backend *bes;
	uint8_t *have;
	__u32 i;
	uint64_t now, tcp_closed_ns;
	int w, ret;

	if (bfd < 0 || !m)
		return -ENOENT;
	ret = read_params(dp, &p, &mc);
	if (ret)
		return ret;
	bes = malloc(MAGLEV_MAX_BACKENDS * sizeof(*bes));
	have = calloc(MAGLEV_MAX_BACKENDS, sizeof(*have));
	if (!bes || !have) {
		ret = -ENOMEM;
		goto out;
	}
	tcp_closed_ns = maglev_dp_tcp_closed_ns(dp);
	memset(c, 0, offsetof(struct conn_census, watch));
	c->nwatch = 0;
	c->watch_missed = 0;
	c->slots = (uint64_t)cm->buckets * MAGLEV_CONN_WAYS;
	now = mono_ns();
	for (i = 0; i < cm->buckets; i++) {
		for (w = 0; w < MAGLEV_CONN_WAYS; w++) {
			const struct maglev_conn_slot *s = &m[i].slot[w];
			const struct maglev_backend *b;
			uint64_t due;
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
			/* Closed by the client (FIN/RST) and silent for longer than
			 * tcp_closed_ns: the datapath takes its SYN for a new
			 * connection and may reuse the way.
			 */
			if ((s->flags & MAGLEV_CONN_F_CLOSING) && now > s->conn.last_seen_ns &&
			    now - s->conn.last_seen_ns > tcp_closed_ns)
				continue;
			c->live++;
			c->per_backend[idx]++;
			due = entry_due(s, mc.udp_idle_ns, tcp_closed_ns);
			if (!c->watch || !due || due >= c->watch_until)
				continue;
			if (c->nwatch < c->watch_cap)
				c->watch[c->nwatch++] = (struct conn_watch){
					.due = due,
					.pos = i * MAGLEV_CONN_WAYS + (__u32)w,
					.check = s->check,
					.backend_idx = idx,
				};
			else
				c->watch_missed++;
		}
	}
out:
	free(have);
	free(bes);
	return ret;
}

long maglev_conn_recheck(struct maglev_dp *dp, const struct conn_map *cm, struct conn_census *c,
			 uint64_t now_ns, uint32_t *gone, uint32_t gone_cap)
{
	struct maglev_conn_params p;
	struct maglev_config mc;
	uint64_t tcp_closed_ns = maglev_dp_tcp_closed_ns(dp);
	uint32_t i, keep = 0, ngone = 0;
	int ret;

	if (!c->watch || !c->nwatch)
		return 0;
	if (!cm->m)
		return -ENOENT;
	ret = read_params(dp, &p, &mc);
	if (ret)
		return ret;
	for (i = 0; i < c->nwatch; i++) {
		struct conn_watch *x = &c->watch[i];
		const struct maglev_conn_bucket *b;
		struct maglev_conn_slot s;
		uint64_t due;
		int w;

		if (x->due > now_ns || ngone >= gone_cap ||
		    x->pos / MAGLEV_CONN_WAYS >= cm->buckets)
			goto keep;
		b = &cm->m[x->pos / MAGLEV_CONN_WAYS];
		w = (int)(x->pos % MAGLEV_CONN_WAYS);
		if (!__atomic_load_n(&b->tag[w], __ATOMIC_ACQUIRE))
			goto gone;
		/* One copy, checked whole, as the datapath reads a slot. */
		memcpy(&s, &b->slot[w], sizeof(s));
		if (maglev_conn_check(maglev_conn_hash(&s.key, p.seed), &s) != s.check)
			goto keep; /* being written: look again next time */
		if (s.check != x->check)
			goto gone; /* another flow, or this one re-picked: a new flow */
		due = entry_due(&s, mc.udp_idle_ns, tcp_closed_ns);
		if (!due)
			continue; /* not ending by time any more: stays counted */
		if (due <= now_ns)
			goto gone;
		x->due = due; /* it sent since: later */
	keep:
		c->watch[keep++] = *x;
		continue;
	gone:
		gone[ngone++] = x->backend_idx;
	}
	c->nwatch = keep;
	return ngone;
}
