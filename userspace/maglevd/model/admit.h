/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Whether, and with what weight, a backend is in its VIP's table: a backend
 * that turns down is held in its slots for settle_ms (marked, so new flows
 * go past it; a return within settle_ms moves no slot), and a backend that
 * joins reaches its weight over slow_start_ms in ADMIT_RAMP_STEPS steps.
 * docs/maglev-table.md ("Settle and slow start") has why.
 */
#ifndef MAGLEVD_ADMIT_H
#define MAGLEVD_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/registry.h"

/* Slow start's steps: the table is rebuilt this many times over a ramp. */
#define ADMIT_RAMP_STEPS 4

/* b is in its VIP's table: up or held, not drained, weight above 0. */
bool admit_in_table(const struct be *b);
/* b is marked for the datapath: held in the table while down. */
bool admit_marked(const struct be *b);
/*
 * The weights v's table is built with. While a backend ramps, and the
 * placement takes weights as ratios (maglev: a quota is m * w / W, the same
 * table at every scale; rendezvous), admit_scaled(v): every weight is scaled
 * by ADMIT_RAMP_STEPS and a ramping one is weight * step, so even weight-1
 * backends ramp. A ring takes weight * step / STEPS (at least 1).
 */
bool admit_scaled(const struct vip *v);
uint32_t admit_table_weight(const struct be *b, bool scaled);
/* v's slow_start_ms: its own, or the config's default. */
uint64_t admit_slow_start_ms(const struct vip *v, const struct maglevd_config *cfg);
/* The ramp step b is at, at CLOCK_MONOTONIC ms now (0: at full weight). */
uint32_t admit_ramp_step(const struct be *b, uint64_t slow_start_ms, uint64_t now);
/* The same for a ramp that began at start (0: none). */
uint32_t admit_ramp_step_at(uint64_t start, uint64_t slow_start_ms, uint64_t now);
/* v has a backend in its table (NULL: no VIP): only then does a joining
 * one ramp; in an empty VIP each would take everything anyway.
 */
bool admit_serving(const struct vip *v);
/* Start b's ramp at now if slow_start_ms asks for one and v has another
 * backend in its table (the first one alone takes everything anyway).
 */
void admit_ramp_start(const struct vip *v, struct be *b, uint64_t slow_start_ms, uint64_t now);
/* Whether admit_ramp_start would ramp b: another backend of v in its table at full weight. */
bool admit_ramp_other(const struct vip *v, const struct be *b);
/*
 * b's ramp began at start (CLOCK_MONOTONIC ms; a fleet's verdict: when the
 * fleet saw it return, maybe before now): the step of now, none once past.
 */
void admit_ramp_from(const struct vip *v, struct be *b, uint64_t slow_start_ms, uint64_t start,
		     uint64_t now);

#endif /* MAGLEVD_ADMIT_H */
