/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's model of what the datapath should hold: VIPs (with the ids
 * the daemon allocates) and their backends (with the global backend indices
 * and generations the daemon allocates).
 *
 * Every change goes through a transaction: clone the live registry, apply
 * and validate the change(s) on the clone, then commit, which writes only
 * the difference to the datapath (per VIP: new backends, then the rebuilt
 * table in one swap, then backends that left) and makes the clone live. A
 * rejected change is dropped with the clone, so it changes nothing.
 */
#ifndef MAGLEVD_REGISTRY_H
#define MAGLEVD_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "ctl_proto.h"
#include "datapath.h"
#include "maglev_maps.h"
#include "maglev_second.h"
#include "maglev_table.h"

struct be {
	uint32_t idx; /* index in the datapath's backend map */
	uint32_t gen;
	struct ctl_addr addr;
	uint32_t weight;
	bool drain;
	bool up;	 /* health */
	bool start_down; /* added down: up at its first passing check, whatever rise says */
	/* Down but still in its table slots, marked so new flows take their
	 * probe sequence, until CLOCK_MONOTONIC ms held_until (settle_ms,
	 * model/admit.h): a return before then moves no slot.
	 */
	bool held;
	uint64_t held_until;
	/* Slow start: CLOCK_MONOTONIC ms its ramp began (0: at full weight) and
	 * the step its table was built with (model/admit.h).
	 */
	uint64_t ramp_start;
	uint32_t ramp_step;
	/* Flap damping (health/damping.h): the penalty at CLOCK_MONOTONIC ms
	 * penalty_ms; suppressed: over the threshold, not yet under reuse;
	 * damped_up: its check passes but damping keeps it down.
	 */
	uint32_t penalty;
	uint64_t penalty_ms;
	bool suppressed;
	bool damped_up;
	/* MAGLEV_BACKEND_F_* last written to the datapath. Like a VIP's
	 * table_gen, digest, sc_until_ms and rdv: true once the registry is
	 * written; a registry still queued holds its clone's copies until its
	 * build takes them from the one before it (registry_commit_build).
	 */
	uint8_t dp_flags;
	/* Counters of this index when the backend got it (indices are reused). */
	struct maglev_backend_stats base;
	/* Rates from the last two one-second samples. */
	struct maglev_backend_stats last;
	double pps, bps;
};

/*
 * A rendezvous VIP's last build: the backends and the table (indices into
 * specs) under seed. The next build only updates it (O(M) for a few
 * changes, maglev_rendezvous_update). Shared by the registry clones that
 * copy the VIP, freed by the last reference.
 */
struct rdv_memo {
	int refs;
	struct maglev_seed seed;
	uint32_t n;
	struct maglev_backend_spec *specs;
	uint32_t table[MAGLEV_TABLE_SIZE];
};

struct vip {
	uint32_t id;
	struct maglev_vip_key key;
	uint8_t encap;	    /* enum maglev_encap */
	uint16_t gue_port;  /* host order */
	uint8_t placement;  /* enum maglev_placement: how the table is filled */
	bool second_chance; /* GUE only: carry slots' previous owners (maglev_second.h) */
	/* CLOCK_MONOTONIC ms until which the live table keeps previous owners;
	 * 0: it holds none.
	 */
	double sc_until_ms;
	/* Its build moved owners: the window restarts when the commit's swaps
	 * are live (a swap may be held past it), second_chance_live().
	 */
	bool sc_from_live;
	uint32_t vnodes;	/* ring points per unit of weight (ring only) */
	uint32_t balance_milli; /* bounded loads' C in thousandths (bounded.h); 0: off */
	int64_t slow_start_ms;	/* this VIP's slow_start_ms (admit.h); -1: the config's */
	uint8_t hot_threshold;	/* model/hot_threshold.h: 0 the configured one */
	struct rdv_memo *rdv;	/* rendezvous only; NULL before the first build */
	struct hc_params hc;	/* overrides, see hc_set */
	uint32_t hc_set;
	struct be *bes;
	uint32_t nbe, cap;
	bool dirty;		   /* needs its table rebuilt and written */
	bool info_dirty;	   /* needs its VIP-map entry written */
	uint64_t table_gen;	   /* tables swapped in for this VIP */
	uint32_t table_slots_used; /* backends in the table */
	uint64_t digest;	   /* drift_table_digest() of the table swapped in */
	double rebuild_ms;	   /* last build + swap */
	struct maglev_vip_stats base, last;
	uint64_t spill_base; /* maglev_vipspill when this VIP got its id */
	double pps, bps, fps;
	/* Rebuilt even if its table's members did not change (a new seed, a
	 * rollback), and the seed of the table swapped in (registry_writer.c).
	 */
	bool table_forced;
	struct maglev_seed built_seed;
};

/* What a transaction deleted, so that re-adding the same VIP or backend in
 * the same transaction (a restore: flush, then add everything) gets its id,
 * index, generation, counters and health back, and established flows keep
 * their connection entries.
 */
struct freed_vip {
	struct maglev_vip_key key;
	uint32_t id;
	uint64_t table_gen;
	struct maglev_vip_stats base;
	uint64_t spill_base;
};

struct freed_be {
	struct maglev_vip_key key;
	struct ctl_addr addr;
	uint32_t idx, gen;
	bool up;
	struct maglev_backend_stats base;
	uint32_t next; /* older entry of the same hash chain, + 1; 0: none */
};

/* Chains over fbes by (VIP, address): a restore frees and re-adds up to
 * 65,535 backends, and a linear search per add would be quadratic.
 */
#define REGISTRY_FBE_CHAINS 65536

struct registry {
	struct vip *vips[MAGLEV_MAX_VIPS]; /* by id */
	uint32_t nvips;
	uint32_t nbackends;
	/* Backend index use: 0 free, 1 used, 2 freed by this transaction (not
	 * reusable until it commits, so one batch never hands a deleted
	 * backend's index to a new one while the old table still names it).
	 */
	uint8_t *idx_used;
	uint32_t next_idx;
	struct freed_vip *fvips;
	struct freed_be *fbes;
	uint32_t *fbe_chain; /* REGISTRY_FBE_CHAINS heads (index + 1), or NULL */
	uint32_t nfvips, cap_fvips, nfbes, cap_fbes;
	/* What the state file holds of a live registry never changes again
	 * (changes go to clones; only rates and commit bookkeeping are updated
	 * in place), so the state writer shares it: references, the last put
	 * frees.
	 */
	int refs;
	/* fleet mode (fleet.h): the etcd revision this state was applied from,
	 * kept in the state file so a restart without etcd knows it; 0: none.
	 */
	uint64_t fleet_rev;
};

struct registry_ctx {
	struct maglev_dp *dp;
	const struct maglevd_config *cfg;
};

struct registry *registry_new(void);
struct registry *registry_clone(const struct registry *r);
/* Take another reference / drop one (the last frees). */
struct registry *registry_get(struct registry *r);
void registry_free(struct registry *r);

struct vip *registry_find_vip(const struct registry *r, const struct maglev_vip_key *key);
/* The VIP's effective health-check parameters (its overrides over the
 * config's defaults) are valid, and an all-ports VIP with a check has a port.
 */
int registry_vip_hc_check(const struct vip *v, const struct registry_ctx *ctx, char *err,
			  size_t errlen);
/* Some IPv6 VIP, or NULL when there is none (the mtu check needs one). */
const struct vip *registry_first_ipv6_vip(const struct registry *r);
struct be *vip_find_be(const struct vip *v, const struct ctl_addr *a);
/* The effective health-check settings of v under the config defaults. */
void vip_hc(const struct vip *v, const struct hc_params *defaults, struct hc_params *out);

/* Mutations on a transaction's clone; err names the problem on failure. */
int registry_vip_add(struct registry *r, const struct registry_ctx *ctx,
		     const struct maglev_vip_key *key, uint8_t encap, uint16_t gue_port,
		     const struct hc_params *hc, uint32_t hc_set, int32_t want_id, char *err,
		     size_t errlen);
int registry_vip_del(struct registry *r, const struct maglev_vip_key *key, char *err,
		     size_t errlen);
int registry_be_add(struct registry *r, const struct registry_ctx *ctx, struct vip *v,
		    const struct ctl_addr *a, uint32_t weight, bool drain, int64_t want_idx,
		    uint32_t want_gen, char *err, size_t errlen);
int registry_be_del(struct registry *r, struct vip *v, const struct ctl_addr *a, char *err,
		    size_t errlen);
void registry_flush(struct registry *r);
/*
 * Whether every changed VIP's table can be built. A ring is sized by all of
 * its backends' weights, up or not, so that no health change can later make
 * it too large.
 */
int registry_check_placements(const struct registry *r, char *err, size_t errlen);
/* Mark every VIP for a rebuild (the seed changed). */
void registry_mark_all(struct registry *r);

/* Drop a reference to a rendezvous VIP's last build. */
void registry_rdv_put(struct rdv_memo *m);

/*
 * The datapath writer (registry_writer.c).
 *
 * Write the difference between old (NULL: nothing known) and next to the
 * datapath. Returns 0, or a negative errno with err set if the datapath
 * refused a write (the datapath then holds part of next). This one waits
 * for the table swaps (start and rollback); the event loop uses its two
 * halves below.
 */
int registry_commit(const struct registry *old, struct registry *next,
		    const struct registry_ctx *ctx, char *err, size_t errlen);

/* The MAGLEV_BACKEND_F_* flags the datapath should hold for b. */
uint8_t registry_be_flags(const struct be *b, enum hc_on_fail on_fail);

/* What the build half of a commit left for the finish half, per VIP id. */
#define REGISTRY_PEND_REMOVED 1 /* the old VIP of this id: zero its backends */
#define REGISTRY_PEND_CHANGED 2 /* the new one: backends that left its table */
#define REGISTRY_PEND_INFO    4 /* the new one: its VIP entry */
struct registry_pending {
	uint8_t what[MAGLEV_MAX_VIPS];
};
/*
 * Build: new backends, VIP deletions, and every changed table built and
 * queued for a swap (table_swap.h). Finish, once every swap has returned:
 * VIP entries, and the backends that left a table. Neither waits.
 */
int registry_commit_build(const struct registry *old, struct registry *next,
			  const struct registry_ctx *ctx, struct registry_pending *p, char *err,
			  size_t errlen);
int registry_commit_finish(const struct registry *old, struct registry *next,
			   const struct registry_ctx *ctx, const struct registry_pending *p,
			   char *err, size_t errlen);

#endif /* MAGLEVD_REGISTRY_H */
