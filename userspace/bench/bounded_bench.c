// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bounded loads' balance (make bench), through the real datapath with
 * BPF_PROG_TEST_RUN: connection lifetimes skewed so that one backend
 * accumulates flows. Every tick (what maglevd's 100 ms tick does) starts
 * NEW_PER_TICK new TCP flows (a SYN each); a flow that landed on backend 1
 * lives to the end of the run, any other ends SHORT_TICKS ticks later (a
 * client RST; tcp_closed_ns is 1 ns here, so it is gone at once). Before
 * each tick's flows, the connection table is counted
 * (userspace/lib/conn_census.c, as maglevd does) and, with a factor, every
 * backend at or over ceil(C * mean load) is marked over cap, as
 * userspace/maglevd/datapath/bounded.c does. The same flows run without a factor
 * and with 1.25, one after the other in one run.
 *
 * Reported: the busiest backend's live flows over the mean, at the end and
 * averaged over the ticks after WARMUP; the share of new flows spilled. The
 * new-flow ns/packet with the feature on and off is xdp_bench's
 * (xdp_ns_newflow_v4, xdp_ns_newflow_v4_bounded, same make bench run).
 *
 * Usage: bounded_bench OUT.json
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <json-c/json.h>
#include "conn_census.h"
#include "datapath.h"
#include "maglev_table.h"
#include "pkt.h"

#define NBE	     10
#define TICKS	     200
#define WARMUP	     50
#define NEW_PER_TICK 20
#define SHORT_TICKS  10
#define VIP_ID	     1

struct flow_rec {
	struct flow f;
	int be;	  /* 1..NBE, 0: not forwarded */
	int ends; /* the tick whose start ends it; -1: never */
};

struct result {
	double max_over_mean_end, max_over_mean_avg, spill_share, max_end, mean_end;
	uint64_t new_flows, spilled;
};

static uint8_t be_addr[NBE + 1][4];

/* Which backend a client frame of f (flags) went to; 0 if not forwarded. */
static int send_flow(int prog, const struct flow *f, uint8_t flags)
{
	struct client_opts co = {.tcp_flags = flags};
	uint8_t in[256], out[512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	int i;

	o.data_size_in = (uint32_t)build_client(in, f, &co);
	if (bpf_prog_test_run_opts(prog, &o) || o.retval != XDP_TX || o.data_size_out < 34)
		return 0;
	for (i = 1; i <= NBE; i++)
		if (!memcmp(out + 14 + 16, be_addr[i], 4))
			return i;
	return 0;
}

static int setup(struct maglev_dp **dpp, char *err, size_t errlen)
{
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = 1 << 16, .tcp_closed_ns = 1};
	struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};
	struct maglev_vip_info info = {.vip_id = VIP_ID, .encap = MAGLEV_ENCAP_IPIP};
	struct maglev_vip_key k = {.family = P_AF4, .port = htons(80), .proto = IPPROTO_TCP};
	static uint32_t table[MAGLEV_TABLE_SIZE];
	struct maglev_backend_spec spec[NBE];
	struct maglev_config cfg;
	struct maglev_err merr;
	struct maglev_dp *dp;
	int i, ret;

	ret = maglev_dp_open(dpp, &o, err, errlen);
	if (ret)
		return ret;
	dp = *dpp;
	memset(&cfg, 0, sizeof(cfg));
	cfg.seed_k0 = seed.k0;
	cfg.seed_k1 = seed.k1;
	memcpy(cfg.nexthop_mac, MAC_NEXTHOP, 6);
	memcpy(cfg.src_mac, MAC_LB, 6);
	cfg.src4_prefix = htonl(0xc6336480); /* 198.51.100.128/25 */
	cfg.src4_plen = 25;
	ret = maglev_dp_set_config(dp, &cfg);
	if (ret)
		return ret;
	memset(spec, 0, sizeof(spec));
	for (i = 1; i <= NBE; i++) {
		struct maglev_backend b = {.family = P_AF4, .flags = MAGLEV_BACKEND_F_UP};

		be_addr[i][0] = 192, be_addr[i][1] = 0, be_addr[i][2] = 2;
		be_addr[i][3] = (uint8_t)(20 + i);
		memcpy(b.addr, be_addr[i], 4);
		memcpy(spec[i - 1].addr, be_addr[i], 4);
		spec[i - 1].family = P_AF4;
		spec[i - 1].weight = 1;
		ret = maglev_dp_backend_set(dp, (uint32_t)i, &b);
		if (ret)
			return ret;
	}
	ret = maglev_table_build(&seed, spec, NBE, MAGLEV_TABLE_SIZE, table, &merr);
	if (ret) {
		snprintf(err, errlen, "table build: %s", merr.msg);
		return ret;
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		table[i]++;
	k.addr[0] = htonl(0xcb00710a); /* 203.0.113.10 */
	ret = maglev_dp_vip_set(dp, &k, &info);
	return ret ? ret : maglev_dp_table_swap(dp, VIP_ID, table);
}

/* Flow n: 198.51.100.x clients, many source ports. */
static void nth_flow(int n, struct flow *f)
{
	memset(f, 0, sizeof(*f));
	f->family = P_AF4;
	f->proto = IPPROTO_TCP;
	f->src[0] = 198, f->src[1] = 51, f->src[2] = 100, f->src[3] = (uint8_t)(1 + n / 50000);
	f->dst[0] = 203, f->dst[1] = 0, f->dst[2] = 113, f->dst[3] = 10;
	f->sport = (uint16_t)(10000 + n % 50000);
	f->dport = 80;
}

/* One run of TICKS ticks; milli: the balance factor in thousandths, 0: off. */
static int run(struct maglev_dp *dp, uint32_t milli, struct result *res)
{
	static struct flow_rec fl[TICKS * NEW_PER_TICK];
	static struct conn_census c;
	int prog = maglev_dp_prog_fd(dp), t, i, n = 0, be;
	uint64_t sp0 = 0, sp1 = 0, total, mx;
	double sum_ratio = 0;
	int samples = 0;

	memset(res, 0, sizeof(*res));
	maglev_dp_conn_flush(dp);
	for (be = 1; be <= NBE; be++)
		if (maglev_dp_overcap_set(dp, (uint32_t)be, false))
			return -1;
	maglev_dp_vip_spilled(dp, VIP_ID, &sp0);
	for (t = 0; t <= TICKS; t++) {
		/* Flows whose time is up end (client RST). */
		for (i = 0; i < n; i++)
			if (fl[i].ends == t && fl[i].be &&
			    send_flow(prog, &fl[i].f, 0x14) != fl[i].be)
				return -1;
		if (maglev_conn_census(dp, &c))
			return -1;
		total = mx = 0;
		for (be = 1; be <= NBE; be++) {
			total += c.per_backend[be];
			if (c.per_backend[be] > mx)
				mx = c.per_backend[be];
		}
		if (t >= WARMUP && total) {
			sum_ratio += (double)mx * NBE / (double)total;
			samples++;
		}
		if (t == TICKS) {
			res->max_end = (double)mx;
			res->mean_end = (double)total / NBE;
			res->max_over_mean_end = total ? (double)mx * NBE / (double)total : 0;
			break;
		}
		if (milli && total) {
			uint64_t cap = ((uint64_t)milli * total + 1000 * NBE - 1) / (1000 * NBE);

			for (be = 1; be <= NBE; be++)
				if (maglev_dp_overcap_set(dp, (uint32_t)be,
							  c.per_backend[be] >= cap))
					return -1;
		}
		for (i = 0; i < NEW_PER_TICK; i++, n++) {
			nth_flow(n, &fl[n].f);
			fl[n].be = send_flow(prog, &fl[n].f, 0x02);
			if (!fl[n].be)
				return -1;
			fl[n].ends = fl[n].be == 1 ? -1 : t + SHORT_TICKS;
		}
	}
	maglev_dp_vip_spilled(dp, VIP_ID, &sp1);
	res->new_flows = (uint64_t)n;
	res->spilled = sp1 - sp0;
	res->spill_share = (double)res->spilled / (double)n;
	res->max_over_mean_avg = samples ? sum_ratio / samples : 0;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *key;
		uint32_t milli;
	} cases[] = {{"off", 0}, {"1_25", 1250}};
	struct json_object *js;
	struct maglev_dp *dp = NULL;
	char err[256] = "", key[96];
	struct result r;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.json\n", argv[0]);
		return 2;
	}
	if (setup(&dp, err, sizeof(err))) {
		fprintf(stderr, "bounded_bench: set-up: %s\n", err[0] ? err : strerror(errno));
		return 1;
	}
	js = json_object_new_object();
	printf("bounded loads, %d backends, %d new flows per tick, %d ticks; flows on backend 1 "
	       "live "
	       "to the end, others %d ticks\n",
	       NBE, NEW_PER_TICK, TICKS, SHORT_TICKS);
	printf("%-8s %10s %10s %14s %14s %12s\n", "factor", "max end", "mean end", "max/mean end",
	       "max/mean avg", "spilled");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (run(dp, cases[i].milli, &r)) {
			fprintf(stderr, "bounded_bench: run %s: a packet was not forwarded\n",
				cases[i].key);
			return 1;
		}
		printf("%-8s %10.0f %10.1f %14.2f %14.2f %5.1f%% (%llu)\n", cases[i].key, r.max_end,
		       r.mean_end, r.max_over_mean_end, r.max_over_mean_avg, r.spill_share * 100,
		       (unsigned long long)r.spilled);
		snprintf(key, sizeof(key), "bounded_max_over_mean_end_%s", cases[i].key);
		json_object_object_add(js, key, json_object_new_double(r.max_over_mean_end));
		snprintf(key, sizeof(key), "bounded_max_over_mean_avg_%s", cases[i].key);
		json_object_object_add(js, key, json_object_new_double(r.max_over_mean_avg));
		snprintf(key, sizeof(key), "bounded_spill_share_%s", cases[i].key);
		json_object_object_add(js, key, json_object_new_double(r.spill_share));
	}
	maglev_dp_close(dp);
	if (json_object_to_file_ext(argv[1], js, JSON_C_TO_STRING_PLAIN)) {
		fprintf(stderr, "bounded_bench: write %s\n", argv[1]);
		return 1;
	}
	json_object_put(js);
	return 0;
}
