// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Connection table and Maglev pick: persistence across table swaps, SYN
 * re-picks, unusable backends, UDP idle expiry, the new-flow limit, the
 * datapath's pick against the userspace library's for 10,000 flows, table
 * swaps racing with traffic, and the set-associative table itself (bucket
 * replacement, torn slots, flush).
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "fixture.h"
#include "maglev_table.h"
#include "maglev_conn.h"

#define NBE 8

FIXTURE(conn)
{
	struct maglev_dp *dp;
	int prog;
	uint8_t be[NBE + 1][16];
	struct flow f4, f6;
};

/* Closed connections' entries expire quickly here (closed_entry_expires). */
#define TCP_CLOSED_NS (200 * 1000000ULL)

/* The fixture's balancer, closed connections expiring after closed_ns. */
static void conn_open(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
		      uint64_t closed_ns)
{
	struct maglev_dp_opts o = {
		.pin_dir = "", .conn_table_size = 1 << 16, .tcp_closed_ns = closed_ns};
	int i;

	self->dp = open_dp_opts(_metadata, &o);
	self->prog = maglev_dp_prog_fd(self->dp);
	for (i = 1; i <= NBE; i++) {
		if (i % 2)
			v4addr(self->be[i], 192, 0, 2, (uint8_t)(20 + i));
		else
			v6addr(self->be[i], 0xb, 20 + i);
		ASSERT_EQ(0, add_backend(self->dp, i, self->be[i], i % 2 ? P_AF4 : P_AF6));
	}
	client_flows(&self->f4, &self->f6);
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 0, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 0, IPPROTO_UDP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 0, IPPROTO_TCP, 1, 0, 0));
	ASSERT_EQ(0, add_vip(self->dp, self->f6.dst, P_AF6, 0, IPPROTO_UDP, 1, 0, 0));
}

FIXTURE_SETUP(conn)
{
	conn_open(_metadata, self, TCP_CLOSED_NS);
}

FIXTURE_TEARDOWN(conn)
{
	maglev_dp_close(self->dp);
}

/* Backend index a frame was sent to (by outer destination), 0 if none. */
static int sent_to(FIXTURE_DATA(conn) * self, const struct flow *f, uint8_t flags)
{
	return backend_sent_to(self->prog, f, flags, (const uint8_t(*)[16])self->be, NBE);
}

/* Backend idx up, draining (MAGLEV_BACKEND_F_DRAIN) or down (0). */
static int backend_flags(struct maglev_dp *dp, uint32_t idx, uint8_t flags)
{
	struct maglev_backend b;
	int ret = maglev_dp_backend_get(dp, idx, &b);

	if (ret)
		return ret;
	b.flags = flags;
	return maglev_dp_backend_set(dp, idx, &b);
}

#define FIN 0x01
#define SYN 0x02
#define RST 0x04
#define ACK 0x10

static int age_entry(struct maglev_dp *dp, const struct flow *f, uint64_t ns);

static void persistence_case(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
			     const struct flow *f)
{
	struct maglev_flow_key k;
	struct maglev_conn c;
	struct flow g = *f;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, f, SYN));
	flow_key(&k, f);
	ASSERT_EQ(0, maglev_dp_conn_lookup(self->dp, &k, &c));
	ASSERT_EQ(3, c.backend_idx);

	ASSERT_EQ(0, fill_table(self->dp, 1, 4));
	ASSERT_EQ(3, sent_to(self, f, ACK)); /* established: keeps its backend */
	ASSERT_EQ(3, sent_to(self, f, ACK));
	g.sport++;
	ASSERT_EQ(4, sent_to(self, &g, ACK));	   /* a new flow follows the new table */
	ASSERT_EQ(3, sent_to(self, f, SYN));	   /* a SYN amid traffic: kept */
	ASSERT_EQ(3, sent_to(self, f, FIN | ACK)); /* the client closes */
	ASSERT_EQ(0, age_entry(self->dp, f, 2 * TCP_CLOSED_NS));
	ASSERT_EQ(4, sent_to(self, f, SYN)); /* closed long ago: a new connection, the pick */
	ASSERT_EQ(4, sent_to(self, f, ACK));
	ASSERT_EQ(0, maglev_dp_conn_lookup(self->dp, &k, &c));
	ASSERT_EQ(4, c.backend_idx);
	ASSERT_EQ(5, counter(self->dp, MAGLEV_CTR_CONN_HIT));
}

TEST_F(conn, persists_across_swap_v4)
{
	persistence_case(_metadata, self, &self->f4);
}

TEST_F(conn, persists_across_swap_v6)
{
	persistence_case(_metadata, self, &self->f6);
}

/* Frame in (of f) with IPv4 options or IPv6 extension headers (hop-by-hop,
 * routing with no segments left, destination options): the backend it was
 * encapsulated to (0: not forwarded), the inner packet checked byte for byte.
 */
static int sent_with_options(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
			     const struct flow *f, uint8_t flags)
{
	const uint8_t t[] = {0, 43, 60};
	const size_t l[] = {8, 24, 16};
	struct client_opts co = {.tcp_flags = flags};
	struct run_result r;
	uint8_t in[512], dst[16];
	size_t n, outer;
	int i;

	n = build_client(in, f, &co);
	if (f->family == P_AF4)
		insert_ipv4_nops(in, &n, 14, 12);
	else
		insert_ipv6_ext(in, &n, 14, t, l, 3);
	if (run_prog(self->prog, in, n, &r) || r.action != XDP_TX)
		return 0;
	/* What the backend must get: the client's packet, TTL one less. */
	if (f->family == P_AF4) {
		in[14 + 8]--;
		put16(in + 14 + 10, 0);
		put16(in + 14 + 10, csum_finish(csum_add(0, in + 14, (in[14] & 0xf) * 4)));
	} else {
		in[14 + 7]--;
	}
	outer = get16(r.out + 12) == 0x0800 ? 20 : 40;
	if (r.len != n + outer || memcmp(r.out + 14 + outer, in + 14, n - 14))
		return -1;
	outer_dst(&r, 14, dst);
	for (i = 1; i <= NBE; i++)
		if (!memcmp(dst, self->be[i], 16))
			return i;
	return -1;
}

/* Issue 14 item 11: options and extension headers no longer go to the slow
 * path, which follows the current table: an established flow keeps its
 * backend for such packets too, and they are counted on the flow.
 */
static void options_case(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
			 const struct flow *f)
{
	struct flow g = *f;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_with_options(_metadata, self, f, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 4));
	ASSERT_EQ(3, sent_with_options(_metadata, self, f, ACK));
	ASSERT_EQ(3, sent_to(self, f, ACK));
	ASSERT_EQ(3, sent_with_options(_metadata, self, f, FIN | ACK));
	g.sport++;
	ASSERT_EQ(4, sent_with_options(_metadata, self, &g, SYN)); /* new: the current table */
	/* Both packets with options and the plain ACK found the entry. */
	ASSERT_EQ(3, counter(self->dp, MAGLEV_CTR_CONN_HIT));
}

TEST_F(conn, options_keep_established_backend_v4)
{
	options_case(_metadata, self, &self->f4);
}

TEST_F(conn, ext_headers_keep_established_backend_v6)
{
	options_case(_metadata, self, &self->f6);
}

TEST_F(conn, unusable_backend_repicked)
{
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));

	/* Draining: established flows stay. */
	ASSERT_EQ(0, backend_flags(self->dp, 3, MAGLEV_BACKEND_F_DRAIN));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));

	/* Down: re-picked from the current table. */
	ASSERT_EQ(0, backend_flags(self->dp, 3, 0));
	ASSERT_EQ(5, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(1, counter(self->dp, MAGLEV_CTR_CONN_REPICK));
	ASSERT_EQ(5, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(2, counter(self->dp, MAGLEV_CTR_CONN_HIT));
}

TEST_F(conn, reused_backend_slot_repicked)
{
	struct maglev_backend b;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	/* Slot 3 handed to another server: generation bumped, still up. */
	ASSERT_EQ(0, maglev_dp_backend_get(self->dp, 3, &b));
	b.gen++;
	ASSERT_EQ(0, maglev_dp_backend_set(self->dp, 3, &b));
	ASSERT_EQ(5, sent_to(self, &self->f6, ACK));
	ASSERT_EQ(1, counter(self->dp, MAGLEV_CTR_CONN_REPICK));
}

/*
 * A SYN for a connection that is sending (its entry used since written and
 * recently, no FIN or RST from the client) keeps its backend after the pick
 * changed: a spoofed SYN must not move or reset it (the backend answers it
 * with a challenge ACK). Before, every SYN took the fresh pick.
 */
TEST_F(conn, syn_keeps_established_backend)
{
	struct maglev_flow_key k;
	struct maglev_conn c;
	uint64_t ins;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(3, sent_to(self, &self->f6, ACK));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(3, sent_to(self, &self->f6, ACK));
	ASSERT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
	flow_key(&k, &self->f6);
	ASSERT_EQ(0, maglev_dp_conn_lookup(self->dp, &k, &c));
	ASSERT_EQ(3, c.backend_idx);
	/* Draining: still kept; down: re-picked, SYN or not. */
	ASSERT_EQ(0, backend_flags(self->dp, 3, MAGLEV_BACKEND_F_DRAIN));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(0, backend_flags(self->dp, 3, 0));
	ASSERT_EQ(5, sent_to(self, &self->f6, SYN));
}

/* The two ways a client closes: FIN (with ACK) and RST. */
static const uint8_t close_flags[2] = {FIN | ACK, RST};

/* The connection table, mapped like the library maps it. */
struct conn_view {
	struct maglev_conn_bucket *m;
	size_t bytes;
	uint32_t buckets;
};

static int conn_view_open(struct maglev_dp *dp, struct conn_view *v)
{
	int fd = maglev_dp_map_fd(dp, "maglev_conns");
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	v->buckets = info.max_entries;
	v->bytes = ((size_t)info.max_entries * sizeof(*v->m) + 4095) & ~(size_t)4095;
	v->m = mmap(NULL, v->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return v->m == MAP_FAILED ? -1 : 0;
}

/* The slot holding f's key (check word or not), NULL if none. */
static struct maglev_conn_slot *conn_view_slot(struct maglev_dp *dp, struct conn_view *v,
					       const struct flow *f)
{
	uint32_t b = bucket_of(dp, f);
	struct maglev_flow_key k;
	int w;

	if (b >= v->buckets)
		return NULL;
	flow_key(&k, f);
	for (w = 0; w < MAGLEV_CONN_WAYS; w++)
		if (v->m[b].tag[w] && maglev_conn_key_eq(&v->m[b].slot[w].key, &k))
			return &v->m[b].slot[w];
	return NULL;
}

/* Flows in f's bucket with f's key (1 normally; 2: it was recorded twice). */
static int conn_view_copies(struct maglev_dp *dp, struct conn_view *v, const struct flow *f)
{
	uint32_t b = bucket_of(dp, f);
	struct maglev_flow_key k;
	int w, n = 0;

	flow_key(&k, f);
	for (w = 0; w < MAGLEV_CONN_WAYS && b < v->buckets; w++)
		n += v->m[b].tag[w] && maglev_conn_key_eq(&v->m[b].slot[w].key, &k);
	return n;
}

/* f's entry's last_seen_ns moved ns into the past (it is not in the check
 * word): as if that much time had passed since it was written or marked.
 */
static int age_entry(struct maglev_dp *dp, const struct flow *f, uint64_t ns)
{
	struct maglev_conn_slot *s;
	struct conn_view v;

	if (conn_view_open(dp, &v))
		return -1;
	s = conn_view_slot(dp, &v, f);
	if (s)
		s->conn.last_seen_ns -= ns;
	munmap(v.m, v.bytes);
	return s ? 0 : -1;
}

/* f's entry written more than MAGLEV_CONN_SYN_KEEP_NS ago: a SYN for it
 * (nothing else sent) is no retransmit but a new connection on the tuple.
 */
static int age_syn_entry(struct maglev_dp *dp, const struct flow *f)
{
	return age_entry(dp, f, MAGLEV_CONN_SYN_KEEP_NS + 1000000000ULL);
}

/* f's entry's flags (MAGLEV_CONN_F_*), -1 if it has none. */
static int entry_flags(struct maglev_dp *dp, const struct flow *f)
{
	struct maglev_conn_slot *s;
	struct conn_view v;
	int flags;

	if (conn_view_open(dp, &v))
		return -1;
	s = conn_view_slot(dp, &v, f);
	flags = s ? s->flags : -1;
	munmap(v.m, v.bytes);
	return flags;
}

/* f's entry's last_seen_ns, 0 if it has none. */
static uint64_t entry_last_seen(struct maglev_dp *dp, const struct flow *f)
{
	struct maglev_conn_slot *s;
	struct conn_view v;
	uint64_t t;

	if (conn_view_open(dp, &v))
		return 0;
	s = conn_view_slot(dp, &v, f);
	t = s ? s->conn.last_seen_ns : 0;
	munmap(v.m, v.bytes);
	return t;
}

/* f established on backend 3 (SYN, ACK), then the table moved to 5. */
static void established_then_swap(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
				  const struct flow *f)
{
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, f, SYN));
	ASSERT_EQ(3, sent_to(self, f, ACK));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
}

/* Which SYNs still take the pick: a SYN for an entry that has sent nothing
 * else for longer than a retransmit would wait, and a SYN more than
 * tcp_closed_ns after the client's FIN or RST and the packets that followed
 * it (a new connection on the tuple). A SYN retransmit (nothing else sent,
 * within MAGLEV_CONN_SYN_KEEP_NS) keeps the first SYN's backend, which holds
 * the half-open connection; before, it took the pick too.
 */
TEST_F(conn, syn_after_close_or_retransmit_repicks)
{
	struct flow f = self->f4;
	int i;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &f, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ASSERT_EQ(3, sent_to(self, &f, SYN)); /* retransmit: kept */
	f.sport = 41999;
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &f, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ASSERT_EQ(0, age_syn_entry(self->dp, &f));
	ASSERT_EQ(5, sent_to(self, &f, SYN)); /* too old for a retransmit */
	ASSERT_EQ(5, sent_to(self, &f, ACK));
	for (i = 0; i < 2; i++) {
		f.sport = (uint16_t)(42000 + i);
		established_then_swap(_metadata, self, &f);
		ASSERT_EQ(3, sent_to(self, &f, close_flags[i]));
		ASSERT_EQ(3, sent_to(self, &f, ACK)); /* closing: still its backend */
		ASSERT_EQ(0, age_entry(self->dp, &f, 2 * TCP_CLOSED_NS));
		ASSERT_EQ(5, sent_to(self, &f, SYN));
		ASSERT_EQ(5, sent_to(self, &f, ACK));
		ASSERT_EQ(5, sent_to(self, &f, SYN)); /* the new one is not closing */
	}
}

/*
 * After the client's FIN or RST the entry keeps its backend; a SYN more
 * than tcp_closed_ns after the last packet is a new connection on the
 * tuple: it takes the pick (conn_expired), and the entry is no longer
 * closing. Before, closed connections' entries never ended.
 */
TEST_F(conn, closed_entry_expires)
{
	struct flow f = self->f4;
	uint64_t exp;
	int i;

	for (i = 0; i < 2; i++) {
		f.sport = (uint16_t)(43000 + i);
		established_then_swap(_metadata, self, &f);
		usleep(TCP_CLOSED_NS * 2 / 1000); /* an open connection does not expire */
		ASSERT_EQ(3, sent_to(self, &f, close_flags[i]));
		ASSERT_EQ(3, sent_to(self, &f, ACK));
		exp = counter(self->dp, MAGLEV_CTR_CONN_EXPIRED);
		ASSERT_EQ(0, age_entry(self->dp, &f, 2 * TCP_CLOSED_NS));
		ASSERT_EQ(5, sent_to(self, &f, SYN));
		ASSERT_EQ(exp + 1, counter(self->dp, MAGLEV_CTR_CONN_EXPIRED));
		ASSERT_EQ(0, entry_flags(self->dp, &f));
		ASSERT_EQ(5, sent_to(self, &f, ACK));
	}
}

/*
 * Issue 31 item 1: one FIN or RST, which an off-path sender can spoof, must
 * not end a connection's protection. The flow is on backend 3, 3 is
 * draining and the table moved to 5 (its slot changed owner); after a FIN
 * or an RST, a SYN still goes to 3 (which answers it with a challenge ACK,
 * RFC 5961, if the connection lives) and clears the closing mark. Before,
 * the SYN took the pick (5): the connection was reset.
 */
TEST_F(conn, close_then_syn_keeps_drained_backend)
{
	const struct flow *fl[2] = {&self->f4, &self->f6};
	uint64_t ins;
	struct flow f;
	int i, j;

	for (j = 0; j < 2; j++) {
		for (i = 0; i < 2; i++) {
			f = *fl[j];
			f.sport = (uint16_t)(44000 + i);
			established_then_swap(_metadata, self, &f);
			ASSERT_EQ(0, backend_flags(self->dp, 3, MAGLEV_BACKEND_F_DRAIN));
			ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
			ASSERT_EQ(3, sent_to(self, &f, close_flags[i]));
			ASSERT_EQ(MAGLEV_CONN_F_CLOSING, entry_flags(self->dp, &f));
			ASSERT_EQ(3, sent_to(self, &f, SYN));
			ASSERT_EQ(0, entry_flags(self->dp, &f));
			ASSERT_EQ(3, sent_to(self, &f, SYN));
			ASSERT_EQ(3, sent_to(self, &f, ACK));
			ASSERT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
			ASSERT_EQ(0, backend_flags(self->dp, 3, MAGLEV_BACKEND_F_UP));
		}
	}
}

/* Wait until the coarse clock (the one the program reads) is ns past t0;
 * bounded by 2 s. Returns 0, or -1 if the clock never got there.
 */
static int coarse_wait_past(uint64_t t0, uint64_t ns)
{
	struct timespec ts;
	int i;

	for (i = 0; i < 2000; i++) {
		if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts))
			return -1;
		if ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec > t0 + ns)
			return 0;
		usleep(1000);
	}
	return -1;
}

/*
 * A client that half-closes (FIN) while the server keeps sending only
 * acknowledges: its ACKs keep the recorded backend however long after the
 * FIN they come. Here the closing timeout is 1 ms and the ACK comes later.
 * Before, it expired the entry (conn_expired) and went to the pick (5),
 * which resets it.
 */
TEST_F(conn, fin_then_ack_after_closing_timeout_keeps_backend)
{
	const uint64_t closed_ns = 1000000ULL;
	uint64_t exp, t0;

	maglev_dp_close(self->dp);
	conn_open(_metadata, self, closed_ns);
	established_then_swap(_metadata, self, &self->f4);
	ASSERT_EQ(3, sent_to(self, &self->f4, FIN | ACK));
	t0 = entry_last_seen(self->dp, &self->f4);
	ASSERT_NE(0, t0);
	ASSERT_EQ(0, coarse_wait_past(t0, 2 * closed_ns));
	exp = counter(self->dp, MAGLEV_CTR_CONN_EXPIRED);
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(exp, counter(self->dp, MAGLEV_CTR_CONN_EXPIRED));
	/* The ACK refreshed the entry. */
	ASSERT_LT(t0 + closed_ns, entry_last_seen(self->dp, &self->f4));
}

/*
 * Packets after a FIN or RST refresh the entry: the closing timeout counts
 * from the last of them, so a SYN 150 ms after an ACK that came 300 ms after
 * the FIN (timeout 200 ms) keeps the backend. Before, nothing refreshed the
 * entry and closing entries refused every SYN.
 */
TEST_F(conn, packets_after_close_refresh_entry)
{
	uint64_t aged;

	established_then_swap(_metadata, self, &self->f4);
	ASSERT_EQ(3, sent_to(self, &self->f4, RST));
	ASSERT_EQ(0, age_entry(self->dp, &self->f4, 150 * 1000000ULL));
	aged = entry_last_seen(self->dp, &self->f4);
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_LT(aged + 100 * 1000000ULL, entry_last_seen(self->dp, &self->f4));
	ASSERT_EQ(0, age_entry(self->dp, &self->f4, 150 * 1000000ULL));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
}

/* Client data after a FIN or RST: the connection did not close (the close
 * was spoofed): the mark goes, and a later SYN keeps the backend as for any
 * connection that is sending. A pure ACK (the end of a real close) leaves
 * the mark. Before, nothing cleared it.
 */
TEST_F(conn, data_after_close_clears_mark)
{
	struct client_opts co = {.tcp_flags = ACK, .payload = 20};
	struct run_result r;
	uint8_t in[256], dst[16];
	size_t n;

	established_then_swap(_metadata, self, &self->f6);
	ASSERT_EQ(3, sent_to(self, &self->f6, RST));
	ASSERT_EQ(3, sent_to(self, &self->f6, ACK));
	ASSERT_EQ(MAGLEV_CONN_F_CLOSING, entry_flags(self->dp, &self->f6));
	n = build_client(in, &self->f6, &co);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	outer_dst(&r, 14, dst);
	ASSERT_EQ(0, memcmp(dst, self->be[3], 16));
	ASSERT_EQ(0, entry_flags(self->dp, &self->f6));
	ASSERT_EQ(0, age_entry(self->dp, &self->f6, 2 * TCP_CLOSED_NS));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
}

/*
 * A SYN after the closing timeout whose pick is the entry's backend (a
 * reused tuple, table unchanged) starts a new connection: the entry is no
 * longer closing. Before, the entry was left as it was (maglev_conn_same
 * ignored the flags), so the new connection inherited the closing mark.
 */
TEST_F(conn, syn_reusing_closed_tuple_clears_mark)
{
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(3, sent_to(self, &self->f4, FIN | ACK));
	ASSERT_EQ(0, age_entry(self->dp, &self->f4, 2 * TCP_CLOSED_NS));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(0, entry_flags(self->dp, &self->f4));
}

/* The new-flow limit is per CPU: keep every packet of a test on one. */
static int pin_to_current_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void set_cfg(struct __test_metadata *_metadata, struct maglev_dp *dp, uint64_t udp_idle,
		    uint32_t limit)
{
	struct maglev_config cfg;

	ASSERT_EQ(0, maglev_dp_get_config(dp, &cfg));
	cfg.udp_idle_ns = udp_idle;
	cfg.new_flow_limit = limit;
	ASSERT_EQ(0, maglev_dp_set_config(dp, &cfg));
}

TEST_F(conn, udp_idle_expiry)
{
	struct flow f = self->f4;
	int i;

	f.proto = IPPROTO_UDP;
	set_cfg(_metadata, self->dp, 300 * 1000000ULL, 0);
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &f, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	/* Packets every 100 ms keep the entry alive well past 300 ms. */
	for (i = 0; i < 6; i++) {
		usleep(100 * 1000);
		ASSERT_EQ(3, sent_to(self, &f, 0));
	}
	ASSERT_EQ(0, counter(self->dp, MAGLEV_CTR_CONN_EXPIRED));
	/* Idle longer than 300 ms: re-picked from the current table. */
	usleep(450 * 1000);
	ASSERT_EQ(5, sent_to(self, &f, 0));
	ASSERT_EQ(1, counter(self->dp, MAGLEV_CTR_CONN_EXPIRED));
	ASSERT_EQ(5, sent_to(self, &f, 0));
}

TEST_F(conn, tcp_entries_do_not_expire)
{
	set_cfg(_metadata, self->dp, 50 * 1000000ULL, 0);
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	usleep(120 * 1000);
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
}

/*
 * Above new_flow_limit inserts per second (per CPU), new flows are still
 * forwarded by the Maglev pick but not recorded. The 20 flows take far less
 * than a second, so at most two windows (2 x 5 inserts) are involved.
 */
TEST_F(conn, new_flow_limit_skips_inserts)
{
	struct maglev_flow_key k;
	struct maglev_conn c;
	struct flow f = self->f4;
	uint64_t ins, skip;
	int i, present = 0;

	ASSERT_EQ(0, pin_to_current_cpu());
	ASSERT_EQ(0, fill_table(self->dp, 1, 7));
	set_cfg(_metadata, self->dp, 0, 5);
	for (i = 0; i < 20; i++) {
		f.sport = (uint16_t)(20000 + i);
		ASSERT_EQ(7, sent_to(self, &f, SYN));
	}
	ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
	skip = counter(self->dp, MAGLEV_CTR_CONN_INSERT_SKIP);
	for (i = 0; i < 20; i++) {
		f.sport = (uint16_t)(20000 + i);
		flow_key(&k, &f);
		present += !maglev_dp_conn_lookup(self->dp, &k, &c);
	}
	ASSERT_EQ(20, ins + skip);
	ASSERT_GE(10, ins);
	ASSERT_LE(5, ins);
	ASSERT_EQ(ins, present);
	ASSERT_EQ(20, reason_count(self->dp, MAGLEV_REASON_TX_FORWARD));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void random_flow(struct flow *f, const struct flow *v4, const struct flow *v6)
{
	uint64_t r = rnd();
	int i;

	*f = r & 1 ? *v6 : *v4;
	f->proto = r & 2 ? IPPROTO_UDP : IPPROTO_TCP;
	f->sport = (uint16_t)(r >> 8);
	f->dport = (uint16_t)(r >> 24);
	if (f->family == P_AF4) {
		f->src[2] = (uint8_t)(r >> 40);
		f->src[3] = (uint8_t)(r >> 48);
	} else {
		for (i = 8; i < 16; i++)
			f->src[i] = (uint8_t)(rnd() >> 3);
	}
}

/* The table of backends lo..hi (datapath indices). */
static int build_table(FIXTURE_DATA(conn) * self, int lo, int hi, uint32_t *out)
{
	return backends_table((const uint8_t(*)[16])self->be, lo, hi, out);
}

static uint32_t user_slot(const struct flow *f)
{
	struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};
	struct maglev_flow_key k;
	uint64_t h;

	flow_key(&k, f);
	if (f->family == P_AF4)
		h = maglev_flow_hash_v4(&seed, k.src[0], k.dst[0], k.sport, k.dport, k.proto);
	else
		h = maglev_flow_hash_v6(&seed, k.src, k.dst, k.sport, k.dport, k.proto);
	return maglev_slot(h, MAGLEV_TABLE_SIZE);
}

TEST_F(conn, pick_matches_userspace_10000_flows)
{
	static uint32_t table[MAGLEV_TABLE_SIZE];
	int i, seen[NBE + 1] = {0};
	struct flow f;

	ASSERT_EQ(0, build_table(self, 1, NBE, table));
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, table));
	for (i = 0; i < 10000; i++) {
		int got, want;

		random_flow(&f, &self->f4, &self->f6);
		want = (int)table[user_slot(&f)];
		got = sent_to(self, &f, SYN);
		if (got != want)
			TH_LOG("flow %d: datapath %d, userspace %d", i, got, want);
		ASSERT_EQ(want, got);
		seen[got]++;
	}
	for (i = 1; i <= NBE; i++)
		ASSERT_LT(800, seen[i]); /* every backend used, roughly evenly */
}

TEST_F(conn, table_read_back_and_clear)
{
	static uint32_t table[MAGLEV_TABLE_SIZE], back[MAGLEV_TABLE_SIZE];

	ASSERT_EQ(0, build_table(self, 1, NBE, table));
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, table));
	ASSERT_EQ(0, maglev_dp_table_read(self->dp, 1, back));
	ASSERT_EQ(0, memcmp(table, back, sizeof(table)));
	table[5] = MAGLEV_MAX_BACKENDS;
	ASSERT_EQ(-EINVAL, maglev_dp_table_swap(self->dp, 1, table));
	ASSERT_EQ(-EINVAL, maglev_dp_table_swap(self->dp, MAGLEV_MAX_VIPS, back));
	ASSERT_EQ(0, maglev_dp_table_clear(self->dp, 1));
	ASSERT_EQ(-ENOENT, maglev_dp_table_read(self->dp, 1, back));
	ASSERT_EQ(0, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_DROP_NO_TABLE));
}

struct swapper {
	struct maglev_dp *dp;
	const uint32_t *t[2];
	volatile int stop;
	long swaps;
	int err;
};

static void *swap_loop(void *arg)
{
	struct swapper *s = arg;

	while (!s->stop) {
		int ret = maglev_dp_table_swap(s->dp, 1, s->t[s->swaps & 1]);

		if (ret) {
			s->err = ret;
			break;
		}
		s->swaps++;
	}
	return NULL;
}

/*
 * One thread swaps between two tables with disjoint backends while this
 * one sends new flows: each packet must go to the backend that the old or
 * the new table holds for its slot, and never be dropped.
 */
TEST_F(conn, swap_atomic_under_traffic)
{
	static uint32_t ta[MAGLEV_TABLE_SIZE], tb[MAGLEV_TABLE_SIZE];
	struct swapper s = {.dp = self->dp, .t = {ta, tb}};
	long from_a = 0, from_b = 0, bad = 0, i;
	struct timespec t0, t1;
	pthread_t th;
	struct flow f;

	ASSERT_EQ(0, build_table(self, 1, NBE / 2, ta));
	ASSERT_EQ(0, build_table(self, NBE / 2 + 1, NBE, tb));
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 1, ta));
	ASSERT_EQ(0, pthread_create(&th, NULL, swap_loop, &s));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0;; i++) {
		uint32_t slot;
		int got;

		random_flow(&f, &self->f4, &self->f6);
		slot = user_slot(&f);
		got = sent_to(self, &f, SYN);
		if (got > 0 && (uint32_t)got == ta[slot])
			from_a++;
		else if (got > 0 && (uint32_t)got == tb[slot])
			from_b++;
		else
			bad++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* Each swap waits for an RCU grace period (about 15 ms here). */
		if ((i >= 20000 && s.swaps >= 20) ||
		    (t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec > 3000000000L)
			break;
	}
	s.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%ld packets, %ld swaps: %ld old/new table A, %ld table B, %ld elsewhere", i + 1,
	       s.swaps, from_a, from_b, bad);
	ASSERT_EQ(0, s.err);
	ASSERT_EQ(0, bad);
	ASSERT_LE(4, s.swaps);
	ASSERT_LT(0, from_a);
	ASSERT_LT(0, from_b);
	ASSERT_EQ(0, reason_count(self->dp, MAGLEV_REASON_DROP_NO_BACKEND));
	ASSERT_EQ(0, reason_count(self->dp, MAGLEV_REASON_DROP_NO_TABLE));
}

/* A VIP map change makes established flows look their VIP up again: an
 * unrelated change keeps the backend, a more specific VIP takes the flow
 * over, a deleted VIP sends it up the stack.
 */
TEST_F(conn, vip_changes_revalidate_established_flows)
{
	uint8_t other[16];
	struct maglev_vip_key k;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 4));
	v4addr(other, 203, 0, 113, 77);
	ASSERT_EQ(0, add_vip(self->dp, other, P_AF4, 53, IPPROTO_UDP, 9, 0, 0));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(2, counter(self->dp, MAGLEV_CTR_CONN_HIT));

	/* An exact-port VIP for the flow's port now owns it. */
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 80, IPPROTO_TCP, 2, 0, 0));
	ASSERT_EQ(0, fill_table(self->dp, 2, 5));
	ASSERT_EQ(5, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(5, sent_to(self, &self->f4, ACK));

	/* Deleted: not a VIP any more, even for the established flow. */
	vip_key(&k, self->f4.dst, P_AF4, 80, IPPROTO_TCP);
	ASSERT_EQ(0, maglev_dp_vip_del(self->dp, &k));
	vip_key(&k, self->f4.dst, P_AF4, 0, IPPROTO_TCP);
	ASSERT_EQ(0, maglev_dp_vip_del(self->dp, &k));
	ASSERT_EQ(0, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(1, reason_count(self->dp, MAGLEV_REASON_PASS_NOT_VIP));
}

/* Several VIPs swapped in one batch: each gets exactly its own table. */
TEST_F(conn, table_swap_batch)
{
	static uint32_t t1[MAGLEV_TABLE_SIZE], t2[MAGLEV_TABLE_SIZE], back[MAGLEV_TABLE_SIZE];
	const uint32_t *tables[2] = {t1, t2};
	uint32_t ids[2] = {1, 2}, bad[2] = {1, MAGLEV_MAX_VIPS};
	uint8_t vip2[16];
	struct flow f = self->f4;

	ASSERT_EQ(0, build_table(self, 1, NBE / 2, t1));
	ASSERT_EQ(0, build_table(self, NBE / 2 + 1, NBE, t2));
	v4addr(vip2, 203, 0, 113, 20);
	ASSERT_EQ(0, add_vip(self->dp, vip2, P_AF4, 0, IPPROTO_TCP, 2, 0, 0));
	ASSERT_EQ(0, maglev_dp_table_swap_batch(self->dp, 2, ids, tables));
	ASSERT_EQ(0, maglev_dp_table_read(self->dp, 1, back));
	ASSERT_EQ(0, memcmp(t1, back, sizeof(back)));
	ASSERT_EQ(0, maglev_dp_table_read(self->dp, 2, back));
	ASSERT_EQ(0, memcmp(t2, back, sizeof(back)));
	ASSERT_EQ((int)t1[user_slot(&f)], sent_to(self, &f, SYN));
	memcpy(f.dst, vip2, 16);
	ASSERT_EQ((int)t2[user_slot(&f)], sent_to(self, &f, SYN));
	/* A bad VIP id anywhere: nothing installed. */
	ASSERT_EQ(0, maglev_dp_table_clear(self->dp, 1));
	ASSERT_EQ(-EINVAL, maglev_dp_table_swap_batch(self->dp, 2, bad, tables));
	ASSERT_EQ(-ENOENT, maglev_dp_table_read(self->dp, 1, back));
}

/* A SYN over the new-flow limit must not leave the reused tuple's old entry
 * in place: the rest of the connection follows the SYN's pick.
 */
TEST_F(conn, syn_over_limit_drops_stale_entry)
{
	struct maglev_flow_key k;
	struct maglev_conn c;
	struct flow g = self->f4;

	ASSERT_EQ(0, pin_to_current_cpu());
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ASSERT_EQ(0, age_syn_entry(self->dp, &self->f4)); /* not a retransmit */
	set_cfg(_metadata, self->dp, 0, 1);
	g.sport++;
	ASSERT_EQ(5, sent_to(self, &g, SYN)); /* uses this second's only insert */
	ASSERT_EQ(5, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(1, counter(self->dp, MAGLEV_CTR_CONN_INSERT_SKIP));
	flow_key(&k, &self->f4);
	ASSERT_EQ(-ENOENT, maglev_dp_conn_lookup(self->dp, &k, &c));
	ASSERT_EQ(5, sent_to(self, &self->f4, ACK));
}

/* maglev_dp_conn_delete: the flow's next packet is re-picked. */
TEST_F(conn, conn_delete_repicks)
{
	struct maglev_flow_key k;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ASSERT_EQ(3, sent_to(self, &self->f6, ACK));
	flow_key(&k, &self->f6);
	ASSERT_EQ(0, maglev_dp_conn_delete(self->dp, &k));
	ASSERT_EQ(-ENOENT, maglev_dp_conn_delete(self->dp, &k));
	ASSERT_EQ(5, sent_to(self, &self->f6, ACK));
}

/* n flows (source ports from 30000) that share one bucket. */
static int same_bucket(struct maglev_dp *dp, const struct flow *base, struct flow *out, int n)
{
	static uint32_t first[65536];
	struct flow f = *base;
	uint32_t b, port;
	int i, got;

	memset(first, 0xff, sizeof(first));
	/* The fixture's table has 16384 buckets: 5 of 35000 ports share
	 * one with near certainty; look for the first bucket reaching n.
	 */
	for (port = 30000; port < 65535; port++) {
		f.sport = (uint16_t)port;
		b = bucket_of(dp, &f) & 0xffff;
		if (first[b] == UINT32_MAX)
			first[b] = 0;
		if (++first[b] < (uint32_t)n)
			continue;
		got = 0;
		for (i = 30000; i <= (int)port && got < n; i++) {
			f.sport = (uint16_t)i;
			if ((bucket_of(dp, &f) & 0xffff) == b)
				out[got++] = f;
		}
		return got == n ? 0 : -1;
	}
	return -1;
}

/* The flow has an entry in the connection table. */
static int conn_held(struct maglev_dp *dp, const struct flow *f)
{
	struct maglev_flow_key k;
	struct maglev_conn c;

	flow_key(&k, f);
	return maglev_dp_conn_lookup(dp, &k, &c) == 0;
}

/*
 * A full bucket replaces by second chance: the new flow takes the first way
 * whose flow saw no packet since it was written (or since the last scan);
 * flows that did keep their entry.
 */
TEST_F(conn, bucket_full_replaces_unreferenced_flow)
{
	struct maglev_flow_key k;
	struct maglev_conn c;
	struct flow f[MAGLEV_CONN_WAYS + 1];
	int i;

	ASSERT_EQ(0, same_bucket(self->dp, &self->f4, f, MAGLEV_CONN_WAYS + 1));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		ASSERT_EQ(3, sent_to(self, &f[i], SYN));
	/* Every flow but the third sees a second packet. */
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		if (i != 2)
			ASSERT_EQ(3, sent_to(self, &f[i], ACK));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ASSERT_EQ(5, sent_to(self, &f[MAGLEV_CONN_WAYS], SYN));
	for (i = 0; i <= MAGLEV_CONN_WAYS; i++) {
		flow_key(&k, &f[i]);
		ASSERT_EQ(i == 2 ? -ENOENT : 0, maglev_dp_conn_lookup(self->dp, &k, &c));
	}
	/* The evicted flow is re-picked from the current table, the others
	 * keep their backend.
	 */
	ASSERT_EQ(3, sent_to(self, &f[0], ACK));
	ASSERT_EQ(3, sent_to(self, &f[3], ACK));
	ASSERT_EQ(5, sent_to(self, &f[2], ACK));
}

/*
 * Four flows that keep sending fill a bucket: a new flow has to evict one of
 * them, but the next new flow evicts that newcomer (it has sent one packet),
 * not another of the four. Before, the first eviction also cleared every
 * reference bit and the next new flow took a sending flow's way.
 */
TEST_F(conn, crowded_bucket_loses_one_flow_not_all)
{
	struct flow f[MAGLEV_CONN_WAYS + 2];
	int i, held[MAGLEV_CONN_WAYS + 2], n;

	ASSERT_EQ(0, same_bucket(self->dp, &self->f4, f, MAGLEV_CONN_WAYS + 2));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	for (i = 0; i < MAGLEV_CONN_WAYS; i++) {
		ASSERT_EQ(3, sent_to(self, &f[i], SYN));
		ASSERT_EQ(3, sent_to(self, &f[i], ACK));
	}
	ASSERT_EQ(3, sent_to(self, &f[MAGLEV_CONN_WAYS], SYN));
	for (i = n = 0; i < MAGLEV_CONN_WAYS + 1; i++) {
		held[i] = conn_held(self->dp, &f[i]);
		n += held[i];
	}
	ASSERT_EQ(MAGLEV_CONN_WAYS, n);
	ASSERT_TRUE(held[MAGLEV_CONN_WAYS]);
	ASSERT_EQ(3, sent_to(self, &f[MAGLEV_CONN_WAYS + 1], SYN));
	ASSERT_FALSE(conn_held(self->dp, &f[MAGLEV_CONN_WAYS]));
	ASSERT_TRUE(conn_held(self->dp, &f[MAGLEV_CONN_WAYS + 1]));
	for (i = 0; i < MAGLEV_CONN_WAYS; i++)
		ASSERT_EQ(held[i], conn_held(self->dp, &f[i]));
}

/*
 * A full bucket gives a new flow the way of a closed connection whose time
 * is up before any other, even one that sent nothing since: the closed one
 * is dead, the others may not be. Before, closed entries were evicted like
 * any other (here: the way the new flow's tag names, chosen not to be the
 * closed one's).
 */
TEST_F(conn, closed_entry_evicted_first)
{
	struct flow f[MAGLEV_CONN_WAYS + 1];
	struct maglev_conn_params p;
	struct maglev_flow_key k;
	struct conn_view v;
	uint32_t zero = 0, bkt;
	int i, victim, closed = -1;

	ASSERT_EQ(0, conn_view_open(self->dp, &v));
	ASSERT_EQ(0, same_bucket(self->dp, &self->f4, f, MAGLEV_CONN_WAYS + 1));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	for (i = 0; i < MAGLEV_CONN_WAYS; i++) {
		ASSERT_EQ(3, sent_to(self, &f[i], SYN));
		ASSERT_EQ(3, sent_to(self, &f[i], ACK));
	}
	/* The way the old rule gives the new flow, and a flow in another. */
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(self->dp, "maglev_connkey"), &zero, &p));
	flow_key(&k, &f[MAGLEV_CONN_WAYS]);
	victim = (int)(maglev_conn_tag(maglev_conn_hash(&k, p.seed)) & (MAGLEV_CONN_WAYS - 1));
	bkt = bucket_of(self->dp, &f[0]);
	for (i = 0; i < MAGLEV_CONN_WAYS && closed < 0; i++)
		if (conn_view_slot(self->dp, &v, &f[i]) != &v.m[bkt].slot[victim])
			closed = i;
	ASSERT_LE(0, closed);
	ASSERT_EQ(3, sent_to(self, &f[closed], FIN | ACK));
	usleep(TCP_CLOSED_NS * 2 / 1000);
	ASSERT_EQ(3, sent_to(self, &f[MAGLEV_CONN_WAYS], SYN));
	for (i = 0; i <= MAGLEV_CONN_WAYS; i++)
		ASSERT_EQ(i != closed, conn_held(self->dp, &f[i]));
	munmap(v.m, v.bytes);
}

/*
 * A slot whose check word does not match its contents (what two CPUs
 * writing one way at the same instant could leave, or what a CPU reads
 * while another rewrites this flow's entry) is a miss: the flow goes to
 * its Maglev pick, never to the torn value. And it is not written over:
 * it may be another CPU's write of this very flow, half done.
 */
TEST_F(conn, torn_slot_is_a_miss)
{
	struct maglev_conn_slot *s;
	struct maglev_flow_key k;
	struct maglev_conn c;
	struct conn_view v;
	uint64_t miss, ins;

	ASSERT_EQ(0, conn_view_open(self->dp, &v));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	s = conn_view_slot(self->dp, &v, &self->f6);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(3, s->conn.backend_idx);
	/* Another backend in the value, the check word left as it was. */
	s->conn.backend_idx = 7;
	flow_key(&k, &self->f6);
	ASSERT_EQ(-ENOENT, maglev_dp_conn_lookup(self->dp, &k, &c));
	miss = counter(self->dp, MAGLEV_CTR_CONN_MISS);
	ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
	ASSERT_EQ(5, sent_to(self, &self->f6, ACK));
	ASSERT_EQ(5, sent_to(self, &self->f6, SYN));
	ASSERT_EQ(miss + 2, counter(self->dp, MAGLEV_CTR_CONN_MISS));
	/* Neither packet wrote: the slot is as torn as it was, no copy. */
	ASSERT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
	ASSERT_EQ(7, s->conn.backend_idx);
	ASSERT_EQ(1, conn_view_copies(self->dp, &v, &self->f6));
	munmap(v.m, v.bytes);
}

/*
 * What a CPU reading an entry sees while another revalidates it after a
 * VIP change: the VIP generation already rewritten, the rest not yet. It is
 * still the flow's entry: the packet keeps its backend, nothing is written.
 * (Before, vip_gen was in the check word and rewritten apart from it: the
 * reader took the flow for new, sent it to a fresh pick and recorded it a
 * second time.)
 */
TEST_F(conn, revalidation_seen_half_done_keeps_backend)
{
	struct maglev_conn_slot *s;
	struct conn_view v;
	uint32_t zero = 0, gen;
	uint8_t other[16];
	uint64_t ins;

	ASSERT_EQ(0, conn_view_open(self->dp, &v));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	/* An unrelated VIP change; then the first store of a revalidation. */
	v4addr(other, 203, 0, 113, 77);
	ASSERT_EQ(0, add_vip(self->dp, other, P_AF4, 53, IPPROTO_UDP, 9, 0, 0));
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(self->dp, "maglev_vipgen"), &zero, &gen));
	s = conn_view_slot(self->dp, &v, &self->f4);
	ASSERT_NE(NULL, s);
	ASSERT_NE(gen, s->vip_gen);
	s->vip_gen = gen;
	ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
	ASSERT_EQ(1, conn_view_copies(self->dp, &v, &self->f4));
	/* And the revalidation itself: the next VIP change. */
	ASSERT_EQ(0, add_vip(self->dp, other, P_AF4, 54, IPPROTO_UDP, 9, 0, 0));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(self->dp, "maglev_vipgen"), &zero, &gen));
	ASSERT_EQ(gen, s->vip_gen);
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
	munmap(v.m, v.bytes);
}

/*
 * A connection idle since the bucket's reference bits were last cleared
 * (what its replacement does when all four ways were in use) is not
 * protected: its SYN takes the pick, as any SYN did before.
 */
TEST_F(conn, syn_for_idle_entry_repicks)
{
	uint32_t bkt = bucket_of(self->dp, &self->f4);
	struct maglev_conn_slot *s;
	struct conn_view v;
	int w;

	ASSERT_EQ(0, conn_view_open(self->dp, &v));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &self->f4, SYN));
	ASSERT_EQ(3, sent_to(self, &self->f4, ACK));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	s = conn_view_slot(self->dp, &v, &self->f4);
	ASSERT_NE(NULL, s);
	w = (int)(s - v.m[bkt].slot);
	ASSERT_EQ(MAGLEV_CONN_REF_USED, v.m[bkt].ref[w]);
	v.m[bkt].ref[w] = MAGLEV_CONN_REF_SEEN;
	ASSERT_EQ(5, sent_to(self, &self->f4, SYN));
	munmap(v.m, v.bytes);
}

/*
 * Another CPU refreshed a UDP entry with its clock reading, later than
 * this CPU's (read just before): the flow was seen a moment ago, not 2^64
 * ns ago. The entry stays; before, the unsigned difference wrapped and
 * expired it, and the flow moved to the current table's pick.
 */
TEST_F(conn, udp_later_last_seen_is_not_idle)
{
	struct maglev_conn_slot *s;
	struct conn_view v;
	struct flow f = self->f4;
	struct timespec ts;

	f.proto = IPPROTO_UDP;
	ASSERT_EQ(0, conn_view_open(self->dp, &v));
	set_cfg(_metadata, self->dp, 300 * 1000000ULL, 0);
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(3, sent_to(self, &f, 0));
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	s = conn_view_slot(self->dp, &v, &f);
	ASSERT_NE(NULL, s);
	/* bpf_ktime_get_coarse_ns() is CLOCK_MONOTONIC_COARSE: a few ticks
	 * ahead, as a CPU that read the clock after ours could have stored.
	 */
	ASSERT_EQ(0, clock_gettime(CLOCK_MONOTONIC_COARSE, &ts));
	s->conn.last_seen_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec + 20000000ULL;
	ASSERT_EQ(3, sent_to(self, &f, 0));
	ASSERT_EQ(3, sent_to(self, &f, 0));
	ASSERT_EQ(0, counter(self->dp, MAGLEV_CTR_CONN_EXPIRED));
	munmap(v.m, v.bytes);
}

/* maglev_dp_conn_flush forgets every flow and says how many there were. */
TEST_F(conn, conn_flush_forgets_all)
{
	struct maglev_flow_key k;
	struct maglev_conn c;
	struct flow f = self->f4;
	int i;

	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	for (i = 0; i < 10; i++) {
		f.sport = (uint16_t)(50000 + i);
		ASSERT_EQ(3, sent_to(self, &f, SYN));
	}
	ASSERT_EQ(0, fill_table(self->dp, 1, 5));
	ASSERT_EQ(10, maglev_dp_conn_flush(self->dp));
	ASSERT_EQ(0, maglev_dp_conn_flush(self->dp));
	for (i = 0; i < 10; i++) {
		f.sport = (uint16_t)(50000 + i);
		flow_key(&k, &f);
		ASSERT_EQ(-ENOENT, maglev_dp_conn_lookup(self->dp, &k, &c));
		ASSERT_EQ(5, sent_to(self, &f, ACK));
	}
}

/*
 * The VIP cache in front of the VIP hash map follows every VIP change, and
 * a cache slot that does not verify (torn, or stale) is never used: the
 * hash map answers.
 */
TEST_F(conn, vip_cache_follows_changes)
{
	int fd = maglev_dp_map_fd(self->dp, "maglev_vipcache");
	struct maglev_vip_cache_slot c;
	struct maglev_vip_key k;
	struct flow f = self->f4;
	uint32_t i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	ASSERT_EQ(0, fill_table(self->dp, 2, 5));
	f.sport = 41000;
	ASSERT_EQ(3, sent_to(self, &f, SYN));
	/* Same key, another VIP id (table): new flows follow at once. */
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 0, IPPROTO_TCP, 2, 0, 0));
	f.sport++;
	ASSERT_EQ(5, sent_to(self, &f, SYN));
	/* The slot names this key; make it claim the old VIP id without
	 * a matching check word: it must be ignored.
	 */
	vip_key(&k, self->f4.dst, P_AF4, 0, IPPROTO_TCP);
	i = maglev_vip_cache_index(&k);
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &i, &c));
	ASSERT_TRUE(maglev_vip_key_eq(&c.key, &k));
	ASSERT_EQ(2, c.info.vip_id);
	c.info.vip_id = 1;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &i, &c, 0));
	f.sport++;
	ASSERT_EQ(5, sent_to(self, &f, SYN));
	/* Deleted: not a VIP any more (XDP_PASS), cached or not. */
	ASSERT_EQ(0, maglev_dp_vip_del(self->dp, &k));
	ASSERT_EQ(0, bpf_map_lookup_elem(fd, &i, &c));
	ASSERT_FALSE(maglev_vip_key_eq(&c.key, &k));
	f.sport++;
	ASSERT_EQ(0, sent_to(self, &f, SYN));
}

/* Bucket of proven flows under attack (two_packet_flows_do_not_evict_proven). */
#define PROVE_CAND 24 /* flows of one bucket to choose the newcomers from */

struct prove_case {
	struct flow f[PROVE_CAND];
	int newc[2]; /* newcomers whose tag names a proven flow's way */
};

/* n flows in base's bucket, varying source port and the last octet of
 * the source address (more than same_bucket's ports alone give), hashed
 * here with the table's seed and mask.
 */
static int same_bucket_wide(struct maglev_dp *dp, const struct flow *base, struct flow *out, int n)
{
	struct maglev_conn_params p;
	struct maglev_flow_key k;
	struct flow f = *base;
	uint32_t zero = 0, b, host, port;
	int got = 0;

	if (bpf_map_lookup_elem(maglev_dp_map_fd(dp, "maglev_connkey"), &zero, &p))
		return -1;
	flow_key(&k, base);
	b = (uint32_t)maglev_conn_hash(&k, p.seed) & p.mask;
	for (host = 1; host < 255 && got < n; host++) {
		for (port = 1024; port < 65536 && got < n; port++) {
			f.src[3] = (uint8_t)host;
			f.sport = (uint16_t)port;
			flow_key(&k, &f);
			if (((uint32_t)maglev_conn_hash(&k, p.seed) & p.mask) == b)
				out[got++] = f;
		}
	}
	return got == n ? 0 : -1;
}

/* f[0..3] fill the bucket now, ways 0..3; f[1] and f[3] are proven after
 * the caller's sleep (the tag, odd, names way 1 or 3).
 */
static void prove_start(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
			struct prove_case *pc, uint8_t proto, struct conn_view *v)
{
	struct maglev_conn_params p;
	struct maglev_flow_key k;
	struct flow base = self->f4;
	uint32_t zero = 0, bkt;
	int i, w, n = 0;

	base.proto = proto;
	ASSERT_EQ(0, same_bucket_wide(self->dp, &base, pc->f, PROVE_CAND));
	bkt = bucket_of(self->dp, &pc->f[0]);
	for (i = 0; i < MAGLEV_CONN_WAYS; i++) {
		ASSERT_EQ(3, sent_to(self, &pc->f[i], SYN));
		ASSERT_EQ(3, sent_to(self, &pc->f[i], ACK));
		ASSERT_TRUE(conn_view_slot(self->dp, v, &pc->f[i]) == &v->m[bkt].slot[i]);
	}
	/* Newcomers whose tag names a proven flow's way: the way the old
	 * rule evicted once every way had sent twice.
	 */
	ASSERT_EQ(0, bpf_map_lookup_elem(maglev_dp_map_fd(self->dp, "maglev_connkey"), &zero, &p));
	for (i = MAGLEV_CONN_WAYS; i < PROVE_CAND && n < 2; i++) {
		flow_key(&k, &pc->f[i]);
		w = (int)(maglev_conn_tag(maglev_conn_hash(&k, p.seed)) & (MAGLEV_CONN_WAYS - 1));
		if (w == 1 + 2 * n)
			pc->newc[n++] = i;
	}
	ASSERT_EQ(2, n);
}

/* After the sleep: f[1], f[3] send again (proven), f[0], f[2] are
 * recorded anew with two packets in a row (what a spoofer sends), then the
 * two newcomers come, each with two packets: each evicts an unproven flow,
 * never a proven one.
 */
static void prove_attack(struct __test_metadata *_metadata, FIXTURE_DATA(conn) * self,
			 struct prove_case *pc)
{
	struct maglev_flow_key k;
	int i, held = 0;

	for (i = 1; i < MAGLEV_CONN_WAYS; i += 2)
		ASSERT_EQ(3, sent_to(self, &pc->f[i], ACK));
	for (i = 0; i < MAGLEV_CONN_WAYS; i += 2) {
		flow_key(&k, &pc->f[i]);
		ASSERT_EQ(0, maglev_dp_conn_delete(self->dp, &k));
		ASSERT_EQ(3, sent_to(self, &pc->f[i], SYN));
		ASSERT_EQ(3, sent_to(self, &pc->f[i], ACK));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(3, sent_to(self, &pc->f[pc->newc[i]], SYN));
		ASSERT_EQ(3, sent_to(self, &pc->f[pc->newc[i]], ACK));
		ASSERT_TRUE(conn_held(self->dp, &pc->f[1]));
		ASSERT_TRUE(conn_held(self->dp, &pc->f[3]));
		ASSERT_TRUE(conn_held(self->dp, &pc->f[pc->newc[i]]));
	}
	for (i = 0; i < MAGLEV_CONN_WAYS; i += 2)
		held += conn_held(self->dp, &pc->f[i]);
	ASSERT_GE(1, held);
}

/*
 * Two packets per spoofed tuple used to make a flood flow look like an
 * established one: a full bucket then cleared every way's recent bit and
 * the newcomer took the way its tag named, a proven flow's as often as not.
 * A flow is proven only by sending in a later time slot
 * (MAGLEV_CONN_PROVEN_NS after its first packet); a bucket of proven and
 * two-packet flows loses the two-packet ones first. TCP (judged by the
 * entry's age) and UDP (seen only by a later packet), one sleep for both.
 */
TEST_F(conn, two_packet_flows_do_not_evict_proven)
{
	static struct prove_case tcp, udp;
	struct conn_view v;

	set_cfg(_metadata, self->dp, 30 * 1000000000ULL, 0);
	ASSERT_EQ(0, conn_view_open(self->dp, &v));
	ASSERT_EQ(0, fill_table(self->dp, 1, 3));
	prove_start(_metadata, self, &tcp, IPPROTO_TCP, &v);
	prove_start(_metadata, self, &udp, IPPROTO_UDP, &v);
	usleep((MAGLEV_CONN_PROVEN_NS + 100 * 1000000ULL) / 1000);
	prove_attack(_metadata, self, &tcp);
	prove_attack(_metadata, self, &udp);
	munmap(v.m, v.bytes);
}

TEST_HARNESS_MAIN
