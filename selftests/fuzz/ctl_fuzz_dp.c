// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the control-input fuzzers link instead of the BPF datapath
 * (userspace/lib/dp_*.c) and the daemon's event loop (maglevd/core/main.c):
 * everything above these seams (the request parser and validator, the
 * registry, the config and state parsers, the health-check bookkeeping) is
 * the daemon's real code.
 *
 * Reads answer from a small deterministic in-memory model, so the query
 * paths (table, lookup, stats, backend list) run their formatting code;
 * writes to the datapath and the event loop are never reached by a fuzzer
 * (daemon_commit is the harness's own, see ctl_fuzz_request.c) and abort if
 * they are, so a change in the daemon that starts calling them is noticed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_fuzz.h"
#include "maglev_conn.h"

static char fake_dp_storage;
struct maglev_dp *const ctl_fuzz_dp = (struct maglev_dp *)&fake_dp_storage;

static void unreachable(const char *what)
{
	fprintf(stderr, "ctl_fuzz: %s called: the harness does not model it\n", what);
	abort();
}

static uint64_t clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

uint64_t mono_us(void)
{
	return mono_ms() * 1000;
}

uint64_t real_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

/* Fixed: the state round trip's times must come back to the ms. */
uint64_t real_offset_ms(void)
{
	return 1700000000000ULL;
}

int ev_add(struct daemon *d, struct ev_source *src, uint32_t events)
{
	unreachable("ev_add");
	return -1;
}

int ev_mod(struct daemon *d, struct ev_source *src, uint32_t events)
{
	unreachable("ev_mod");
	return -1;
}

void ev_del(struct daemon *d, struct ev_source *src)
{
	unreachable("ev_del");
}

/* A reload re-reads the daemon's config file: not modelled, refused. */
int daemon_reload(struct daemon *d, char *err, size_t errlen)
{
	snprintf(err, errlen, "reload: not modelled by the fuzz harness");
	return -1;
}

/* Indices 1..15 exist, are up and have generation 1; the rest are empty. */
int maglev_dp_backend_get(struct maglev_dp *dp, uint32_t idx, struct maglev_backend *b)
{
	memset(b, 0, sizeof(*b));
	if (idx == 0 || idx >= 16)
		return -ENOENT;
	b->family = MAGLEV_AF_INET;
	b->flags = MAGLEV_BACKEND_F_UP;
	b->gen = 1;
	return 0;
}

int maglev_dp_backend_stats(struct maglev_dp *dp, uint32_t idx, struct maglev_backend_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->packets = idx;
	return 0;
}

int maglev_dp_vip_stats(struct maglev_dp *dp, uint32_t vip_id, struct maglev_vip_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->packets = vip_id;
	return 0;
}

int maglev_dp_backend_stats_all(struct maglev_dp *dp, struct maglev_backend_stats *out)
{
	memset(out, 0, MAGLEV_MAX_BACKENDS * sizeof(*out));
	return 0;
}

int maglev_dp_backend_stats_below(struct maglev_dp *dp, uint32_t n,
				  struct maglev_backend_stats *out)
{
	memset(out, 0, MAGLEV_MAX_BACKENDS * sizeof(*out));
	return 0;
}

int maglev_dp_vip_spilled(struct maglev_dp *dp, uint32_t vip_id, uint64_t *out)
{
	*out = 0;
	return 0;
}

/* Hot flows: off, and no trackers to read. */
int maglev_dp_hot_set(struct maglev_dp *dp, uint32_t sample_every)
{
	return 0;
}

int maglev_dp_hot_read(struct maglev_dp *dp, uint32_t vip_id, struct maglev_hot_vip *out)
{
	return -ENOENT;
}

int maglev_dp_ncpus(const struct maglev_dp *dp)
{
	return 1;
}

/* The marks as a datapath holds them: what was set reads back. */
static bool fake_overcap[MAGLEV_MAX_BACKENDS];

int maglev_dp_overcap_set(struct maglev_dp *dp, uint32_t idx, bool over)
{
	if (!idx || idx >= MAGLEV_MAX_BACKENDS)
		return -EINVAL;
	fake_overcap[idx] = over;
	return 0;
}

int maglev_dp_overcap_get(struct maglev_dp *dp, uint32_t idx, bool *over)
{
	if (!idx || idx >= MAGLEV_MAX_BACKENDS)
		return -EINVAL;
	*over = fake_overcap[idx];
	return 0;
}

int maglev_dp_reason_stats(struct maglev_dp *dp, uint64_t *counts)
{
	memset(counts, 0, sizeof(*counts) * MAGLEV_REASON_MAX);
	return 0;
}

int maglev_dp_get_config(struct maglev_dp *dp, struct maglev_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed_k0 = 0x0123456789abcdefULL;
	cfg->seed_k1 = 0xfedcba9876543210ULL;
	return 0;
}

uint64_t maglev_dp_tcp_closed_ns(const struct maglev_dp *dp)
{
	return MAGLEV_TCP_CLOSED_NS_DEFAULT;
}

/* Slots cycle over indices 0..7 (0 and stale indices included on purpose). */
int maglev_dp_table_read(struct maglev_dp *dp, uint32_t vip_id, uint32_t *table)
{
	uint32_t i;

	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		table[i] = (i + vip_id) % 8;
	return 0;
}

int maglev_dp_table_read_prev(struct maglev_dp *dp, uint32_t vip_id, uint32_t *table,
			      uint32_t *prev)
{
	if (table)
		maglev_dp_table_read(dp, vip_id, table);
	if (prev)
		memset(prev, 0, MAGLEV_TABLE_SIZE * sizeof(*prev));
	return 0;
}

/* Flows with an even source port have an entry on index 2. */
int maglev_dp_conn_lookup(struct maglev_dp *dp, const struct maglev_flow_key *key,
			  struct maglev_conn *conn)
{
	if (key->sport & htons(1))
		return -ENOENT;
	memset(conn, 0, sizeof(*conn));
	conn->backend_idx = 2;
	conn->backend_gen = 1;
	return 0;
}

int maglev_dp_map_fd(struct maglev_dp *dp, const char *name)
{
	return -ENOENT;
}

int maglev_dp_prog_fd(struct maglev_dp *dp)
{
	return -ENOENT;
}

int maglev_dp_vip_set(struct maglev_dp *dp, const struct maglev_vip_key *key,
		      const struct maglev_vip_info *info)
{
	unreachable("maglev_dp_vip_set");
	return -1;
}

int maglev_dp_vip_del(struct maglev_dp *dp, const struct maglev_vip_key *key)
{
	unreachable("maglev_dp_vip_del");
	return -1;
}

int maglev_dp_backend_set(struct maglev_dp *dp, uint32_t idx, const struct maglev_backend *b)
{
	unreachable("maglev_dp_backend_set");
	return -1;
}

int maglev_dp_table_swap(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table)
{
	unreachable("maglev_dp_table_swap");
	return -1;
}

int maglev_dp_table_swap_prev(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
			      const uint32_t *prev)
{
	unreachable("maglev_dp_table_swap_prev");
	return -1;
}

int maglev_dp_table_clear(struct maglev_dp *dp, uint32_t vip_id)
{
	unreachable("maglev_dp_table_clear");
	return -1;
}

int maglev_dp_counter_stats(struct maglev_dp *dp, uint64_t *counts)
{
	memset(counts, 0, sizeof(*counts) * MAGLEV_CTR_MAX);
	return 0;
}
