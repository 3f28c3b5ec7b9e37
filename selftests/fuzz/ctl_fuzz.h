/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared by the control-input fuzzers (selftests/fuzz/ctl_fuzz_*.c): the
 * stand-in datapath and the oracles. See docs/fuzzing.md.
 */
#ifndef CTL_FUZZ_H
#define CTL_FUZZ_H

#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/daemon.h"
#include "datapath.h"
#include "model/registry.h"
#include "maglev_table.h"
#include "model/state.h"

/* A handle that stands for the datapath; see ctl_fuzz_dp.c. */
extern struct maglev_dp *const ctl_fuzz_dp;

/* An oracle failed: say what and abort (libFuzzer keeps the input). */
void ctl_fuzz_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* state_render of r; dies on failure. Caller frees. */
char *ctl_fuzz_render(const struct registry *r);
/* Counts, ids, indices and limits of r are consistent. */
void ctl_fuzz_check_registry(const struct registry *r, const struct maglevd_config *cfg);
/* r rendered, parsed back and rendered again gives the same text. */
void ctl_fuzz_roundtrip(const struct registry *r, const struct maglevd_config *cfg);

#endif /* CTL_FUZZ_H */
