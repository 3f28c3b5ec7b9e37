// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Names of the datapath's reason and connection-table counters (defined once
 * in include/maglev_maps.h). Apart from dp_load.c so that code without the
 * BPF objects (maglevd's request fuzzer) names them the same way.
 */
#include <stdint.h>
#include "datapath.h"

const char *maglev_dp_reason_name(uint32_t reason)
{
	static const char *const names[MAGLEV_REASON_MAX] = MAGLEV_REASON_NAMES;

	return reason < MAGLEV_REASON_MAX ? names[reason] : "unknown";
}

const char *maglev_dp_counter_name(uint32_t ctr)
{
	static const char *const names[MAGLEV_CTR_MAX] = MAGLEV_COUNTER_NAMES;

	return ctr < MAGLEV_CTR_MAX ? names[ctr] : "unknown";
}
