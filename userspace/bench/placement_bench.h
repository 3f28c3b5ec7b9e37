/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef MAGLEV_PLACEMENT_BENCH_H
#define MAGLEV_PLACEMENT_BENCH_H

#include <stddef.h>
#include <json-c/json.h>
#include "maglev_table.h"

/* Backend first + i of the synthetic fleet, for i < n (table_bench.c). */
void bench_fleet(struct maglev_backend_spec *be, size_t n, size_t first);
/* The placement figures (issue 19): printed, and added to o. */
void placement_bench(struct json_object *o);

#endif /* MAGLEV_PLACEMENT_BENCH_H */
