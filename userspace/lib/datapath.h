/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP datapath as maglevd, maglevctl, tests and benchmarks see it: load
 * the balancer through its libbpf skeleton, pin or adopt its maps, attach it
 * with a bpf_link, and read or write VIPs, backends, tables and counters.
 *
 * All functions return 0 or a negative errno; those taking err/errlen fill
 * it with a one-line reason.
 */
#ifndef MAGLEV_DATAPATH_H
#define MAGLEV_DATAPATH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "maglev_maps.h"
#include "maglev_hot.h"

struct maglev_dp;

struct maglev_dp_opts {
	const char *pin_dir;	  /* NULL: MAGLEV_PIN_DIR; "" : do not pin (tests) */
	uint32_t conn_table_size; /* 0: MAGLEV_CONN_TABLE_SIZE */
	uint64_t tcp_closed_ns;	  /* after a client FIN/RST; 0: MAGLEV_TCP_CLOSED_NS_DEFAULT */
	/* Hot flows (dp_hot.c): the trackers sized for every VIP and the code
	 * loaded; false: one entry, and the verifier drops the code.
	 */
	bool hot_flows;
};

/* Load the balancer program. Maps already pinned in pin_dir are adopted
 * (connection table included, at the size it was created with) when their
 * layout matches (see maglev_dp_layout_pending), the others are created and
 * pinned. A new (all-zero) config gets the default seed.
 * A pin_dir under /sys/fs/bpf with no bpffs there gets one mounted (bpffs.h).
 */
int maglev_dp_open(struct maglev_dp **dp, const struct maglev_dp_opts *opts, char *err,
		   size_t errlen);
/* Upgrades: pinned maps whose layout this object does not share (type,
 * sizes, flags, BTF of key and value) are not adopted but created anew and
 * left unpinned, so the program already attached keeps forwarding from the
 * old ones while the caller fills the new ones. _pending describes them
 * ("name (why), ...") and returns their count; _commit, once the caller has
 * written its state and attached, moves every pinned link to this program
 * and replaces the old pins. Until then a failed start changes nothing.
 */
int maglev_dp_layout_pending(const struct maglev_dp *dp, char *buf, size_t len);
int maglev_dp_layout_commit(struct maglev_dp *dp, char *err, size_t errlen);
/* Whether maglev_dp_open mounted the bpffs (for the caller's log). */
bool maglev_dp_mounted_bpffs(const struct maglev_dp *dp);
/* Close our handles; pinned maps and links stay, so forwarding continues. */
void maglev_dp_close(struct maglev_dp *dp);

/* Attach to an interface with a pinned bpf_link. If a link pinned for this
 * interface exists it is updated to this program atomically (restart and
 * upgrade without a forwarding gap). generic selects XDP generic mode.
 */
int maglev_dp_attach(struct maglev_dp *dp, int ifindex, bool generic, char *err, size_t errlen);
int maglev_dp_detach(struct maglev_dp *dp, int ifindex);

int maglev_dp_set_config(struct maglev_dp *dp, const struct maglev_config *cfg);
/* Hot flows (include/maglev_hot.h): sample one forwarded packet in
 * sample_every per VIP and CPU (0: off); -ENOSPC if the trackers were sized
 * for no VIP (opened without hot_flows) and sample_every is not 0. _read
 * copies VIP vip_id's trackers of every CPU into out[maglev_dp_ncpus()].
 */
int maglev_dp_hot_set(struct maglev_dp *dp, uint32_t sample_every);
int maglev_dp_hot_read(struct maglev_dp *dp, uint32_t vip_id, struct maglev_hot_vip *out);
int maglev_dp_ncpus(const struct maglev_dp *dp);
int maglev_dp_get_config(struct maglev_dp *dp, struct maglev_config *cfg);
/* The MACs of the frames leaving interface ifindex (maglev_ifl2), and
 * dropping them (the config's pair again); both keep
 * maglev_config.if_l2_differs true to the map.
 */
int maglev_dp_if_l2_set(struct maglev_dp *dp, uint32_t ifindex, const struct maglev_if_l2 *l2);
int maglev_dp_if_l2_delete(struct maglev_dp *dp, uint32_t ifindex);
/* How long after its last packet a closing TCP entry still keeps its backend
 * for a SYN (maglev_dp_opts.tcp_closed_ns as loaded).
 */
uint64_t maglev_dp_tcp_closed_ns(const struct maglev_dp *dp);

int maglev_dp_vip_set(struct maglev_dp *dp, const struct maglev_vip_key *key,
		      const struct maglev_vip_info *info);
int maglev_dp_vip_del(struct maglev_dp *dp, const struct maglev_vip_key *key);

int maglev_dp_backend_set(struct maglev_dp *dp, uint32_t idx, const struct maglev_backend *b);
int maglev_dp_backend_get(struct maglev_dp *dp, uint32_t idx, struct maglev_backend *b);

/* Replace VIP vip_id's whole table (MAGLEV_TABLE_SIZE backend indices) in
 * one step: a packet sees either the old or the new table, never a mix.
 */
int maglev_dp_table_swap(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table);
int maglev_dp_table_read(struct maglev_dp *dp, uint32_t vip_id, uint32_t *table);
/* The same with each slot's previous owner (second chance, 0: none) in
 * prev[MAGLEV_TABLE_SIZE]: both arrays are one map value, swapped together.
 * Either pointer of the read may be NULL.
 */
int maglev_dp_table_swap_prev(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
			      const uint32_t *prev);
int maglev_dp_table_read_prev(struct maglev_dp *dp, uint32_t vip_id, uint32_t *table,
			      uint32_t *prev);
/* Drop a VIP's table (after maglev_dp_vip_del). */
int maglev_dp_table_clear(struct maglev_dp *dp, uint32_t vip_id);

/* Counters, summed over CPUs. */
int maglev_dp_vip_stats(struct maglev_dp *dp, uint32_t vip_id, struct maglev_vip_stats *out);
int maglev_dp_backend_stats(struct maglev_dp *dp, uint32_t idx, struct maglev_backend_stats *out);
/* Every backend's at once (out[MAGLEV_MAX_BACKENDS], by index), with batch lookups. */
int maglev_dp_backend_stats_all(struct maglev_dp *dp, struct maglev_backend_stats *out);
/* The same for indices below n only (the rest of out zeroed): reading all
 * 65,536 per-CPU values costs ~100 ms, too slow for bounded loads' 100 ms.
 */
int maglev_dp_backend_stats_below(struct maglev_dp *dp, uint32_t n,
				  struct maglev_backend_stats *out);
/* Bounded loads (include/maglev_maps.h): new flows of VIP vip_id that left
 * an over-cap pick for a probed backend, summed over CPUs; and the over-cap
 * mark of backend idx.
 */
int maglev_dp_vip_spilled(struct maglev_dp *dp, uint32_t vip_id, uint64_t *out);
int maglev_dp_overcap_set(struct maglev_dp *dp, uint32_t idx, bool over);
/* Whether the datapath marks backend idx (the map, read back). */
int maglev_dp_overcap_get(struct maglev_dp *dp, uint32_t idx, bool *over);
/* counts[MAGLEV_REASON_MAX], indexed by enum maglev_reason (include/maglev_maps.h). */
int maglev_dp_reason_stats(struct maglev_dp *dp, uint64_t *counts);

/* The connection-table entry of a flow, if any (-ENOENT otherwise). */
int maglev_dp_conn_lookup(struct maglev_dp *dp, const struct maglev_flow_key *key,
			  struct maglev_conn *conn);

/* For tests and benchmarks: the balancer program's fd. */
int maglev_dp_prog_fd(struct maglev_dp *dp);

/* Additions (issue 3). */

/* counts[MAGLEV_CTR_MAX], indexed by enum maglev_counter: connection-table
 * hits, misses, re-picks, UDP expiries, inserts, inserts skipped by the
 * new-flow limit, failed inserts.
 */
int maglev_dp_counter_stats(struct maglev_dp *dp, uint64_t *counts);
/* Replace the tables of n VIPs (vip_ids[i] gets tables[i]) in one
 * BPF_MAP_UPDATE_BATCH: each VIP atomically, as maglev_dp_table_swap, but
 * the kernel waits for one RCU grace period for the whole batch instead of
 * one per VIP (6.8+; older kernels wait per element). All tables are
 * validated and built before any is installed; if the kernel then fails
 * part-way, the VIPs before the failing one carry their new table.
 */
int maglev_dp_table_swap_batch(struct maglev_dp *dp, size_t n, const uint32_t *vip_ids,
			       const uint32_t *const *tables);
/* Forget one flow (it is re-picked by its next packet). */
int maglev_dp_conn_delete(struct maglev_dp *dp, const struct maglev_flow_key *key);
/* Forget every flow; returns how many entries the table held (or -errno). */
long maglev_dp_conn_flush(struct maglev_dp *dp);
/* fd of one of the balancer's maps by name ("maglev_conns", ...), for tools. */
int maglev_dp_map_fd(struct maglev_dp *dp, const char *name);
/* Stable names for reasons and counters ("drop_ttl", "conn_hit", ...). */
const char *maglev_dp_reason_name(uint32_t reason);
const char *maglev_dp_counter_name(uint32_t ctr);

#endif /* MAGLEV_DATAPATH_H */
