// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Update latency, end to end: how long a maglevctl change to a VIP of 1,000
 * backends takes to be live in the datapath. Starts a real maglevd (own pin
 * dir, socket and state file; attached to no interface), loads a VIP with
 * 1,000 backends, then times each change from the request being sent to the
 * answer arriving, the way maglevctl does it, and checks after every answer,
 * through its own handle on the pinned maps, that the live table is the new
 * one. Changes alternate between adding and deleting a 1,001st backend.
 *
 * "paced": one change every 50 ms (an operator or an orchestrator);
 * "burst": changes back to back, each also waiting for the previous swap's
 * kernel grace period to end.
 *
 * Usage: update_bench OUT.json   (root; build/maglevd next to this binary's dir)
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "datapath.h"
#include "bench_clock.h"

#define N_BACKENDS 1000
#define ROUNDS	   200
#define VIP	   "[2001:db8::10]:80/tcp"

static char tdir[256], pin[256], sock[PATH_MAX];
static pid_t daemon_pid;
static uint32_t table[MAGLEV_TABLE_SIZE];

static void cleanup(void)
{
	char cmd[600];

	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", pin, tdir);
	if (tdir[0] && system(cmd))
		fprintf(stderr, "update_bench: cleanup of %s failed\n", tdir);
}

static json_object *req_new(const char *cmd)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "cmd", json_object_new_string(cmd));
	return r;
}

/* Send req; returns the answer (ok) or exits. */
static json_object *must_call(json_object *req)
{
	json_object *resp;
	char err[256];

	if (ctl_call(sock, req, &resp, err, sizeof(err))) {
		fprintf(stderr, "update_bench: %s\n", err);
		exit(1);
	}
	json_object_put(req);
	if (!json_object_get_boolean(json_object_object_get(resp, "ok"))) {
		fprintf(stderr, "update_bench: rejected: %s\n",
			json_object_get_string(json_object_object_get(resp, "error")));
		exit(1);
	}
	return resp;
}

static json_object *backend_req(const char *cmd, int i)
{
	json_object *r = req_new(cmd);
	char addr[64];

	snprintf(addr, sizeof(addr), "2001:db8:1::%x", i);
	json_object_object_add(r, "vip", json_object_new_string(VIP));
	json_object_object_add(r, "backend", json_object_new_string(addr));
	return r;
}

/* Index the daemon gave backend i, or 0. */
static uint32_t backend_index(int i)
{
	json_object *r = req_new("vip.show"), *resp, *list;
	char addr[64];
	uint32_t idx = 0;
	size_t k;

	snprintf(addr, sizeof(addr), "2001:db8:1::%x", i);
	json_object_object_add(r, "vip", json_object_new_string(VIP));
	resp = must_call(r);
	list = json_object_object_get(json_object_object_get(resp, "vip"), "backend_list");
	for (k = 0; k < json_object_array_length(list); k++) {
		json_object *b = json_object_array_get_idx(list, k);

		if (!strcmp(json_object_get_string(json_object_object_get(b, "backend")), addr))
			idx = (uint32_t)json_object_get_int64(json_object_object_get(b, "index"));
	}
	json_object_put(resp);
	return idx;
}

static uint32_t slots_of(struct maglev_dp *dp, uint32_t vip_id, uint32_t idx)
{
	uint32_t i, n = 0;

	if (maglev_dp_table_read(dp, vip_id, table)) {
		fprintf(stderr, "update_bench: cannot read the live table\n");
		exit(1);
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		n += table[i] == idx;
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return v[i];
}

/* ROUNDS changes; returns latencies (ms) in lat, sorted. */
static void run(struct maglev_dp *dp, uint32_t vip_id, double *lat, int pace_ms)
{
	int k;

	for (k = 0; k < ROUNDS; k++) {
		bool add = !(k & 1);
		json_object *req = backend_req(add ? "backend.add" : "backend.del", N_BACKENDS + 1);
		json_object *resp;
		double t0;
		static uint32_t idx;
		uint32_t n;

		t0 = now_ms();
		resp = must_call(req);
		lat[k] = now_ms() - t0;
		json_object_put(resp);
		/* Verify (untimed): the live table is the new one. */
		if (add) {
			idx = backend_index(N_BACKENDS + 1);
			n = slots_of(dp, vip_id, idx);
			if (!idx || n < 30) {
				fprintf(stderr,
					"update_bench: round %d: new backend has %u slots\n", k, n);
				exit(1);
			}
		} else {
			n = slots_of(dp, vip_id, idx);
			if (n) {
				fprintf(stderr,
					"update_bench: round %d: deleted backend still has %u "
					"slots\n",
					k, n);
				exit(1);
			}
		}
		if (pace_ms)
			usleep((useconds_t)pace_ms * 1000);
	}
	qsort(lat, ROUNDS, sizeof(*lat), cmp_double);
}

int main(int argc, char **argv)
{
	static double paced[ROUNDS], burst[ROUNDS];
	char self[PATH_MAX], maglevd[PATH_MAX + 16], conf[PATH_MAX + 16], err[256];
	struct maglev_dp_opts o = {0};
	json_object *batch, *list, *resp;
	struct maglev_dp *dp;
	uint32_t vip_id;
	FILE *f;
	ssize_t n;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.json\n", argv[0]);
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return 1;
	self[n] = '\0';
	/* build/bench/update_bench -> build/maglevd */
	snprintf(maglevd, sizeof(maglevd), "%s/../maglevd", dirname(self));
	snprintf(tdir, sizeof(tdir), "/tmp/maglev-update-bench.XXXXXX");
	if (!mkdtemp(tdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/maglev-bench-%d", (int)getpid());
	snprintf(sock, sizeof(sock), "%s/maglevd.sock", tdir);
	snprintf(conf, sizeof(conf), "%s/maglevd.conf", tdir);
	atexit(cleanup);
	f = fopen(conf, "w");
	if (!f)
		return 1;
	fprintf(f,
		"seed 0123456789abcdef0123456789abcdef\npin_dir %s\nstate_file %s/state.json\n"
		"control_socket %s\nmetrics_listen off\nhealth_check none\nhealth_via_encap no\n"
		"max_backends_per_vip 2000\nlog_level err\n",
		pin, tdir, sock);
	fclose(f);
	daemon_pid = fork();
	if (daemon_pid == 0) {
		execl(maglevd, "maglevd", "-c", conf, (char *)NULL);
		perror(maglevd);
		_exit(127);
	}
	for (i = 0; i < 200; i++) {
		json_object *r;

		usleep(20000);
		if (ctl_call(sock, req_new("status"), &r, err, sizeof(err)) == 0) {
			json_object_put(r);
			break;
		}
	}
	if (i == 200) {
		fprintf(stderr, "update_bench: maglevd did not start: %s\n", err);
		return 1;
	}

	/* The VIP and its 1,000 backends in one batch. */
	batch = req_new("batch");
	list = json_object_new_array();
	{
		json_object *v = req_new("vip.add");

		json_object_object_add(v, "vip", json_object_new_string(VIP));
		json_object_array_add(list, v);
	}
	for (i = 1; i <= N_BACKENDS; i++)
		json_object_array_add(list, backend_req("backend.add", i));
	json_object_object_add(batch, "requests", list);
	json_object_put(must_call(batch));
	resp = must_call(req_new("vip.list"));
	vip_id = (uint32_t)json_object_get_int64(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(resp, "vips"), 0), "id"));
	json_object_put(resp);

	o.pin_dir = pin;
	if (maglev_dp_open(&dp, &o, err, sizeof(err))) {
		fprintf(stderr, "update_bench: opening the pinned maps: %s\n", err);
		return 1;
	}
	run(dp, vip_id, paced, 50);
	run(dp, vip_id, burst, 0);
	maglev_dp_close(dp);

	printf("update latency, VIP with %d backends, table %d slots, %d changes each\n",
	       N_BACKENDS, MAGLEV_TABLE_SIZE, ROUNDS);
	printf("(request sent -> answer received, new table verified live after each)\n");
	printf("%-8s %8s %8s %8s %8s %8s\n", "mode", "min", "p50", "p90", "p99", "max");
	printf("%-8s %8.3f %8.3f %8.3f %8.3f %8.3f  ms\n", "paced", paced[0],
	       pct(paced, ROUNDS, .5), pct(paced, ROUNDS, .9), pct(paced, ROUNDS, .99),
	       paced[ROUNDS - 1]);
	printf("%-8s %8.3f %8.3f %8.3f %8.3f %8.3f  ms\n", "burst", burst[0],
	       pct(burst, ROUNDS, .5), pct(burst, ROUNDS, .9), pct(burst, ROUNDS, .99),
	       burst[ROUNDS - 1]);
	printf("target: <= 5 ms (update_ms_n1000 = paced p50)\n");
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f,
		"{\"update_ms_n1000\": %.3f, \"update_ms_n1000_p99\": %.3f, "
		"\"update_ms_n1000_burst\": %.3f}\n",
		pct(paced, ROUNDS, .5), pct(paced, ROUNDS, .99), pct(burst, ROUNDS, .5));
	fclose(f);
	return 0;
}
