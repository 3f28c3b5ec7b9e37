// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hot flows' accuracy offline (issue 35): Zipf traffic over NFLOWS flows of
 * one VIP, spread over NCPU CPUs by flow (as RSS does), through the very
 * update the XDP program runs (include/maglev_hot.h), merged as maglevd
 * merges (max over a CPU's rows, sum over CPUs, times sample_every), and
 * compared with exact counts: precision and recall of the top 10 and the
 * top 100, and the error of the estimated share of the flows holding about
 * 1 % and 0.1 % of the VIP. Figures: docs/benchmarks.md "Hot flows".
 *
 * Usage: hot_accuracy [OUT.json]   (built for MAGLEV_HOT_COLS 64, and as
 * hot_accuracy_256 for 256, the width it was measured against)
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "maglev_conn.h"
#include "maglev_hot.h"

#define NFLOWS 100000
#define NPKTS  4000000
#define NCPU   4
#define MAXTOP 100
#define NTRACK (NCPU * MAGLEV_HOT_BUCKETS)

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void flow_key(struct maglev_flow_key *k, uint32_t i)
{
	memset(k, 0, sizeof(*k));
	k->family = MAGLEV_AF_INET;
	k->proto = 6;
	k->src[0] = 0x0a000000 + i / 50; /* 50 flows per client address */
	k->dst[0] = 0xc0000201;
	k->sport = (uint16_t)(10000 + i % 50);
	k->dport = 80;
}

struct est {
	uint32_t flow;
	double pkts;
};

static int cmp_est(const void *a, const void *b)
{
	const struct est *x = a, *y = b;

	return x->pkts < y->pkts ? 1 : x->pkts > y->pkts ? -1 : 0;
}

struct result {
	double prec[2], rec[2], err1, rel1, err01, rel01;
	int n1, n01;
};

/*
 * The structures compared, at about the same memory per VIP, CPU and kind
 * (flows here; sources take as much again):
 * - HeavyKeeper, 2 x MAGLEV_HOT_COLS buckets of 56 bytes (7 KiB at 64):
 *   the datapath's (include/maglev_hot.h);
 * - count-min, 2 x CMS_W 32-bit counters, with a table of CMS_C candidate
 *   flows (key and estimate: 48 bytes) whose lowest the next flow estimated
 *   higher replaces (6.3 KiB): each sample also looks through the
 *   candidates, CMS_C key compares in the datapath;
 * - a one-row majority vote, MAJ_B buckets of 56 bytes (7 KiB): a key's
 *   count goes up, another's takes one off, at 0 it takes the bucket.
 */
enum structure { S_HEAVYKEEPER, S_COUNTMIN, S_MAJORITY, S_MAX };
static const char *const s_name[S_MAX] = {"heavykeeper", "countmin", "majority"};
#define CMS_W 512
#define CMS_C 48
#define MAJ_B (2 * MAGLEV_HOT_COLS)

struct countmin {
	uint32_t cnt[2][CMS_W];
	uint32_t flow[CMS_C], est[CMS_C];
	int n;
};

struct majority {
	uint32_t flow[MAJ_B], count[MAJ_B];
};

static void countmin_add(struct countmin *m, uint32_t f, uint64_t h)
{
	uint32_t a = ++m->cnt[0][h % CMS_W], b = ++m->cnt[1][(h >> 32) % CMS_W];
	uint32_t est = a < b ? a : b;
	int i, lo = 0;

	for (i = 0; i < m->n; i++)
		if (m->flow[i] == f) {
			m->est[i] = est;
			return;
		}
	if (m->n < CMS_C) {
		m->flow[m->n] = f;
		m->est[m->n++] = est;
		return;
	}
	for (i = 1; i < m->n; i++)
		if (m->est[i] < m->est[lo])
			lo = i;
	if (est > m->est[lo]) {
		m->flow[lo] = f;
		m->est[lo] = est;
	}
}

static void majority_add(struct majority *m, uint32_t f, uint64_t h)
{
	uint32_t b = (uint32_t)(h % MAJ_B);

	if (m->count[b] && m->flow[b] == f)
		m->count[b]++;
	else if (m->count[b])
		m->count[b]--;
	else {
		m->flow[b] = f;
		m->count[b] = 1;
	}
}

/* Add n sampled packets of flow f to the estimates e[0..*ne). */
static void est_add(struct est *e, int *ne, uint32_t f, double n)
{
	int j;

	for (j = 0; j < *ne && e[j].flow != f; j++)
		;
	if (j == *ne)
		e[(*ne)++] = (struct est){f, 0};
	e[j].pkts += n;
}

static void run(enum structure st, double s, uint32_t every, struct result *res)
{
	static struct maglev_hot_vip v[NCPU];
	static struct countmin cm[NCPU];
	static struct majority mj[NCPU];
	static uint64_t exact[NFLOWS];
	static double cdf[NFLOWS];
	static struct est e[NFLOWS];
	static struct maglev_flow_key keys[NFLOWS];
	static uint64_t fh[NFLOWS];
	uint32_t countdown[NCPU], i, c;
	double sum = 0;
	int ne = 0, k, t;

	memset(v, 0, sizeof(v));
	memset(cm, 0, sizeof(cm));
	memset(mj, 0, sizeof(mj));
	memset(exact, 0, sizeof(exact));
	for (i = 0; i < NFLOWS; i++) {
		sum += pow(i + 1, -s);
		cdf[i] = sum;
		flow_key(&keys[i], i);
		fh[i] = maglev_conn_hash(&keys[i], 0x1234);
	}
	for (c = 0; c < NCPU; c++)
		countdown[c] = 1;
	for (i = 0; i < NPKTS; i++) {
		double u = (double)(xorshift() >> 11) / 9007199254740992.0 * sum;
		uint32_t lo = 0, hi = NFLOWS - 1, f;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* The flow's id is shuffled against its rank, so rank order
		 * does not follow hash order.
		 */
		f = (uint32_t)(((uint64_t)lo * 7919) % NFLOWS);
		exact[f]++;
		c = (uint32_t)(fh[f] >> 58) % NCPU; /* RSS: a flow stays on one CPU */
		if (--countdown[c])
			continue;
		/* As the datapath: random gaps of 1 to 2 * every - 1. */
		countdown[c] = every > 1 ? 1 + (uint32_t)(xorshift() % (2 * every - 1)) : 1;
		if (st == S_HEAVYKEEPER)
			maglev_hot_sample(&v[c], &keys[f], fh[f],
					  maglev_hot_src_hash(keys[f].src, 0x5678), 100, 1,
					  (uint32_t)xorshift());
		else if (st == S_COUNTMIN)
			countmin_add(&cm[c], f, fh[f]);
		else
			majority_add(&mj[c], f, fh[f]);
	}
	/* Merge: per CPU the larger of the rows' counts, summed over CPUs. */
	for (c = 0; c < NCPU && st == S_COUNTMIN; c++)
		for (k = 0; k < cm[c].n; k++)
			est_add(e, &ne, cm[c].flow[k], (double)cm[c].est[k] * every);
	for (c = 0; c < NCPU && st == S_MAJORITY; c++)
		for (k = 0; k < MAJ_B; k++)
			if (mj[c].count[k])
				est_add(e, &ne, mj[c].flow[k], (double)mj[c].count[k] * every);
	for (c = 0; c < NCPU && st == S_HEAVYKEEPER; c++) {
		for (k = 0; k < MAGLEV_HOT_BUCKETS; k++) {
			const struct maglev_hot_flow *b = &v[c].flow[k];
			uint32_t f = b->key.src[0] - 0x0a000000;
			int j, dup = 0;

			if (!b->count)
				continue;
			f = f * 50 + (b->key.sport - 10000);
			/* The other row's bucket of the same key on this CPU. */
			for (j = 0; j < MAGLEV_HOT_BUCKETS; j++)
				if (j != k && v[c].flow[j].count &&
				    maglev_hot_flow_eq(&v[c].flow[j].key, &b->key) &&
				    (v[c].flow[j].count > b->count ||
				     (v[c].flow[j].count == b->count && j < k)))
					dup = 1;
			if (!dup)
				est_add(e, &ne, f, (double)b->count * every);
		}
	}
	qsort(e, ne, sizeof(e[0]), cmp_est);
	/* Exact ranks. */
	{
		static struct est x[NFLOWS];
		static double est_of[NFLOWS];
		int tops[2] = {10, 100};

		for (i = 0; i < NFLOWS; i++)
			x[i] = (struct est){i, (double)exact[i]};
		qsort(x, NFLOWS, sizeof(x[0]), cmp_est);
		memset(est_of, 0, sizeof(est_of));
		for (k = 0; k < ne; k++)
			est_of[e[k].flow] = e[k].pkts;
		for (t = 0; t < 2; t++) {
			int hit = 0, m = ne < tops[t] ? ne : tops[t];

			for (k = 0; k < m; k++)
				for (int j = 0; j < tops[t]; j++)
					if (x[j].flow == e[k].flow)
						hit++;
			res->prec[t] = m ? (double)hit / m : 0;
			res->rec[t] = (double)hit / tops[t];
		}
		/* Share errors, in percentage points and relative, for flows
		 * holding 0.5-2 % and 0.05-0.2 %.
		 */
		memset(&res->err1, 0, sizeof(*res) - offsetof(struct result, err1));
		for (i = 0; i < NFLOWS; i++) {
			double share = x[i].pkts / NPKTS, est = est_of[x[i].flow] / NPKTS;

			if (share >= 0.005 && share <= 0.02) {
				res->err1 += fabs(est - share) * 100;
				res->rel1 += fabs(est - share) / share;
				res->n1++;
			} else if (share >= 0.0005 && share <= 0.002) {
				res->err01 += fabs(est - share) * 100;
				res->rel01 += fabs(est - share) / share;
				res->n01++;
			}
		}
		if (res->n1) {
			res->err1 /= res->n1;
			res->rel1 /= res->n1;
		}
		if (res->n01) {
			res->err01 /= res->n01;
			res->rel01 /= res->n01;
		}
	}
}

int main(int argc, char **argv)
{
	double ss[2] = {0.8, 1.2};
	uint32_t everys[3] = {1, 16, 64};
	struct json_object *js = json_object_new_object();
	char key[96];
	int i, j, st;

	printf("hot flows accuracy: %d flows, %d packets, %d CPUs, heavykeeper %d x %d buckets "
	       "(%zu B per VIP per CPU, flows and sources)\n",
	       NFLOWS, NPKTS, NCPU, MAGLEV_HOT_ROWS, MAGLEV_HOT_COLS,
	       sizeof(struct maglev_hot_vip));
	printf("  %-12s %-4s %-6s %-17s %-17s %-22s %-22s\n", "structure", "s", "1/N",
	       "top10 prec/rec", "top100 prec/rec", "1% flows: err pp/rel",
	       "0.1% flows: err pp/rel");
	for (st = 0; st < S_MAX; st++)
		for (i = 0; i < 2; i++)
			for (j = 0; j < 3; j++) {
				struct result r;

				/* The others at the default rate only. */
				if (st != S_HEAVYKEEPER && everys[j] != MAGLEV_HOT_SAMPLE_DEFAULT)
					continue;
				run(st, ss[i], everys[j], &r);
				printf("  %-12s %-4.1f %-6u %5.2f / %-9.2f %5.2f / %-9.2f %6.3f / "
				       "%-5.1f%% (%2d)  %6.4f / %-5.1f%% (%3d)\n",
				       s_name[st], ss[i], everys[j], r.prec[0], r.rec[0], r.prec[1],
				       r.rec[1], r.err1, r.rel1 * 100, r.n1, r.err01, r.rel01 * 100,
				       r.n01);
#define PUT(name, val)                                                                             \
	do {                                                                                       \
		snprintf(key, sizeof(key), "hot_%s_c%d_s%02d_n%u_%s", s_name[st], MAGLEV_HOT_COLS, \
			 (int)(ss[i] * 10), everys[j], name);                                      \
		json_object_object_add(js, key, json_object_new_double(round(val * 1e4) / 1e4));   \
	} while (0)
				PUT("top10_precision", r.prec[0]);
				PUT("top10_recall", r.rec[0]);
				PUT("top100_precision", r.prec[1]);
				PUT("top100_recall", r.rec[1]);
				PUT("share1_err_pp", r.err1);
				PUT("share01_err_pp", r.err01);
			}
	if (argc > 1 && json_object_to_file_ext(argv[1], js, JSON_C_TO_STRING_PRETTY)) {
		fprintf(stderr, "write %s failed\n", argv[1]);
		return 1;
	}
	json_object_put(js);
	return 0;
}
