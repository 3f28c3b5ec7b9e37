// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * maglevctl top [VIP] [--by flow|source] [-k N] [-j]: each VIP's heaviest
 * flows or sources, from maglevd's hot-flow estimates (issue 35). On a
 * terminal it refreshes every second until interrupted; with -j, or when
 * stdout is no terminal, one snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maglevctl.h"

static void human(double v, const char *unit, char *buf, size_t len)
{
	static const char *const pfx[] = {"", "k", "M", "G", "T"};
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%.1f%s%s", v, pfx[i], unit);
}

static void print_top(const struct ctl_opts *o, json_object *resp)
{
	json_object *vips = NULL;
	const char *by = jstr(resp, "by");
	bool flow = by && !strcmp(by, "flow");
	size_t i, j;

	if (o->json) {
		printf("%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
		return;
	}
	if (!jbool(resp, "enabled")) {
		printf("hot flows are off (hot_flows on in maglevd.conf, then restart)\n");
		return;
	}
	json_object_object_get_ex(resp, "vips", &vips);
	for (i = 0; vips && i < json_object_array_length(vips); i++) {
		json_object *v = json_object_array_get_idx(vips, i), *top = NULL;
		char pps[32];

		human(jdbl(v, "pps"), "pps", pps, sizeof(pps));
		printf("%s%s  %s (top %ss, sampled 1 in %lld)\n", i ? "\n" : "",
		       jstr(v, "vip") ? jstr(v, "vip") : "?", pps, flow ? "flow" : "source",
		       (long long)jint(resp, "sample_every"));
		printf("  %-4s %-46s %7s %10s %10s  %s\n", "#", flow ? "FLOW" : "SOURCE", "SHARE",
		       "PPS", "BPS", "BACKEND");
		json_object_object_get_ex(v, "top", &top);
		for (j = 0; top && j < json_object_array_length(top); j++) {
			json_object *e = json_object_array_get_idx(top, j);
			const char *src = jstr(e, "source") ? jstr(e, "source") : "?";
			const char *be = jstr(e, "backend") ? jstr(e, "backend") : "-";
			char key[96], p[32], b[32];

			if (flow)
				snprintf(key, sizeof(key),
					 strchr(src, ':') ? "[%s]:%lld %s/%lld" : "%s:%lld %s/%lld",
					 src, (long long)jint(e, "sport"),
					 jstr(e, "proto") ? jstr(e, "proto") : "?",
					 (long long)jint(e, "dport"));
			else
				snprintf(key, sizeof(key), "%s", src);
			human(jdbl(e, "pps"), "", p, sizeof(p));
			human(jdbl(e, "bps"), "", b, sizeof(b));
			printf("  %-4zu %-46s %6.1f%% %10s %10s  %s\n", j + 1, key,
			       jdbl(e, "share") * 100, p, b, be);
		}
	}
}

int cmd_top(const struct ctl_opts *o, int argc, char **argv, int (*usage)(const char *msg))
{
	const char *vip = NULL, *by = "flow";
	long long k = 10;
	bool watch;
	int i, rc;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i])) {
			help_topic(stdout, "top", NULL);
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "--by") || !strcmp(argv[i], "-k")) {
			char *end;

			if (i + 1 >= argc)
				return usage(!strcmp(argv[i], "--by")
						     ? "top: --by wants flow or source"
						     : "top: -k wants a number");
			if (!strcmp(argv[i], "--by")) {
				by = argv[++i];
				if (strcmp(by, "flow") && strcmp(by, "source"))
					return usage("top: --by wants flow or source");
				continue;
			}
			errno = 0;
			k = strtoll(argv[++i], &end, 10);
			if (errno || *end || k < 1 || k > 100)
				return usage("top: -k wants a number from 1 to 100");
		} else if (argv[i][0] == '-') {
			return usage("top: unknown option");
		} else if (!vip) {
			vip = argv[i];
		} else {
			return usage("top: too many arguments");
		}
	}
	watch = !o->json && isatty(STDOUT_FILENO);
	do {
		json_object *req = json_object_new_object();

		json_object_object_add(req, "cmd", json_object_new_string("top"));
		if (vip)
			json_object_object_add(req, "vip", json_object_new_string(vip));
		json_object_object_add(req, "by", json_object_new_string(by));
		json_object_object_add(req, "k", json_object_new_int((int)k));
		if (watch)
			printf("\033[H\033[2J");
		rc = run_request(o, req, print_top);
		if (rc || !watch)
			return rc;
		rc = watch_pause();
	} while (rc < 0);
	return rc;
}
