// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: the state file maglevd reads at start (state_parse, the
 * parser state_load runs), with the registry code it fills.
 *
 * Oracles, besides ASan/UBSan/LSan: an accepted file gives a consistent
 * registry (ids, counts, indices, limits), and writing it back and reading
 * that again gives the same state (ctl_fuzz_roundtrip).
 */
#include <stdlib.h>

#include "ctl_fuzz.h"
#include "core/log.h"

static struct maglevd_config cfg;

/* The daemon's commit is never reached from the state parser. */
int daemon_commit(struct daemon *d, struct registry *next, enum commit_source src, char *err,
		  size_t errlen)
{
	ctl_fuzz_die("daemon_commit called by the state parser");
}

int daemon_commit_then(struct daemon *d, struct registry *next, enum commit_source src,
		       commit_done_fn done, void *arg, char *err, size_t errlen)
{
	ctl_fuzz_die("daemon_commit_then called by the state parser");
}

bool daemon_commit_busy(void)
{
	return false;
}

/* Commits here are written at once: the newest registry is the datapath's. */
const struct registry *daemon_applied(const struct daemon *d)
{
	return d->reg;
}

void daemon_commit_barrier(struct daemon *d, commit_done_fn done, void *arg)
{
	ctl_fuzz_die("daemon_commit_barrier called by the state parser");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init();
	log_set_level(LOG_ERR);
	config_defaults(&cfg);
	/* Low limits, so that inputs can reach them. */
	cfg.max_vips = 8;
	cfg.max_backends_per_vip = 8;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct registry_ctx ctx = {.dp = NULL, .cfg = &cfg};
	struct registry *r = NULL;
	char err[400] = "";

	if (state_parse((const char *)data, size, &ctx, &r, err, sizeof(err))) {
		if (r)
			ctl_fuzz_die("rejected state file but a registry came back");
		if (!err[0])
			ctl_fuzz_die("rejected state file without a reason");
		return 0;
	}
	if (!r)
		ctl_fuzz_die("accepted state file but no registry");
	ctl_fuzz_roundtrip(r, &cfg);
	registry_free(r);
	return 0;
}
