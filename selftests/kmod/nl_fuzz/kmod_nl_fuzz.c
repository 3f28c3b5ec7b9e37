// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bounded randomized input for the slow-path module's generic netlink family,
 * inside the 6.1 VM: every command with random attribute sets (valid types at
 * random lengths, boundary values, unknown, reply-only and nested attributes,
 * duplicates), malformed netlink and genetlink headers, byte-level mutations
 * of requests captured from the real client (userspace/lib/slowpath_nl.c),
 * and random table staging sequences checked against a model.
 *
 * Oracle: the kernel log shows no BUG/WARNING/Oops; every well-formed
 * request is answered (ACK, error or end of dump) within a receive timeout;
 * after every request that was refused, and every accepted read, the state a
 * client can read back (configuration, every VIP and backend, and lookups
 * over the baseline tables) is unchanged; the staging test predicts every
 * errno and every live table slot; at the end of each test the namespace is
 * reset and its known-good configuration looks up every table slot as the
 * userspace reference computes it.
 *
 * MAGLEV_NL_FUZZ_SEED replays a run (each test derives its own stream from
 * it), MAGLEV_NL_FUZZ_N sets the messages per test. Each test runs in a
 * network namespace of its own.
 *
 * This file holds the fixture, the tests and main; the rest of the program
 * is next to it in selftests/kmod/nl_fuzz/: sock (the raw socket), capture
 * (the client's requests as a corpus), base (the baseline), snap (reading
 * the state back), kmsg (the kernel log), gen (random requests), mutate
 * (malformed and mutated messages), oracle (the fuzz loop's checks) and
 * model (table staging).
 */
#include <sched.h>

#include "kselftest_harness.h"
#include "capture.h"
#include "fixture.h"
#include "kmsg.h"
#include "model.h"
#include "mutate.h"
#include "oracle.h"

#define FZ_DEFAULT_N 3000 /* messages per test: about 30 s in all in the TCG VM */

static uint64_t g_seed;
static unsigned int g_n;

/* FNV-1a: each test's PRNG stream from its name and the run's seed. */
static uint64_t fz_name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 0x100000001b3ULL;
	return h;
}

/* Registered here, with the harness; its data is in fixture.h. */
FIXTURE(fz);

FIXTURE_SETUP(fz)
{
	int v, i;

	memset(&self->st, 0, sizeof(self->st));
	self->kmsg = fz_kmsg_open();
	ASSERT_LE(0, self->kmsg);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, slowpath_nl_open(&self->nl));
	ASSERT_EQ(0, fz_open(&self->s, slowpath_nl_family_id(self->nl)));

	/* Each test its own stream, reproducible from the one seed. */
	self->g.rs = g_seed ^ fz_name_hash(_metadata->name);
	fprintf(stderr, "# MAGLEV_NL_FUZZ_SEED=0x%llx MAGLEV_NL_FUZZ_N=%u\n",
		(unsigned long long)g_seed, g_n);
	self->base.seed.k0 = kmod_rand(&self->g.rs);
	self->base.seed.k1 = kmod_rand(&self->g.rs);
	for (v = 0; v < FZ_NBASE_VIPS; v++) {
		struct maglev_vip_key k = fz_base_key(v);

		for (i = 0; i < (int)fz_base_vips[v].size; i++)
			self->base.tables[v][i] =
				fz_base_bes[kmod_rand(&self->g.rs) % FZ_NBASE_BES].idx;
		if (fz_base_vips[v].size)
			ASSERT_EQ(0, fz_slot_flows(&self->base.seed, &k, fz_base_vips[v].size,
						   &self->g.rs, self->base.slot_flows[v]));
	}
	for (i = 0; i < FZ_PROBES; i++) {
		struct maglev_vip_key k = fz_base_key(i % FZ_NBASE_VIPS);

		self->base.probes[i] = fz_flow(&k, &self->g.rs);
	}
	/* The baseline, capturing the client's requests as a corpus. */
	g_cap.on = 1;
	ASSERT_EQ(0, fz_base_apply(self->nl, &self->base));
	fz_capture_reads(self->nl, &self->base);
	g_cap.on = 0;
	ASSERT_LT(10, g_cap.n);
	ASSERT_EQ(0, fz_snapshot(&self->s, &self->base, &self->base_snap));
	ASSERT_EQ(FZ_NBASE_VIPS, self->base_snap.nvips);
	ASSERT_EQ(FZ_NBASE_BES, self->base_snap.nbes);
	memcpy(&self->ref, &self->base_snap, sizeof(self->ref));
	ASSERT_EQ(0, fz_check_base_lookups(&self->s, &self->base));
	clock_gettime(CLOCK_MONOTONIC, &self->t0);
}

FIXTURE_TEARDOWN(fz)
{
	unsigned int i;

	fz_close(&self->s);
	slowpath_nl_close(self->nl);
	if (self->kmsg >= 0)
		close(self->kmsg);
	for (i = 0; i < g_cap.n; i++)
		free(g_cap.msg[i]);
	g_cap.n = 0;
}

static int fz_run_random(FIXTURE_DATA(fz) * self, const uint8_t *cmds, unsigned int ncmds,
			 const char *what)
{
	unsigned int i;

	for (i = 0; i < g_n; i++) {
		uint8_t cmd = cmds[fz_r(&self->g, ncmds)];
		struct nlmsghdr *nlh = fz_random_request(&self->g, self->buf, self->s.family, cmd);

		if (fz_one(self, self->buf, nlh->nlmsg_len, i))
			return -1;
	}
	fz_report(self, what, g_n);
	return fz_finish(self);
}

TEST_F_TIMEOUT(fz, config_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_CONFIG_SET, MAGLEV_CMD_CONFIG_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "CONFIG_SET/GET"));
}

TEST_F_TIMEOUT(fz, vip_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_VIP_SET, MAGLEV_CMD_VIP_DEL, MAGLEV_CMD_VIP_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "VIP_SET/DEL/GET"));
}

TEST_F_TIMEOUT(fz, backend_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_BACKEND_SET, MAGLEV_CMD_BACKEND_DEL,
				       MAGLEV_CMD_BACKEND_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "BACKEND_SET/DEL/GET"));
}

TEST_F_TIMEOUT(fz, table_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_TABLE_BEGIN, MAGLEV_CMD_TABLE_CHUNK,
				       MAGLEV_CMD_TABLE_CHUNK, MAGLEV_CMD_TABLE_COMMIT};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "TABLE_BEGIN/CHUNK/COMMIT"));
}

TEST_F_TIMEOUT(fz, lookup_stats_random_attrs, 600)
{
	static const uint8_t cmds[] = {MAGLEV_CMD_LOOKUP, MAGLEV_CMD_LOOKUP, MAGLEV_CMD_STATS_GET};

	ASSERT_EQ(0, fz_run_random(self, cmds, sizeof(cmds), "LOOKUP/STATS_GET"));
}

TEST_F_TIMEOUT(fz, malformed_headers, 600)
{
	unsigned int i;

	for (i = 0; i < g_n; i++) {
		size_t len = fz_bad_header(self);

		ASSERT_EQ(0, fz_one(self, self->buf, len, i));
	}
	fz_report(self, "headers", g_n);
	ASSERT_EQ(0, fz_finish(self));
}

TEST_F_TIMEOUT(fz, client_request_mutations, 600)
{
	unsigned int i, k;

	fprintf(stderr, "# corpus: %u requests captured from slowpath_nl.c\n", g_cap.n);
	for (i = 0; i < g_n; i++) {
		unsigned int c = (unsigned int)fz_r(&self->g, g_cap.n);
		size_t len = g_cap.len[c];
		struct nlmsghdr *nlh = (struct nlmsghdr *)self->buf;

		memset(self->buf, 0, FZ_BUF);
		memcpy(self->buf, g_cap.msg[c], len);
		for (k = 1 + (unsigned int)fz_r(&self->g, 3); k--;)
			len = fz_mutate(self, len);
		nlh->nlmsg_type = self->s.family;
		nlh->nlmsg_len = (uint32_t)len;
		if (fz_pct(&self->g, 3))
			nlh->nlmsg_len += 1 + (uint32_t)fz_r(&self->g, 64); /* beyond: dropped */
		ASSERT_EQ(0, fz_one(self, self->buf, len, i));
	}
	fz_report(self, "client mutations", g_n);
	ASSERT_EQ(0, fz_finish(self));
}

/*
 * Random BEGIN / CHUNK / COMMIT sequences over three existing VIPs (with and
 * without a live table) and one that comes and goes: chunks without a
 * begin, out of order, overlapping, past the end, with a stale generation,
 * commits of incomplete or missing tables, huge staged tables. Every errno
 * must be the model's, and after each commit every slot of the live table
 * must look up as the model holds it (a refused chunk wrote nothing).
 */
TEST_F_TIMEOUT(fz, staging_sequences_vs_model, 600)
{
	struct fz_model_vip mv[FZ_MODEL_VIPS] = {};
	struct fz_model_stats ms = {};
	unsigned int i;
	int v;

	for (v = 0; v < FZ_NBASE_VIPS; v++) {
		mv[v].key = fz_base_key(v);
		mv[v].exists = 1;
		mv[v].live = fz_base_vips[v].size != 0;
		mv[v].live_gen = fz_base_vips[v].gen;
		mv[v].live_size = fz_base_vips[v].size;
		memcpy(mv[v].live_tab, self->base.tables[v], sizeof(mv[v].live_tab));
	}
	mv[3].key = fz_key(MAGLEV_AF_INET6, "2001:db8:100::99", 443, IPPROTO_UDP);
	for (i = 0; i < g_n; i++) {
		ASSERT_EQ(0, fz_model_step(self, mv, FZ_MODEL_VIPS, &ms, i));
	}
	for (v = 0; v < FZ_MODEL_VIPS; v++) {
		ASSERT_EQ(0, fz_model_verify(self, &mv[v], &ms));
	}
	fprintf(stderr,
		"# staging: %u requests (TABLE_BEGIN %u, TABLE_CHUNK %u, TABLE_COMMIT %u, VIP "
		"delete/create %u), %u accepted, every errno as the model predicts; %u commits, "
		"%u table slots looked up as the model holds them; %.1f s\n",
		ms.begin + ms.chunk + ms.commit + ms.recreate, ms.begin, ms.chunk, ms.commit,
		ms.recreate, ms.accepted, ms.commits, ms.slots, fz_elapsed(self));
	ASSERT_EQ(0, fz_finish(self));
}

/*
 * Last: a fresh known-good configuration (random seed, IPv4 and IPv6 VIPs,
 * random tables of 251 and 4093 slots) picks, for 2000 random flows, the
 * backend the userspace reference computes.
 */
TEST_F_TIMEOUT(fz, known_good_lookup_after_fuzz, 600)
{
	static const uint32_t sizes[2] = {251, 4093};
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct slowpath_config cfg = {};
	struct maglev_vip_key keys[2];
	uint32_t *tables[2];
	int i, v, mismatches = 0;

	cfg.seed.k0 = kmod_rand(&self->g.rs);
	cfg.seed.k1 = kmod_rand(&self->g.rs);
	ASSERT_EQ(0, slowpath_nl_config_set(self->nl, &cfg));
	keys[0] = fz_key(MAGLEV_AF_INET, "198.51.100.20", 0, IPPROTO_TCP);
	keys[1] = fz_key(MAGLEV_AF_INET6, "2001:db8:100::20", 443, IPPROTO_UDP);
	for (v = 0; v < 2; v++) {
		tables[v] = malloc(sizes[v] * sizeof(uint32_t));
		ASSERT_NE(NULL, tables[v]);
		for (i = 0; i < (int)sizes[v]; i++)
			tables[v][i] = 1 + kmod_rand(&self->g.rs) % MAGLEV_GENL_BACKEND_MAX;
		ASSERT_EQ(0, slowpath_nl_vip_set(self->nl, &keys[v], &ipip));
		ASSERT_EQ(0,
			  slowpath_nl_table_push(self->nl, &keys[v], 50 + v, tables[v], sizes[v]));
	}
	for (i = 0; i < 2000; i++) {
		struct maglev_flow_key f;
		struct slowpath_lookup got;
		uint32_t want;

		v = i % 2;
		f = fz_flow(&keys[v], &self->g.rs);
		ASSERT_EQ(0, fz_lookup(&self->s, &f, &got));
		want = kmod_expected_pick(&cfg.seed, &f, tables[v], sizes[v]);
		if (got.backend_idx != want || got.table_gen != (uint64_t)(50 + v))
			mismatches++;
	}
	fprintf(stderr,
		"# 2000 lookups on a fresh configuration: %d differ from userspace; %.1f s\n",
		mismatches, fz_elapsed(self));
	EXPECT_EQ(0, mismatches);
	for (v = 0; v < 2; v++) {
		ASSERT_EQ(0, slowpath_nl_vip_del(self->nl, &keys[v]));
		free(tables[v]);
	}
	ASSERT_EQ(0, fz_finish(self));
}

int main(int argc, char **argv)
{
	const char *seed = getenv("MAGLEV_NL_FUZZ_SEED"), *n = getenv("MAGLEV_NL_FUZZ_N");
	struct slowpath_nl *nl;
	int err, fd;

	g_seed = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	g_n = n ? (unsigned int)strtoul(n, NULL, 0) : FZ_DEFAULT_N;
	err = slowpath_nl_open(&nl);
	if (err == -ENOENT) {
		printf("1..0 # SKIP maglev genetlink family not registered (module not loaded)\n");
		return KSFT_SKIP;
	}
	if (err) {
		printf("1..0 # cannot open generic netlink: %s\n", strerror(-err));
		return KSFT_FAIL;
	}
	slowpath_nl_close(nl);
	printf("# MAGLEV_NL_FUZZ_SEED=0x%llx MAGLEV_NL_FUZZ_N=%u\n", (unsigned long long)g_seed,
	       g_n);
	/* The log before the run, for the record: only new records fail a test. */
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		printf("# kernel log before the run: %d records that look like a kernel bug\n",
		       fz_kmsg_bad(fd));
		close(fd);
	}
	fflush(stdout);
	return test_harness_run(argc, argv);
}
