/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Flap damping, as BGP route flap damping (RFC 2439, RFC 7196): each
 * change of a backend's check state adds damping_penalty to its penalty,
 * which halves every damping_half_life_ms. Over damping_suppress the
 * backend is suppressed: a passing check does not bring it back until the
 * penalty falls below damping_reuse (settle.c looks every tick). The
 * penalty is capped at 4 x damping_suppress, so a suppression ends at most
 * about two half-lives after the flapping stops.
 */
#ifndef MAGLEVD_DAMPING_H
#define MAGLEVD_DAMPING_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "model/registry.h"

/* b's penalty at CLOCK_MONOTONIC ms now. */
uint32_t damping_penalty(const struct maglevd_config *cfg, const struct be *b, uint64_t now);
/* b's check state changed at now: add the penalty; true if that suppresses it. */
bool damping_flap(const struct maglevd_config *cfg, struct be *b, uint64_t now);
/* A suppressed b whose penalty fell below the reuse threshold: unsuppressed. */
bool damping_reuse(const struct maglevd_config *cfg, struct be *b, uint64_t now);
/* Log why damping keeps b of v down (what: "suppressed", ...). */
struct daemon;
struct vip;
void damping_log(const struct daemon *d, const struct vip *v, const struct be *b, const char *what,
		 uint64_t now);

#endif /* MAGLEVD_DAMPING_H */
