/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The test fixture's data, FIXTURE_DATA(fz), and its counters. Defined here
 * rather than with FIXTURE() so that the helpers can take self: they are in
 * files without kselftest_harness.h, which holds the test runner and is
 * included once, by kmod_nl_fuzz.c (that registers the fixture). The
 * definition of FIXTURE_DATA() is the harness's own.
 */
#ifndef NL_FUZZ_FIXTURE_H
#define NL_FUZZ_FIXTURE_H

#include <stdint.h>
#include <time.h>
#include "base.h"
#include "gen.h"
#include "snap.h"
#include "sock.h"

#ifndef FIXTURE_DATA
#define FIXTURE_DATA(datatype_name) struct _test_data_##datatype_name
#endif

#define FZ_NCMD 256

struct fz_stats {
	unsigned int sent[FZ_NCMD], acked[FZ_NCMD], rejected[FZ_NCMD], silent[FZ_NCMD];
	unsigned int err_einval, err_erange, err_enoent, err_estale, err_eopnotsupp, err_enodata;
	unsigned int err_other;
	unsigned int checks, rejected_total, reads_total, changes, resyncs;
};

FIXTURE_DATA(fz)
{
	struct slowpath_nl *nl;
	struct fz_sock s;
	struct fz_base base;
	struct fz_snap ref, cur, base_snap;
	struct fz_gen g;
	struct fz_stats st;
	unsigned int changes_since_reset;
	struct timespec t0;
	int kmsg;
	uint8_t buf[FZ_BUF];
};

#endif /* NL_FUZZ_FIXTURE_H */
