/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A backend's state, one name for it everywhere: the control answers
 * (maglevctl prints them as they come) and the metrics' state label.
 */
#ifndef MAGLEVD_BE_STATE_H
#define MAGLEVD_BE_STATE_H

#include "model/registry.h"

/* Worst first: down wins over drain, drain over weight 0. */
#define BE_STATES(X)                                                                               \
	X(BE_DOWN, "down")	       /* failing its checks, or --start-down before one passed */ \
	X(BE_HELD, "held")	       /* down, its slots kept and marked until settle_ms */       \
	X(BE_SUPPRESSED, "suppressed") /* passes its checks, kept down by flap damping */          \
	X(BE_DRAIN, "drain")	       /* keeps its flows, takes no new */                         \
	X(BE_QUIESCED, "quiesced")     /* weight 0: in no table slot */                            \
	X(BE_RAMPING, "ramping")       /* in the table, below its weight (slow start) */           \
	X(BE_UP, "up")		       /* in the table */

#define BE_STATE_ENUM(e, name) e,
enum be_state { BE_STATES(BE_STATE_ENUM) BE_STATE_MAX };
#undef BE_STATE_ENUM

enum be_state be_state(const struct be *b);
const char *be_state_name(const struct be *b);
/* The name of a state, for listing every state (the metrics emit each one 0 or 1). */
const char *be_state_str(enum be_state s);

#endif /* MAGLEVD_BE_STATE_H */
