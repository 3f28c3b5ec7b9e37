// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the slow-path module holds, for the maglevd mirror test:
 *   slowpath_query vips                  one line per VIP: VIP TABLE_GEN|-
 *   slowpath_query lookup VIP SRC:SPORT [N]
 *       the backend index the module picks, the table generation and the
 *       slot's previous owner (0: none); with N, one line for each of the
 *       ports SPORT..SPORT+N-1 (one exec: fast enough inside a short
 *       second-chance window under TCG)
 *   slowpath_query overcap [IDX...]     replace the module's bounded-load
 *       marks with exactly these backend indices (none: clear them)
 * Runs in the network namespace whose module state it reads.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "slowpath_nl.h"

int main(int argc, char **argv)
{
	struct slowpath_vip_state list[MAGLEV_MAX_VIPS];
	char err[256], name[CTL_ADDR_STRLEN];
	struct slowpath_nl *nl;
	int n, i, r;

	if (argc < 2 || slowpath_nl_open(&nl)) {
		fprintf(stderr,
			"usage: slowpath_query vips | lookup VIP SRC:SPORT [N] | overcap [IDX...] "
			"(module loaded)\n");
		return 2;
	}
	if (!strcmp(argv[1], "vips")) {
		n = slowpath_nl_vip_list(nl, list, MAGLEV_MAX_VIPS);
		if (n < 0) {
			fprintf(stderr, "%s\n", slowpath_nl_errmsg(nl));
			return 1;
		}
		for (i = 0; i < n && i < MAGLEV_MAX_VIPS; i++) {
			ctl_format_vip(&list[i].key, name, sizeof(name));
			if (list[i].has_table)
				printf("%s %" PRIu64 "\n", name, list[i].table_gen);
			else
				printf("%s -\n", name);
		}
		return 0;
	}
	if (!strcmp(argv[1], "lookup") && (argc == 4 || argc == 5)) {
		struct maglev_flow_key fk = {0};
		struct maglev_vip_key key;
		struct slowpath_lookup out;
		struct ctl_addr src;
		uint16_t sport;
		int count = argc == 5 ? atoi(argv[4]) : 1, k;
		bool any;

		if (ctl_parse_vip(argv[2], &key, &any, err, sizeof(err)) ||
		    ctl_parse_endpoint(argv[3], &src, &sport, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
		memcpy(fk.src, src.addr, sizeof(fk.src));
		memcpy(fk.dst, key.addr, sizeof(fk.dst));
		fk.dport = key.port;
		fk.proto = key.proto;
		fk.family = key.family;
		for (k = 0; k < count; k++) {
			fk.sport = htons((uint16_t)(sport + k));
			r = slowpath_nl_lookup(nl, &fk, &out);
			if (r) {
				fprintf(stderr, "%s\n", slowpath_nl_errmsg(nl));
				return 1;
			}
			printf("%u %" PRIu64 " %u\n", out.backend_idx, out.table_gen, out.prev_idx);
		}
		return 0;
	}
	if (!strcmp(argv[1], "overcap")) {
		static uint8_t marked[MAGLEV_MAX_BACKENDS];

		for (i = 2; i < argc; i++) {
			long idx = strtol(argv[i], NULL, 10);

			if (idx < 1 || idx >= MAGLEV_MAX_BACKENDS) {
				fprintf(stderr, "%s: not a backend index\n", argv[i]);
				return 2;
			}
			marked[idx] = 1;
		}
		r = slowpath_nl_overcap_set(nl, marked, MAGLEV_MAX_BACKENDS);
		if (r) {
			fprintf(stderr, "%s\n", slowpath_nl_errmsg(nl));
			return 1;
		}
		return 0;
	}
	fprintf(stderr,
		"usage: slowpath_query vips | lookup VIP SRC:SPORT [N] | overcap [IDX...]\n");
	return 2;
}
