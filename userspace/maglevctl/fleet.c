// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fleet status: every live balancer of the fleet as the local maglevd read
 * their status keys from etcd, whether they agree (one revision, tables
 * digest and seed fingerprint), and an exit status a monitor can use.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maglevctl.h"

/* health_scope fleet: each backend's view by balancer, the fleet's verdict
 * and what this balancer applied, a line each.
 */
static void print_fleet_health(json_object *resp)
{
	json_object *h, *views;
	size_t k, n;

	if (!jstr(resp, "health_scope") || strcmp(jstr(resp, "health_scope"), "fleet") ||
	    !json_object_object_get_ex(resp, "health", &h))
		return;
	n = json_object_array_length(h);
	printf("health_scope fleet: a backend is out when more than half of the voters see it "
	       "down\n");
	for (k = 0; k < n; k++) {
		json_object *b = json_object_array_get_idx(h, k);

		printf("%s %s", jstr(b, "vip") ? jstr(b, "vip") : "?",
		       jstr(b, "backend") ? jstr(b, "backend") : "?");
		if (json_object_object_get_ex(b, "views", &views)) {
			json_object_object_foreach(views, node, val)
			{
				printf(" %s=%s", node, json_object_get_string(val));
			}
		}
		printf(": fleet %s (%" PRId64 " of %" PRId64 " down), applied %s\n",
		       jstr(b, "fleet") ? jstr(b, "fleet") : "none", jint(b, "down_votes"),
		       jint(b, "voters"), jstr(b, "applied") ? jstr(b, "applied") : "?");
	}
}

int cmd_fleet(const struct ctl_opts *o, int argc, char **argv)
{
	json_object *req, *resp, *nodes;
	double settle = 10;
	int i, rc;
	size_t n, k;

	if (argc < 1 || strcmp(argv[0], "status")) {
		if (argc >= 1 && is_help(argv[0])) {
			help_topic(stdout, "fleet", NULL);
			return EXIT_OK;
		}
		fprintf(stderr, "maglevctl: fleet: want 'fleet status'\n");
		help_topic(stderr, "fleet", NULL);
		return EXIT_USAGE;
	}
	for (i = 1; i < argc; i++) {
		char *end;

		if (is_help(argv[i])) {
			help_topic(stdout, "fleet", NULL);
			return EXIT_OK;
		}
		if (strcmp(argv[i], "--settle") || i + 1 == argc) {
			fprintf(stderr, "maglevctl: fleet status: unexpected argument '%s'\n",
				argv[i]);
			help_topic(stderr, "fleet", NULL);
			return EXIT_USAGE;
		}
		errno = 0;
		settle = strtod(argv[++i], &end);
		if (errno || *end || end == argv[i] || settle < 0) {
			fprintf(stderr,
				"maglevctl: fleet status: --settle: not a number of seconds "
				"'%s'\n",
				argv[i]);
			return EXIT_USAGE;
		}
	}
	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("fleet.status"));
	resp = call(o, req, &rc);
	if (!resp)
		return rc;
	n = json_object_object_get_ex(resp, "nodes", &nodes) ? json_object_array_length(nodes) : 0;
	/* Disagreeing for longer than the settle time (a change landing on the
	 * balancers one after the other disagrees for a moment), or no status.
	 */
	rc = !n || (!jbool(resp, "agree") && jint(resp, "disagree_ms") > (int64_t)(settle * 1000))
		     ? EXIT_REJECTED
		     : EXIT_OK;
	/* A balancer whose datapath differs from its own registry: the digests hide it. */
	for (k = 0; k < n; k++)
		if (jint(json_object_array_get_idx(nodes, k), "datapath_drift") > 0)
			rc = EXIT_REJECTED;
	if (o->json) {
		printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
		json_object_put(resp);
		return rc;
	}
	printf("%zu balancer%s, %s", n, n == 1 ? "" : "s",
	       jbool(resp, "agree") ? "agree" : "DISAGREE");
	if (!jbool(resp, "agree") && jint(resp, "disagree_ms"))
		printf(" for %.1f s", (double)jint(resp, "disagree_ms") / 1000);
	printf("\n");
	if (jstr(resp, "error"))
		printf("etcd: %s\n", jstr(resp, "error"));
	printf("%-20s %-10s %-16s %-16s %-9s %-9s %s\n", "NODE", "REVISION", "TABLES DIGEST",
	       "SEED FINGERPRINT", "ETCD", "DATAPATH", "VERSION");
	for (k = 0; k < n; k++) {
		json_object *v = json_object_array_get_idx(nodes, k);

		char dp[24];

		snprintf(dp, sizeof(dp), "%" PRId64 " DRIFT", jint(v, "datapath_drift"));
		printf("%-20s %-10" PRId64 " %-16s %-16s %-9s %-9s %s\n",
		       jstr(v, "node") ? jstr(v, "node") : "?", jint(v, "revision"),
		       jstr(v, "vips_digest") ? jstr(v, "vips_digest") : "?",
		       jstr(v, "seed_fingerprint") ? jstr(v, "seed_fingerprint") : "?",
		       jbool(v, "connected") ? "connected" : "DISCONN",
		       jint(v, "datapath_drift") > 0 ? dp : "agrees",
		       jstr(v, "version") ? jstr(v, "version") : "?");
	}
	print_fleet_health(resp);
	json_object_put(resp);
	return rc;
}
