/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The packet fuzzer's balancer set-up, shared by the harness (xdp_fuzz.c)
 * and the seed-corpus generator (xdp_fuzz_seeds.c): which VIPs and backends
 * exist, so the generator can aim a seed at every reason and the oracle can
 * predict the backend of a forwarded packet.
 */
#ifndef MAGLEV_XDP_FUZZ_H
#define MAGLEV_XDP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include "maglev_maps.h"
#include "pkt.h"

/* Largest frame tried: above the configured MTU so that the too-big and
 * need-frag paths are reachable, well below what BPF_PROG_TEST_RUN takes.
 */
#define FZ_MAX_LEN 1600
/* Outer MTU of the set-up (L3 bytes), global in struct maglev_config. */
#define FZ_MTU 1400

struct fz_backend {
	uint32_t idx;
	int family;
	uint8_t addr[16];
	uint8_t flags; /* MAGLEV_BACKEND_F_*; 0: down but still in a table */
};

#define FZ_VIP_BACKENDS 4

struct fz_vip {
	int family;
	uint8_t addr[16];
	uint16_t port; /* host order; 0: all ports */
	uint8_t proto;
	uint32_t vip_id;
	int encap;
	uint16_t gue_port; /* host order; 0: the default */
	/* Backend indices of the table, 0-terminated; none: no table at all. */
	uint32_t backends[FZ_VIP_BACKENDS];
};

extern const struct fz_backend fz_backends[];
extern const size_t fz_nbackends;
extern const struct fz_vip fz_vips[];
extern const size_t fz_nvips;

/* The VIP a flow to f->dst:f->dport belongs to (exact port first, then the
 * all-ports VIP), NULL if none.
 */
const struct fz_vip *fz_vip_find(const struct flow *f);
const struct fz_backend *fz_backend(uint32_t idx);
/* Backend index the userspace Maglev table picks for a new flow f of VIP v
 * (0: the VIP has no table).
 */
uint32_t fz_pick(const struct fz_vip *v, const struct flow *f);

/*
 * The seed generator calls emit() once per seed: name (file name, no
 * slashes), frame bytes, and the reason the frame must end in. emit()
 * returns 0 or -1 if the frame did not reach that reason.
 */
typedef int (*fz_emit_fn)(const char *name, const uint8_t *frame, size_t len, int reason);
int fz_gen_seeds(fz_emit_fn emit);

#endif /* MAGLEV_XDP_FUZZ_H */
