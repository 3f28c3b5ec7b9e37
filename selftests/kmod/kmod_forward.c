// SPDX-License-Identifier: GPL-2.0-only
/*
 * Forwarding by the slow-path module, end to end inside the 6.1 VM, on the
 * topology of topo.sh: a client namespace sends hand-built UDP datagrams to
 * six VIPs (IPIP in all four family pairs, GUE over IPv4 and IPv6) through
 * the balancer namespace, where the module forwards them to three backend
 * namespaces that decapsulate and receive them on a UDP socket.
 *
 * For every VIP: whole datagrams, fragments in order, reversed and
 * interleaved between flows, IPv4 options and IPv6 destination options all
 * arrive whole (bytes compared, client address and port intact) at exactly
 * the backend the userspace reference (maglev_flow_hash_* + the table)
 * predicts, and a fragmented datagram goes where an unfragmented one of the
 * same flow went. Then a table swap under traffic loses nothing and mixes
 * nothing. The namespaces are removed at exit, also on failure.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <netinet/icmp6.h>

#include "kselftest_harness.h"
#include "kmod_topo.h"

#define TABLE_SIZE MAGLEV_TABLE_SIZE

struct vip_def {
	int family;
	const char *addr;
	uint8_t encap;
	int outer6; /* backends reached over IPv6 */
};

static const struct vip_def vips[] = {
	{MAGLEV_AF_INET, "198.51.100.10", MAGLEV_ENCAP_IPIP, 0},
	{MAGLEV_AF_INET6, "2001:db8:100::10", MAGLEV_ENCAP_IPIP, 0},
	{MAGLEV_AF_INET, "198.51.100.11", MAGLEV_ENCAP_IPIP, 1},
	{MAGLEV_AF_INET6, "2001:db8:100::11", MAGLEV_ENCAP_IPIP, 1},
	{MAGLEV_AF_INET, "198.51.100.12", MAGLEV_ENCAP_GUE, 0},
	{MAGLEV_AF_INET6, "2001:db8:100::12", MAGLEV_ENCAP_GUE, 1},
};

#define NVIPS ((int)(sizeof(vips) / sizeof(vips[0])))

/* Set up once by main() before the tests fork; read-only afterwards. */
static struct maglev_seed g_seed;
static uint32_t *g_tables[NVIPS];
static uint64_t g_rand;

static struct maglev_vip_key vip_key_of(int v)
{
	return kmod_vip_key(vips[v].family, vips[v].addr, IPPROTO_UDP);
}

/* Backend indices: 1..3 reach backend k over IPv4, 11..13 over IPv6. */
static int backend_of_idx(uint32_t idx)
{
	return (int)(idx % 10) - 1;
}

static int setup(void)
{
	struct slowpath_nl *nl = NULL;
	int v, i, err;

	err = kmod_lb_setup(&nl, &g_seed, &g_rand, &kmod_topology_up);
	if (err) {
		slowpath_nl_close(nl);
		return err;
	}
	for (v = 0; v < NVIPS && !err; v++) {
		struct maglev_vip_info info = {.encap = vips[v].encap};
		struct maglev_vip_key key = vip_key_of(v);

		if (info.encap == MAGLEV_ENCAP_GUE)
			info.gue_port = htons(KMOD_GUE_PORT);
		g_tables[v] = malloc(TABLE_SIZE * sizeof(uint32_t));
		if (!g_tables[v])
			return -ENOMEM;
		for (i = 0; i < TABLE_SIZE; i++)
			g_tables[v][i] = (vips[v].outer6 ? 11 : 1) + kmod_rand(&g_rand) % 3;
		err = slowpath_nl_vip_set(nl, &key, &info)
			      ?: slowpath_nl_table_push(nl, &key, 1, g_tables[v], TABLE_SIZE);
	}
	if (err)
		fprintf(stderr, "# configuring the module: %s\n", slowpath_nl_errmsg(nl));
	slowpath_nl_close(nl);
	return err;
}

struct fwd_ctx {
	struct slowpath_nl *nl;
	int client;
	int rx[KMOD_NBACKENDS][2];
	struct slowpath_stats before;
	uint64_t vip_packets_before;
	int sent; /* datagrams sent by the test */
	struct kmod_rx rxbuf;
	struct kmod_frame frames[KMOD_MAX_FRAGS * 4];
};

static int ctx_open(struct fwd_ctx *c)
{
	int k;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < KMOD_NBACKENDS; k++)
		if (kmod_backend_sockets(k, c->rx[k]))
			return -1;
	c->client = kmod_client_socket();
	if (c->client < 0 || kmod_setns("mlk-lb") || slowpath_nl_open(&c->nl))
		return -1;
	return slowpath_nl_stats(c->nl, &c->before);
}

static void ctx_close(struct fwd_ctx *c)
{
	int k;

	for (k = 0; k < KMOD_NBACKENDS; k++) {
		close(c->rx[k][0]);
		close(c->rx[k][1]);
	}
	close(c->client);
	slowpath_nl_close(c->nl);
}

/* A random client flow toward VIP v, with the payload it will carry. */
struct test_flow {
	struct maglev_flow_key key;
	int expect; /* backend the reference computation predicts */
	size_t plen;
	uint8_t payload[4000];
	int seen;
};

static void make_flow(int v, size_t plen, struct test_flow *f)
{
	size_t i;

	memset(&f->key, 0, sizeof(f->key));
	f->key.family = vips[v].family;
	f->key.proto = IPPROTO_UDP;
	inet_pton(vips[v].family == MAGLEV_AF_INET ? AF_INET : AF_INET6, vips[v].addr, f->key.dst);
	if (f->key.family == MAGLEV_AF_INET) {
		f->key.src[0] = htonl(0xc6336480 | (kmod_rand(&g_rand) & 0x7f));
	} else {
		f->key.src[0] = htonl(0x20010db8);
		f->key.src[1] = htonl(0x000c0000);
		f->key.src[2] = (uint32_t)kmod_rand(&g_rand);
		f->key.src[3] = (uint32_t)kmod_rand(&g_rand);
	}
	f->key.sport = htons(1024 + kmod_rand(&g_rand) % 60000);
	f->key.dport = htons(KMOD_VIP_PORT);
	f->expect = backend_of_idx(kmod_expected_pick(&g_seed, &f->key, g_tables[v], TABLE_SIZE));
	f->plen = plen;
	for (i = 0; i < plen; i++)
		f->payload[i] = (uint8_t)kmod_rand(&g_rand);
	f->seen = 0;
}

static int send_flow(struct fwd_ctx *c, struct test_flow *f, const struct kmod_shape *s,
		     uint32_t ident, int reversed)
{
	int order[KMOD_MAX_FRAGS], n, i;

	n = kmod_build(&f->key, f->payload, f->plen, s, ident, c->frames);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		order[i] = reversed ? n - 1 - i : i;
	c->sent++;
	return kmod_send_frames(c->client, c->frames, order, n);
}

/*
 * Receive one datagram per flow, in any order. Each must come from its
 * flow's client address and port, carry exactly its payload, and arrive at
 * the predicted backend; afterwards nothing else may arrive.
 */
static void expect_delivered(struct __test_metadata *_metadata, struct fwd_ctx *c,
			     struct test_flow *flows, int n)
{
	int got, i;

	for (got = 0; got < n; got++) {
		struct kmod_rx *rx = &c->rxbuf;
		struct test_flow *f = NULL;

		ASSERT_EQ(0, kmod_recv_any(c->rx, 3000, rx))
		{
			TH_LOG("only %d of %d datagrams arrived", got, n);
		}
		for (i = 0; i < n; i++)
			if (!flows[i].seen && flows[i].key.sport == rx->sport &&
			    !memcmp(flows[i].key.src, rx->src, sizeof(rx->src)))
				f = &flows[i];
		ASSERT_NE(NULL, f)
		{
			TH_LOG("unexpected datagram (%zu bytes) at backend %d", rx->len,
			       rx->backend + 1);
		}
		f->seen = 1;
		EXPECT_EQ(f->key.family, rx->family);
		EXPECT_EQ(f->expect, rx->backend);
		/* Sent with 64; the balancer is one hop. */
		EXPECT_EQ(63, rx->ttl);
		ASSERT_EQ(f->plen, rx->len);
		EXPECT_EQ(0, memcmp(f->payload, rx->data, f->plen));
	}
	EXPECT_NE(0, kmod_recv_any(c->rx, 100, &c->rxbuf))
	{
		TH_LOG("a datagram arrived twice or from nowhere (backend %d)",
		       c->rxbuf.backend + 1);
	}
}

/* Counters: everything sent was forwarded, nothing failed. */
static void expect_counters(struct __test_metadata *_metadata, struct fwd_ctx *c)
{
	struct slowpath_stats now;
	int s;

	ASSERT_EQ(0, slowpath_nl_stats(c->nl, &now));
	EXPECT_EQ(c->sent, now.cnt[MAGLEV_STAT_FORWARDED] - c->before.cnt[MAGLEV_STAT_FORWARDED]);
	for (s = MAGLEV_STAT_NO_TABLE; s <= MAGLEV_STAT_TTL_EXPIRED; s++)
		EXPECT_EQ(c->before.cnt[s], now.cnt[s])
		{
			TH_LOG("counter %d moved", s);
		}
}

FIXTURE(fwd)
{
	struct fwd_ctx c;
	struct test_flow flows[32];
};

FIXTURE_VARIANT(fwd)
{
	int vip;
};

FIXTURE_VARIANT_ADD(fwd, ipip_v4_in_v4){
	.vip = 0,
};

FIXTURE_VARIANT_ADD(fwd, ipip_v6_in_v4){
	.vip = 1,
};

FIXTURE_VARIANT_ADD(fwd, ipip_v4_in_v6){
	.vip = 2,
};

FIXTURE_VARIANT_ADD(fwd, ipip_v6_in_v6){
	.vip = 3,
};

FIXTURE_VARIANT_ADD(fwd, gue_v4_in_v4){
	.vip = 4,
};

FIXTURE_VARIANT_ADD(fwd, gue_v6_in_v6){
	.vip = 5,
};

FIXTURE_SETUP(fwd)
{
	struct slowpath_vip_state st;
	struct maglev_vip_key key = vip_key_of(variant->vip);

	/* Each test (a forked child) draws its own flows. */
	g_rand ^= (uint64_t)getpid() << 20;
	ASSERT_EQ(0, ctx_open(&self->c));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st));
	self->c.vip_packets_before = st.packets;
}

FIXTURE_TEARDOWN(fwd)
{
	ctx_close(&self->c);
}

static void expect_vip_packets(struct __test_metadata *_metadata, struct fwd_ctx *c, int v)
{
	struct maglev_vip_key key = vip_key_of(v);
	struct slowpath_vip_state st;

	ASSERT_EQ(0, slowpath_nl_vip_get(c->nl, &key, &st));
	EXPECT_EQ(c->sent, st.packets - c->vip_packets_before);
}

TEST_F(fwd, whole_datagrams)
{
	struct kmod_shape whole = {};
	int i;

	/* Small and near-MTU datagrams; the outer packet still fits. */
	for (i = 0; i < 24; i++) {
		make_flow(variant->vip, i % 2 ? 1300 : 64, &self->flows[i]);
		ASSERT_EQ(0, send_flow(&self->c, &self->flows[i], &whole, i, 0));
	}
	expect_delivered(_metadata, &self->c, self->flows, 24);
	expect_counters(_metadata, &self->c);
	expect_vip_packets(_metadata, &self->c, variant->vip);
}

/* The balancer namespace's count of fragments its stack created. */
static long frag_creates(int v6)
{
	const char *name = v6 ? "Ip6FragCreates" : "FragCreates";
	char line[1024], hdr[1024] = "";
	long val = -1;
	FILE *f;

	if (kmod_setns("mlk-lb"))
		return -1;
	f = fopen(v6 ? "/proc/self/net/snmp6" : "/proc/self/net/snmp", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (v6) {
			if (!strncmp(line, name, strlen(name)))
				val = strtol(line + strlen(name), NULL, 10);
		} else if (!strncmp(line, "Ip: ", 4)) {
			if (!hdr[0]) {
				strcpy(hdr, line);
			} else {
				/* Same column as the name in the header line. */
				char *h = hdr + 4, *v = line + 4, *hs, *vs;
				char *ht = strtok_r(h, " \n", &hs), *vt = strtok_r(v, " \n", &vs);

				for (; ht && vt; ht = strtok_r(NULL, " \n", &hs),
						 vt = strtok_r(NULL, " \n", &vs))
					if (!strcmp(ht, name))
						val = strtol(vt, NULL, 10);
			}
		}
	}
	fclose(f);
	return val;
}

/*
 * An unfragmented datagram of each flow, then a 3000-byte one in fragments;
 * reassembled, it no longer fits the path, so the module cuts the inner
 * packet again before encapsulating it (counted by the balancer's
 * FragCreates or Ip6FragCreates of the inner family).
 */
static void fragments_follow_flow(struct __test_metadata *_metadata, FIXTURE_DATA(fwd) * self,
				  int v, int reversed)
{
	struct kmod_shape whole = {}, frag = {.frag = 1000};
	struct test_flow *probe = &self->flows[0], *big = &self->flows[1];
	int inner6 = vips[v].family == MAGLEV_AF_INET6;
	long frags = frag_creates(inner6);
	int i;

	ASSERT_LE(0, frags);
	for (i = 0; i < 4; i++) {
		make_flow(v, 3000, big);
		*probe = *big;
		probe->plen = 100;
		probe->seen = 0;
		ASSERT_EQ(0, send_flow(&self->c, probe, &whole, 0, 0));
		expect_delivered(_metadata, &self->c, probe, 1);
		/* Same flow, now in fragments: must land where the probe did. */
		big->expect = self->c.rxbuf.backend;
		ASSERT_EQ(0, send_flow(&self->c, big, &frag, 0x1000 + i, reversed));
		expect_delivered(_metadata, &self->c, big, 1);
	}
	EXPECT_LE(frags + 8, frag_creates(inner6));
	expect_counters(_metadata, &self->c);
}

TEST_F(fwd, fragments_in_order)
{
	fragments_follow_flow(_metadata, self, variant->vip, 0);
}

TEST_F(fwd, fragments_reversed)
{
	fragments_follow_flow(_metadata, self, variant->vip, 1);
}

/* Three flows' fragments interleaved (one of them reversed) on the wire. */
TEST_F(fwd, fragments_interleaved)
{
	struct kmod_shape frag = {.frag = 600};
	static struct kmod_frame fr[3][KMOD_MAX_FRAGS];
	int n[3], i, j, sent_any;

	for (i = 0; i < 3; i++) {
		make_flow(variant->vip, 2000 + 500 * i, &self->flows[i]);
		n[i] = kmod_build(&self->flows[i].key, self->flows[i].payload, self->flows[i].plen,
				  &frag, 0x2000 + i, fr[i]);
		ASSERT_LT(1, n[i]);
	}
	for (j = 0, sent_any = 1; sent_any; j++) {
		sent_any = 0;
		for (i = 0; i < 3; i++) {
			int idx = i == 2 ? n[i] - 1 - j : j;

			if (j >= n[i])
				continue;
			ASSERT_EQ(0, kmod_send_frames(self->c.client, &fr[i][idx], NULL, 1));
			sent_any = 1;
		}
	}
	self->c.sent = 3;
	expect_delivered(_metadata, &self->c, self->flows, 3);
	expect_counters(_metadata, &self->c);
}

/* IPv4: a record-route option. IPv6: a destination-options header, whole
 * and in fragments.
 */
TEST_F(fwd, options_and_extension_headers)
{
	struct kmod_shape opt = {.ip_options = 1, .dst_opts = 1};
	struct kmod_shape frag = {.dst_opts = 1, .frag = 800};
	int i, n = 8;

	for (i = 0; i < 8; i++) {
		make_flow(variant->vip, 200 + 100 * i, &self->flows[i]);
		ASSERT_EQ(0, send_flow(&self->c, &self->flows[i], &opt, 0x3000 + i, 0));
	}
	if (vips[variant->vip].family == MAGLEV_AF_INET6) {
		for (; n < 10; n++) {
			make_flow(variant->vip, 2500, &self->flows[n]);
			ASSERT_EQ(0,
				  send_flow(&self->c, &self->flows[n], &frag, 0x3100 + n, n & 1));
		}
	}
	expect_delivered(_metadata, &self->c, self->flows, n);
	expect_counters(_metadata, &self->c);
}

/* TTL / hop limit 1 cannot cross the balancer: dropped and counted. */
TEST_F(fwd, ttl_1_dropped)
{
	struct kmod_shape last_hop = {.ttl = 1}, whole = {};
	struct slowpath_stats now;

	make_flow(variant->vip, 100, &self->flows[0]);
	self->flows[1] = self->flows[0];
	ASSERT_EQ(0, send_flow(&self->c, &self->flows[0], &last_hop, 0x4000, 0));
	EXPECT_NE(0, kmod_recv_any(self->c.rx, 300, &self->c.rxbuf));
	ASSERT_EQ(0, slowpath_nl_stats(self->c.nl, &now));
	EXPECT_EQ(1,
		  now.cnt[MAGLEV_STAT_TTL_EXPIRED] - self->c.before.cnt[MAGLEV_STAT_TTL_EXPIRED]);
	/* The same flow with a usable TTL still goes through. */
	self->c.before.cnt[MAGLEV_STAT_TTL_EXPIRED] = now.cnt[MAGLEV_STAT_TTL_EXPIRED];
	self->c.sent = 0;
	ASSERT_EQ(0, send_flow(&self->c, &self->flows[1], &whole, 0x4001, 0));
	expect_delivered(_metadata, &self->c, &self->flows[1], 1);
	expect_counters(_metadata, &self->c);
}

/* Table swap under traffic: two disjoint tables for VIP 0, swapped 20 times
 * while a sender runs. Every datagram arrives, at a backend one of the two
 * tables names for its flow; both tables are seen in effect.
 */
#define SWAP_FLOWS    64
#define SWAP_MAX_SENT 20000

struct swap_run {
	struct fwd_ctx *c;
	struct test_flow *flows;
	volatile int stop;
	int sent;
	int received;
	int wrong;
	int at[KMOD_NBACKENDS];
	int allowed[SWAP_FLOWS][KMOD_NBACKENDS];
	int rx_error;
};

static void *swap_sender(void *arg)
{
	struct swap_run *r = arg;
	struct kmod_shape whole = {};
	struct kmod_frame *fr = malloc(sizeof(*fr));

	while (!r->stop && r->sent < SWAP_MAX_SENT) {
		struct test_flow *f = &r->flows[r->sent % SWAP_FLOWS];

		memcpy(f->payload, &r->sent, sizeof(r->sent));
		if (kmod_build(&f->key, f->payload, f->plen, &whole, 0, fr) != 1 ||
		    kmod_send_frames(r->c->client, fr, NULL, 1))
			break;
		r->sent++;
	}
	free(fr);
	return NULL;
}

static void *swap_receiver(void *arg)
{
	struct swap_run *r = arg;
	struct kmod_rx *rx = malloc(sizeof(*rx));
	int idle_ms = 0, i;

	while (idle_ms < 1000) {
		if (kmod_recv_any(r->c->rx, 100, rx)) {
			if (r->stop)
				idle_ms += 100;
			continue;
		}
		idle_ms = 0;
		for (i = 0; i < SWAP_FLOWS; i++)
			if (r->flows[i].key.sport == rx->sport &&
			    !memcmp(r->flows[i].key.src, rx->src, 16))
				break;
		if (i == SWAP_FLOWS || rx->len != r->flows[i].plen) {
			r->rx_error++;
			continue;
		}
		r->received++;
		r->at[rx->backend]++;
		if (!r->allowed[i][rx->backend])
			r->wrong++;
	}
	free(rx);
	return NULL;
}

FIXTURE(swap)
{
	struct fwd_ctx c;
	struct test_flow flows[SWAP_FLOWS];
};

FIXTURE_SETUP(swap)
{
	ASSERT_EQ(0, ctx_open(&self->c));
}

FIXTURE_TEARDOWN(swap)
{
	ctx_close(&self->c);
}

TEST_F_TIMEOUT(swap, table_swap_under_traffic, 120)
{
	struct maglev_vip_key key = vip_key_of(0);
	uint32_t *ta = malloc(TABLE_SIZE * sizeof(uint32_t));
	uint32_t *tb = malloc(TABLE_SIZE * sizeof(uint32_t));
	static struct swap_run r;
	pthread_t snd, rcv;
	struct slowpath_stats now;
	int i, round;

	ASSERT_NE(NULL, ta);
	ASSERT_NE(NULL, tb);
	/* Table A: backends 1 and 2 only. Table B: backend 3 only. */
	for (i = 0; i < TABLE_SIZE; i++) {
		ta[i] = 1 + kmod_rand(&g_rand) % 2;
		tb[i] = 3;
	}
	ASSERT_EQ(0, slowpath_nl_table_push(self->c.nl, &key, 100, ta, TABLE_SIZE));
	memset(&r, 0, sizeof(r));
	r.c = &self->c;
	r.flows = self->flows;
	for (i = 0; i < SWAP_FLOWS; i++) {
		make_flow(0, 64, &self->flows[i]);
		r.allowed[i][backend_of_idx(
			kmod_expected_pick(&g_seed, &self->flows[i].key, ta, TABLE_SIZE))] = 1;
		r.allowed[i][2] = 1;
	}
	ASSERT_EQ(0, pthread_create(&rcv, NULL, swap_receiver, &r));
	ASSERT_EQ(0, pthread_create(&snd, NULL, swap_sender, &r));
	for (round = 0; round < 10; round++) {
		usleep(20000);
		EXPECT_EQ(0, slowpath_nl_table_push(self->c.nl, &key, 101 + 2 * round, tb,
						    TABLE_SIZE));
		usleep(20000);
		EXPECT_EQ(0, slowpath_nl_table_push(self->c.nl, &key, 102 + 2 * round, ta,
						    TABLE_SIZE));
	}
	r.stop = 1;
	pthread_join(snd, NULL);
	pthread_join(rcv, NULL);
	/* Put the table the other tests predict with back. */
	ASSERT_EQ(0, slowpath_nl_table_push(self->c.nl, &key, 1, g_tables[0], TABLE_SIZE));

	TH_LOG("sent %d, received %d (backends %d/%d/%d)", r.sent, r.received, r.at[0], r.at[1],
	       r.at[2]);
	EXPECT_LT(100, r.sent);
	EXPECT_EQ(r.sent, r.received);
	EXPECT_EQ(0, r.wrong);
	EXPECT_EQ(0, r.rx_error);
	EXPECT_LT(0, r.at[0] + r.at[1]);
	EXPECT_LT(0, r.at[2]);
	ASSERT_EQ(0, slowpath_nl_stats(self->c.nl, &now));
	EXPECT_EQ(self->c.before.cnt[MAGLEV_STAT_NO_TABLE], now.cnt[MAGLEV_STAT_NO_TABLE]);
	EXPECT_EQ(self->c.before.cnt[MAGLEV_STAT_NO_BACKEND], now.cnt[MAGLEV_STAT_NO_BACKEND]);
	free(ta);
	free(tb);
}

/* ICMP errors, oversized datagrams, per-VIP counters, hooks, outer sources. */

FIXTURE(more)
{
	struct fwd_ctx c;
	struct test_flow flows[8];
};

FIXTURE_SETUP(more)
{
	g_rand ^= (uint64_t)getpid() << 20;
	ASSERT_EQ(0, ctx_open(&self->c));
}

FIXTURE_TEARDOWN(more)
{
	ctx_close(&self->c);
}

/* Raw sockets in every backend namespace (family AF_INET/AF_INET6, protocol
 * proto): they get a copy of each packet of that protocol the backend
 * receives, before its protocol handler.
 */
static int raw_sockets(int family, int proto, int fds[KMOD_NBACKENDS])
{
	int k, big = 4 << 20;
	char ns[16];

	for (k = 0; k < KMOD_NBACKENDS; k++) {
		snprintf(ns, sizeof(ns), "mlk-b%d", k + 1);
		if (kmod_setns(ns))
			return -1;
		fds[k] = socket(family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
		if (fds[k] < 0)
			return -1;
		setsockopt(fds[k], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
		if (proto == IPPROTO_ICMPV6) {
			/* Errors only: not the backend's neighbour discovery. */
			struct icmp6_filter flt;

			ICMP6_FILTER_SETBLOCKALL(&flt);
			ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &flt);
			ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &flt);
			ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &flt);
			if (setsockopt(fds[k], IPPROTO_ICMPV6, ICMP6_FILTER, &flt, sizeof(flt)))
				return -1;
		}
	}
	return kmod_setns("mlk-lb");
}

static void raw_close(int fds[KMOD_NBACKENDS])
{
	int k;

	for (k = 0; k < KMOD_NBACKENDS; k++)
		close(fds[k]);
}

/* One packet from any of the raw sockets: its backend, bytes and source. */
static int raw_recv(int fds[KMOD_NBACKENDS], int timeout_ms, uint8_t *buf, size_t size, size_t *len,
		    uint32_t src[4])
{
	struct pollfd p[KMOD_NBACKENDS];
	int k;

	for (k = 0; k < KMOD_NBACKENDS; k++) {
		p[k].fd = fds[k];
		p[k].events = POLLIN;
	}
	if (poll(p, KMOD_NBACKENDS, timeout_ms) <= 0)
		return -1;
	for (k = 0; k < KMOD_NBACKENDS; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		ssize_t got;

		if (!(p[k].revents & POLLIN))
			continue;
		got = recvfrom(fds[k], buf, size, 0, (struct sockaddr *)&ss, &sl);
		if (got < 0)
			continue;
		*len = (size_t)got;
		memset(src, 0, 16);
		if (ss.ss_family == AF_INET)
			memcpy(src, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		else
			memcpy(src, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		return k;
	}
	return -1;
}

/*
 * An ICMP error from a router about the backend's DSR reply of flow f
 * (quoted: VIP:port -> client:sport), addressed to the VIP. Writes the ICMP
 * message (checksummed) into msg and returns its length.
 */
static size_t icmp_error(const struct maglev_flow_key *f, uint8_t type, uint8_t code,
			 int quote_opts, size_t quote_extra, const struct maglev_flow_key *outer,
			 uint8_t *msg)
{
	int v6 = f->family == MAGLEV_AF_INET6;
	uint8_t *q = msg + 8;
	size_t qlen, i, ql4;
	uint16_t c;

	memset(msg, 0, 8);
	msg[0] = type;
	msg[1] = code;
	if (v6 && type == 2) {
		uint32_t mtu = htonl(1280);

		memcpy(msg + 4, &mtu, 4);
	} else if (!v6 && type == 3 && code == 4) {
		uint16_t mtu = htons(1400); /* next-hop MTU */

		memcpy(msg + 6, &mtu, 2);
	}
	if (!v6) {
		size_t hl = quote_opts ? 28 : 20;

		q[0] = 0x40 | (uint8_t)(hl / 4);
		q[1] = 0;
		q[2] = 0x05; /* total length 1500 */
		q[3] = 0xdc;
		memset(q + 4, 0, 4);
		q[8] = 63;
		q[9] = IPPROTO_UDP;
		memset(q + 10, 0, 2);
		memcpy(q + 12, f->dst, 4); /* the VIP */
		memcpy(q + 16, f->src, 4); /* the client */
		if (quote_opts) {
			static const uint8_t rr[8] = {7, 7, 4, 0, 0, 0, 0, 0};

			memcpy(q + 20, rr, 8);
		}
		ql4 = hl;
	} else {
		q[0] = 0x60;
		q[1] = q[2] = q[3] = 0;
		q[4] = 0x05; /* payload length 1460 */
		q[5] = 0xb4;
		q[6] = quote_opts ? IPPROTO_DSTOPTS : IPPROTO_UDP;
		q[7] = 63;
		memcpy(q + 8, f->dst, 16);
		memcpy(q + 24, f->src, 16);
		ql4 = 40;
		if (quote_opts) {
			static const uint8_t dopt[8] = {IPPROTO_UDP, 0, 1, 4, 0, 0, 0, 0};

			memcpy(q + 40, dopt, 8);
			ql4 = 48;
		}
	}
	/* The reply's UDP header: VIP port -> client port, then payload. */
	memcpy(q + ql4, &f->dport, 2);
	memcpy(q + ql4 + 2, &f->sport, 2);
	q[ql4 + 4] = 0x05;
	q[ql4 + 5] = 0xb4;
	q[ql4 + 6] = 0;
	q[ql4 + 7] = 0;
	qlen = ql4 + 8 + quote_extra;
	for (i = ql4 + 8; i < qlen; i++)
		q[i] = (uint8_t)kmod_rand(&g_rand);
	if (!v6) {
		c = kmod_csum_fold(kmod_csum_add(0, msg, 8 + qlen));
	} else {
		uint32_t l32 = htonl((uint32_t)(8 + qlen));
		uint8_t tail[4] = {0, 0, 0, IPPROTO_ICMPV6};
		uint32_t sum = kmod_csum_add(0, outer->src, 16);

		sum = kmod_csum_add(sum, outer->dst, 16);
		sum = kmod_csum_add(sum, &l32, 4);
		sum = kmod_csum_add(sum, tail, 4);
		c = kmod_csum_fold(kmod_csum_add(sum, msg, 8 + qlen));
	}
	memcpy(msg + 2, &c, 2);
	return 8 + qlen;
}

/*
 * ICMP errors about VIP flows reach the backend of the flow, whole: IPv4
 * frag-needed, time-exceeded and host-unreachable (one quoting IPv4
 * options, one itself fragmented), IPv6 packet-too-big, time-exceeded and
 * port-unreachable (one quoting a destination-options header, one itself
 * fragmented). Without XDP attached all of them go through the module.
 */
static void icmp_case(struct __test_metadata *_metadata, FIXTURE_DATA(more) * self, int v)
{
	static const struct {
		uint8_t t4, c4, t6, c6;
		int opts;
		size_t extra, frag;
	} cases[] = {
		{3, 4, 2, 0, 0, 0, 0},	     /* frag needed / packet too big */
		{11, 0, 3, 0, 0, 1200, 512}, /* time exceeded, error fragmented */
		{3, 1, 1, 4, 1, 0, 0},	     /* unreachable, quote with options */
		{3, 4, 2, 0, 1, 1300, 600},  /* both */
	};
	int v6 = vips[v].family == MAGLEV_AF_INET6, fds[KMOD_NBACKENDS], i, k;
	static uint8_t msg[4096], buf[4096];
	struct slowpath_stats now;
	uint32_t src[4];
	size_t len, got;

	ASSERT_EQ(0, raw_sockets(v6 ? AF_INET6 : AF_INET, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, fds));
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		struct kmod_shape shape = {.frag = cases[i].frag};
		struct test_flow *f = &self->flows[i];
		struct maglev_flow_key outer = {.family = vips[v].family};
		int n;

		make_flow(v, 10, f);
		/* From a router on the client side, to the VIP. */
		memcpy(outer.dst, f->key.dst, sizeof(outer.dst));
		inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? "2001:db8:1::fe" : "192.0.2.254",
			  outer.src);
		len = icmp_error(&f->key, v6 ? cases[i].t6 : cases[i].t4,
				 v6 ? cases[i].c6 : cases[i].c4, cases[i].opts, cases[i].extra,
				 &outer, msg);
		n = kmod_build_ip(&outer, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, msg, len, &shape,
				  0x5000 + i, self->c.frames);
		ASSERT_LT(0, n);
		ASSERT_EQ(cases[i].frag ? 1 : 0, n > 1);
		ASSERT_EQ(0, kmod_send_frames(self->c.client, self->c.frames, NULL, n));
		k = raw_recv(fds, 3000, buf, sizeof(buf), &got, src);
		ASSERT_LE(0, k)
		{
			TH_LOG("ICMP error %d did not reach any backend", i);
		}
		EXPECT_EQ(f->expect, k)
		{
			TH_LOG("ICMP error %d reached backend %d, flow is on %d", i, k + 1,
			       f->expect + 1);
		}
		EXPECT_EQ(0, memcmp(src, outer.src, v6 ? 16 : 4));
		/* IPv4 raw sockets see the IP header (20 bytes), IPv6 ones do not. */
		ASSERT_EQ(len + (v6 ? 0 : 20), got);
		EXPECT_EQ(0, memcmp(msg, buf + (v6 ? 0 : 20), len));
		if (!v6)
			EXPECT_EQ(63, buf[8]); /* one hop: TTL 64 -> 63 */
		EXPECT_NE(0, raw_recv(fds, 50, buf, sizeof(buf), &got, src))
		{
			TH_LOG("ICMP error %d arrived twice", i);
		}
	}
	raw_close(fds);
	ASSERT_EQ(0, slowpath_nl_stats(self->c.nl, &now));
	EXPECT_EQ(4, now.cnt[MAGLEV_STAT_ICMP_FORWARDED] -
			     self->c.before.cnt[MAGLEV_STAT_ICMP_FORWARDED]);
}

TEST_F(more, icmp_errors_v4_follow_flow)
{
	icmp_case(_metadata, self, 0);
}

TEST_F(more, icmp_errors_v6_follow_flow)
{
	icmp_case(_metadata, self, 3);
}

/*
 * A reassembled 65,507-byte UDP datagram to an IPv4 VIP is 65,535 bytes:
 * with the 20-byte outer header the IPv4 total length would wrap. Dropped
 * and counted (namespace TOO_BIG, the VIP's drops, not its packets). The
 * largest datagram that fits (65,487 bytes: 65,535 with the outer header)
 * still arrives whole. The same for an IPv6 VIP over IPv6 (payload length).
 */
static void oversized_case(struct __test_metadata *_metadata, FIXTURE_DATA(more) * self, int v)
{
	static uint8_t payload[65507];
	struct kmod_shape frag = {.frag = vips[v].family == MAGLEV_AF_INET ? 1480 : 1448};
	struct maglev_vip_key key = vip_key_of(v);
	struct slowpath_vip_state st0, st1;
	struct test_flow *f = &self->flows[0];
	struct slowpath_stats now;
	struct kmod_rx *rx = &self->c.rxbuf;
	size_t i;
	int n;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)kmod_rand(&g_rand);
	make_flow(v, 0, f);
	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st0));
	n = kmod_build(&f->key, payload, sizeof(payload), &frag, 0x6000, self->c.frames);
	ASSERT_LT(40, n);
	ASSERT_EQ(0, kmod_send_frames(self->c.client, self->c.frames, NULL, n));
	EXPECT_NE(0, kmod_recv_any(self->c.rx, 1000, rx))
	{
		TH_LOG("%zu bytes arrived at backend %d", rx->len, rx->backend + 1);
	}
	ASSERT_EQ(0, slowpath_nl_stats(self->c.nl, &now));
	EXPECT_EQ(1, now.cnt[MAGLEV_STAT_TOO_BIG] - self->c.before.cnt[MAGLEV_STAT_TOO_BIG]);
	EXPECT_EQ(self->c.before.cnt[MAGLEV_STAT_FORWARDED], now.cnt[MAGLEV_STAT_FORWARDED]);
	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st1));
	EXPECT_EQ(st0.packets, st1.packets);
	EXPECT_EQ(st0.drops + 1, st1.drops);

	/* 65,487 bytes: the outer packet is exactly at the limit. */
	n = kmod_build(&f->key, payload, 65487, &frag, 0x6001, self->c.frames);
	ASSERT_LT(40, n);
	ASSERT_EQ(0, kmod_send_frames(self->c.client, self->c.frames, NULL, n));
	ASSERT_EQ(0, kmod_recv_any(self->c.rx, 5000, rx));
	EXPECT_EQ(f->expect, rx->backend);
	ASSERT_EQ(65487, rx->len);
	EXPECT_EQ(0, memcmp(payload, rx->data, 65487));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st0));
	EXPECT_EQ(st1.packets + 1, st0.packets);
	EXPECT_EQ(st1.bytes + 20 + 8 + 65487 + (vips[v].family == MAGLEV_AF_INET6 ? 20 : 0),
		  st0.bytes);
}

TEST_F(more, oversized_v4_dropped)
{
	oversized_case(_metadata, self, 0);
}

TEST_F(more, oversized_v6_dropped)
{
	oversized_case(_metadata, self, 3);
}

/*
 * A VIP whose backend has no route: its packets are drops, not packets
 * (counted only after a successful send), and the namespace counts them
 * as NO_ROUTE.
 */
TEST_F(more, vip_counts_only_sent)
{
	struct maglev_vip_key key = {
		.family = MAGLEV_AF_INET, .proto = IPPROTO_UDP, .port = htons(KMOD_VIP_PORT)};
	struct maglev_backend nowhere = {.family = MAGLEV_AF_INET};
	struct maglev_vip_info info = {.encap = MAGLEV_ENCAP_IPIP};
	struct kmod_shape whole = {};
	struct slowpath_vip_state st;
	struct slowpath_stats now;
	static uint32_t table[TABLE_SIZE];
	struct test_flow *f = &self->flows[0];
	int i;

	inet_pton(AF_INET, "198.51.100.20", key.addr);
	/* No route: the balancer knows only its /29 links. */
	inet_pton(AF_INET, "203.0.113.200", nowhere.addr);
	for (i = 0; i < TABLE_SIZE; i++)
		table[i] = 50;
	ASSERT_EQ(0, slowpath_nl_backend_set(self->c.nl, 50, &nowhere));
	ASSERT_EQ(0, slowpath_nl_vip_set(self->c.nl, &key, &info));
	ASSERT_EQ(0, slowpath_nl_table_push(self->c.nl, &key, 1, table, TABLE_SIZE));
	make_flow(0, 100, f);
	memcpy(f->key.dst, key.addr, 4);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, send_flow(&self->c, f, &whole, 0x7000 + i, 0));
	EXPECT_NE(0, kmod_recv_any(self->c.rx, 300, &self->c.rxbuf));
	ASSERT_EQ(0, slowpath_nl_vip_get(self->c.nl, &key, &st));
	EXPECT_EQ(0, st.packets);
	EXPECT_EQ(0, st.bytes);
	EXPECT_EQ(3, st.drops);
	ASSERT_EQ(0, slowpath_nl_stats(self->c.nl, &now));
	EXPECT_EQ(3, now.cnt[MAGLEV_STAT_NO_ROUTE] - self->c.before.cnt[MAGLEV_STAT_NO_ROUTE]);
	EXPECT_EQ(self->c.before.cnt[MAGLEV_STAT_FORWARDED], now.cnt[MAGLEV_STAT_FORWARDED]);
	EXPECT_EQ(0, slowpath_nl_vip_del(self->c.nl, &key));
	EXPECT_EQ(0, slowpath_nl_backend_del(self->c.nl, 50));
}

/* A counter of the caller's namespace from /proc/self/net/snmp6; -1 if absent. */
static long snmp6(const char *name)
{
	FILE *f = fopen("/proc/self/net/snmp6", "r");
	char line[256];
	long val = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == ' ')
			val = strtol(line + strlen(name), NULL, 10);
	fclose(f);
	return val;
}

/*
 * Whether nf_defrag_ipv6 (enabled with the module's hooks) is active in the
 * caller's namespace: a 3000-byte datagram to ::1 over a 1280-byte lo is
 * sent in fragments; reassembled at PRE_ROUTING by netfilter, the stack's
 * own reassembly (Ip6ReasmReqds) never sees them. 1 active, 0 not, -1 error.
 * Debian's 6.1 has no nfnetlink_hook to list hooks directly.
 */
static int v6_defrag_active(void)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	struct timeval tv = {.tv_sec = 2};
	socklen_t sl = sizeof(a);
	static char buf[3000];
	long before, after;
	int rx, tx, ret = -1;

	rx = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &sl) ||
	    setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		goto out;
	before = snmp6("Ip6ReasmReqds");
	if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a)) != sizeof(buf) ||
	    recv(rx, buf, sizeof(buf), 0) != sizeof(buf))
		goto out;
	after = snmp6("Ip6ReasmReqds");
	if (before >= 0 && after >= 0)
		ret = after == before;
out:
	close(rx);
	close(tx);
	return ret;
}

/*
 * The last VIP of a namespace takes the module's hooks and the kernel's
 * defragmentation with it; the next VIP brings them back. Checked in a
 * namespace of its own, twice over.
 */
TEST(hooks_follow_vips)
{
	struct maglev_vip_key key = {.family = MAGLEV_AF_INET6, .proto = IPPROTO_TCP};
	struct maglev_vip_info info = {.encap = MAGLEV_ENCAP_IPIP};
	struct slowpath_nl *nl;
	int round;

	ASSERT_EQ(0, system("ip netns add mlk-x && ip -n mlk-x link set lo up mtu 1280"));
	ASSERT_EQ(0, kmod_setns("mlk-x"));
	ASSERT_EQ(0, slowpath_nl_open(&nl));
	inet_pton(AF_INET6, "2001:db8:100::99", key.addr);
	EXPECT_EQ(0, v6_defrag_active());
	for (round = 0; round < 2; round++) {
		EXPECT_EQ(0, slowpath_nl_vip_set(nl, &key, &info));
		EXPECT_EQ(1, v6_defrag_active());
		EXPECT_EQ(0, slowpath_nl_vip_del(nl, &key));
		EXPECT_EQ(0, v6_defrag_active())
		{
			TH_LOG("round %d: defragmentation still on with no VIP", round);
		}
	}
	slowpath_nl_close(nl);
	kmod_setns("mlk-lb");
	EXPECT_EQ(0, system("ip netns del mlk-x"));
}

/* Every VIP of the balancer deleted, then configured again: forwarding
 * resumes (hooks re-registered on the first new VIP).
 */
TEST_F(more, delete_all_then_add)
{
	struct kmod_shape whole = {}, frag = {.frag = 800};
	int v;

	for (v = 0; v < NVIPS; v++) {
		struct maglev_vip_key key = vip_key_of(v);

		EXPECT_EQ(0, slowpath_nl_vip_del(self->c.nl, &key));
	}
	for (v = 0; v < NVIPS; v++) {
		struct maglev_vip_info info = {.encap = vips[v].encap};
		struct maglev_vip_key key = vip_key_of(v);

		if (info.encap == MAGLEV_ENCAP_GUE)
			info.gue_port = htons(KMOD_GUE_PORT);
		ASSERT_EQ(0, slowpath_nl_vip_set(self->c.nl, &key, &info));
		ASSERT_EQ(0, slowpath_nl_table_push(self->c.nl, &key, 1, g_tables[v], TABLE_SIZE));
	}
	for (v = 0; v < NVIPS; v++) {
		make_flow(v, v & 1 ? 2000 : 1200, &self->flows[v]);
		ASSERT_EQ(0, send_flow(&self->c, &self->flows[v], v & 1 ? &frag : &whole,
				       0x8000 + v, 0));
	}
	expect_delivered(_metadata, &self->c, self->flows, NVIPS);
}

/* The XDP program's flow fold (bpf/xdp_encap.h), the test's own copy. */
static uint32_t ref_fold(const struct maglev_flow_key *k)
{
	uint32_t x = k->src[0] ^ k->src[1] ^ k->src[2] ^ k->src[3] ^
		     (((uint32_t)k->sport << 16) | k->dport);

	x ^= x >> 16;
	x *= 0x85ebca6b;
	x ^= x >> 13;
	x *= 0xc2b2ae35;
	x ^= x >> 16;
	return x;
}

/*
 * With a source prefix configured, each flow's outer source is the prefix
 * with host bits from the fold, exactly as XDP computes it; the GUE source
 * port and the IPv6 flow label come from the same fold. Observed with raw
 * sockets on the backends: IPIP over IPv4 (VIP 0), IPIP over IPv6 (VIP 2,
 * prefix /100) and GUE over IPv4 (VIP 4: source port too).
 */
TEST_F(more, outer_source_from_prefix)
{
	struct slowpath_config cfg = {.seed = g_seed}, got_cfg;
	static const struct {
		int vip, family, proto;
	} cases[] = {
		{0, AF_INET, IPPROTO_IPIP},
		{2, AF_INET6, IPPROTO_IPIP},
		{4, AF_INET, IPPROTO_UDP},
	};
	static uint8_t buf[4096];
	struct kmod_shape whole = {};
	int c, i, fds[KMOD_NBACKENDS], distinct;

	inet_pton(AF_INET, "192.0.2.128", &cfg.src4);
	cfg.src4_plen = 25;
	inet_pton(AF_INET6, "2001:db8:5::", cfg.src6);
	cfg.src6_plen = 100;
	ASSERT_EQ(0, slowpath_nl_config_set(self->c.nl, &cfg));
	ASSERT_EQ(0, slowpath_nl_config_get(self->c.nl, &got_cfg));
	EXPECT_EQ(25, got_cfg.src4_plen);
	EXPECT_EQ(100, got_cfg.src6_plen);
	for (c = 0; c < 3; c++) {
		uint32_t first[4], src[4];
		size_t len;

		ASSERT_EQ(0, raw_sockets(cases[c].family, cases[c].proto, fds));
		distinct = 0;
		for (i = 0; i < 8; i++) {
			struct test_flow *f = &self->flows[i];
			uint32_t fold, want[4] = {0};
			int k;

			make_flow(cases[c].vip, 64, f);
			ASSERT_EQ(0, send_flow(&self->c, f, &whole, 0x9000 + i, 0));
			fold = ref_fold(&f->key);
			if (cases[c].family == AF_INET) {
				want[0] = htonl((ntohl(cfg.src4) & ~0x7fU) | (fold & 0x7fU));
			} else {
				memcpy(want, cfg.src6, 16);
				want[3] = htonl((ntohl(cfg.src6[3]) & ~0x0fffffffU) |
						(fold & 0x0fffffffU));
			}
			/* GUE's raw UDP socket also sees other UDP: take ours. */
			do {
				k = raw_recv(fds, 2000, buf, sizeof(buf), &len, src);
			} while (k >= 0 && cases[c].proto == IPPROTO_UDP &&
				 (len < 28 || buf[22] != KMOD_GUE_PORT >> 8 ||
				  buf[23] != (KMOD_GUE_PORT & 0xff)));
			ASSERT_EQ(f->expect, k)
			{
				struct slowpath_stats st;

				slowpath_nl_stats(self->c.nl, &st);
				TH_LOG("case %d flow %d: forwarded +%llu, no route +%llu, tx err "
				       "+%llu",
				       c, i,
				       (unsigned long long)(st.cnt[MAGLEV_STAT_FORWARDED] -
							    self->c.before
								    .cnt[MAGLEV_STAT_FORWARDED]),
				       (unsigned long long)(st.cnt[MAGLEV_STAT_NO_ROUTE] -
							    self->c.before
								    .cnt[MAGLEV_STAT_NO_ROUTE]),
				       (unsigned long long)(st.cnt[MAGLEV_STAT_TX_ERROR] -
							    self->c.before
								    .cnt[MAGLEV_STAT_TX_ERROR]));
			}
			EXPECT_EQ(0, memcmp(want, src, cases[c].family == AF_INET ? 4 : 16))
			{
				TH_LOG("case %d flow %d: outer source %08x..%08x, want %08x..%08x",
				       c, i, ntohl(src[0]), ntohl(src[3]), ntohl(want[0]),
				       ntohl(want[3]));
			}
			if (cases[c].proto == IPPROTO_UDP)
				EXPECT_EQ(0x8000 | (fold & 0x7fff), (buf[20] << 8) | buf[21]);
			if (i == 0)
				memcpy(first, src, 16);
			else if (memcmp(first, src, 16))
				distinct = 1;
		}
		EXPECT_EQ(1, distinct);
		raw_close(fds);
		/* Drain the datagrams themselves. */
		while (!kmod_recv_any(self->c.rx, 100, &self->c.rxbuf))
			;
	}
	/* Back to the route's source; a prefix length without an address is refused. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.seed = g_seed;
	cfg.src4_plen = 24;
	ASSERT_EQ(0, slowpath_nl_config_set(self->c.nl, &cfg));
	ASSERT_EQ(0, slowpath_nl_config_get(self->c.nl, &got_cfg));
	EXPECT_EQ(0, got_cfg.src4);
	EXPECT_EQ(0, got_cfg.src4_plen);
}

int main(int argc, char **argv)
{
	return kmod_topology_main(argc, argv, setup);
}
