// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Second chance (include/maglev_second.h), both halves through
 * BPF_PROG_TEST_RUN. Balancer: the previous owner is carried in GUE only for
 * a TCP packet with no connection entry, no SYN, on a second-chance VIP
 * whose slot has a previous owner; never for hits, SYNs, other VIPs, or a
 * previous owner that is gone. Decap, in a network namespace of the test's
 * own with real sockets: a segment a local socket claims (established) is
 * delivered, a SYN is delivered, an ACK a listener's syncookie validates
 * is delivered, one nothing claims is sent on to the previous owner with
 * the field cleared, and a packet sent on once is never sent on again.
 * Both with an IPv4 and an IPv6 outer header (the *_v6_outer cases).
 */
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include "fixture.h"
#include "maglev_second.h"
#include "maglev_decap.skel.h"
#include "decap_cfg.h"

static const uint8_t BE1[4] = {192, 0, 2, 1}, BE2[4] = {192, 0, 2, 2};

/* Offsets in an IPv4-outer GUE frame without VLAN tags. */
#define OFF_IP	 14
#define OFF_UDP	 34
#define OFF_PREV 46

/* IPv6 outer (backends 2001:db8:b::1 and ::2): offsets without VLAN tags. */
static const uint8_t BE1_6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0b, [15] = 1};
static const uint8_t BE2_6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x0b, [15] = 2};
#define OFF6_UDP  54
#define OFF6_PREV 66

/* The GUE frame the balancer sends for the client frame client (n bytes,
 * flow f) to backend be with an outer header of family fam, carrying prev
 * (NULL: plain GUE). Built from the tests' own builders.
 */
static size_t gue_wrap(uint8_t *out, const uint8_t *client, size_t n, const struct flow *f, int fam,
		       const uint8_t *be, const uint8_t *prev)
{
	struct encap_want w = {.outer_family = fam, .gue = 1, .gue_port = 6080};
	size_t alen = fam == P_AF4 ? 4 : 16, len;
	size_t udp = fam == P_AF4 ? OFF_UDP : OFF6_UDP, gue = udp + 8, opt = gue + 4;

	memcpy(w.backend, be, alen);
	memcpy(w.src4, SRC4, 4);
	w.src4_plen = SRC4_PLEN;
	memcpy(w.src6, SRC6, 16);
	w.src6_plen = SRC6_PLEN;
	len = build_encap(out, client, n, f, &w);
	if (!prev)
		return len;
	memmove(out + opt + 20, out + opt, len - opt);
	memset(out + opt, 0, 20);
	out[gue] = MAGLEV_GUE_PREV_WORDS; /* flags stay 0 */
	out[opt] = MAGLEV_GUE_PREV_TYPE;
	out[opt + 1] = (uint8_t)fam;
	memcpy(out + opt + 4, prev, alen);
	len += 20;
	put16(out + udp + 4, (uint16_t)(len - udp));
	if (fam == P_AF6) {
		put16(out + OFF_IP + 4, (uint16_t)(len - OFF_IP - 40));
		return len;
	}
	put16(out + OFF_IP + 2, (uint16_t)(len - OFF_IP));
	put16(out + OFF_IP + 10, 0);
	put16(out + OFF_IP + 10, csum_finish(csum_add(0, out + OFF_IP, 20)));
	return len;
}

/* The same for a segment of f with TCP flags flags, 20 bytes of payload. */
static size_t gue_frame_fam(uint8_t *out, const struct flow *f, uint8_t flags, int fam,
			    const uint8_t *be, const uint8_t *prev)
{
	struct client_opts co = {.payload = 20, .tcp_flags = flags};
	uint8_t client[256];
	size_t n = build_client(client, f, &co);

	return gue_wrap(out, client, n, f, fam, be, prev);
}

static size_t gue_frame(uint8_t *out, const struct flow *f, uint8_t flags, const uint8_t *be,
			const uint8_t *prev)
{
	return gue_frame_fam(out, f, flags, P_AF4, be, prev);
}

static size_t gue_frame6(uint8_t *out, const struct flow *f, uint8_t flags, const uint8_t *be,
			 const uint8_t *prev)
{
	return gue_frame_fam(out, f, flags, P_AF6, be, prev);
}

FIXTURE(lb)
{
	struct maglev_dp *dp;
	int prog;
	struct flow f4, f6;
};

/* VIP 0 (203.0.113.10:80, GUE, second chance): every slot owned by
 * backend 1, previously by backend 2. VIP 1 (:81) the same table without
 * the flag.
 */
FIXTURE_SETUP(lb)
{
	static uint32_t owner[MAGLEV_TABLE_SIZE], prev[MAGLEV_TABLE_SIZE];
	struct maglev_vip_info info = {.vip_id = 0,
				       .encap = MAGLEV_ENCAP_GUE,
				       .flags = MAGLEV_VIP_F_SECOND_CHANCE,
				       .gue_port = htons(6080)};
	struct maglev_vip_key k;
	uint8_t a[16];
	uint32_t i;

	self->dp = open_dp(_metadata);
	self->prog = maglev_dp_prog_fd(self->dp);
	client_flows(&self->f4, &self->f6);
	vip_key(&k, self->f4.dst, P_AF4, 80, IPPROTO_TCP);
	ASSERT_EQ(0, maglev_dp_vip_set(self->dp, &k, &info));
	ASSERT_EQ(0, add_vip(self->dp, self->f4.dst, P_AF4, 81, IPPROTO_TCP, 1, MAGLEV_ENCAP_GUE,
			     6080));
	v4addr(a, 192, 0, 2, 1);
	ASSERT_EQ(0, add_backend(self->dp, 1, a, P_AF4));
	v4addr(a, 192, 0, 2, 2);
	ASSERT_EQ(0, add_backend(self->dp, 2, a, P_AF4));
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		owner[i] = 1;
		prev[i] = 2;
	}
	ASSERT_EQ(0, maglev_dp_table_swap_prev(self->dp, 0, owner, prev));
	ASSERT_EQ(0, maglev_dp_table_swap_prev(self->dp, 1, owner, prev));
	/* VIP 2 (:82): the same with IPv6 backends 3 (owner) and 4 (before). */
	info.vip_id = 2;
	vip_key(&k, self->f4.dst, P_AF4, 82, IPPROTO_TCP);
	ASSERT_EQ(0, maglev_dp_vip_set(self->dp, &k, &info));
	ASSERT_EQ(0, add_backend(self->dp, 3, BE1_6, P_AF6));
	ASSERT_EQ(0, add_backend(self->dp, 4, BE2_6, P_AF6));
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		owner[i] = 3;
		prev[i] = 4;
	}
	ASSERT_EQ(0, maglev_dp_table_swap_prev(self->dp, 2, owner, prev));
}

FIXTURE_TEARDOWN(lb)
{
	maglev_dp_close(self->dp);
}

static void run_client(struct __test_metadata *_metadata, int prog, const struct flow *f,
		       uint8_t flags, struct run_result *r)
{
	struct client_opts co = {.payload = 20, .tcp_flags = flags};
	uint8_t in[256];
	size_t n = build_client(in, f, &co);

	ASSERT_EQ(0, run_prog(prog, in, n, r));
	ASSERT_EQ(XDP_TX, r->action);
}

/* A non-SYN miss carries backend 2, byte for byte, and is not recorded:
 * the next packet carries it too.
 */
TEST_F(lb, miss_carries_previous_owner)
{
	uint64_t carried = counter(self->dp, MAGLEV_CTR_SC_CARRIED);
	uint64_t ins = counter(self->dp, MAGLEV_CTR_CONN_INSERT);
	uint8_t exp[512];
	struct run_result r;
	size_t n;
	int i;

	n = gue_frame(exp, &self->f4, 0x10, BE1, BE2);
	for (i = 0; i < 2; i++) {
		run_client(_metadata, self->prog, &self->f4, 0x10, &r);
		ASSERT_BYTES(r.out, r.len, exp, n);
	}
	EXPECT_EQ(carried + 2, counter(self->dp, MAGLEV_CTR_SC_CARRIED));
	EXPECT_EQ(ins, counter(self->dp, MAGLEV_CTR_CONN_INSERT));
}

/* The same with an IPv6 outer header: the previous owner's 16-byte address
 * in the option, byte for byte.
 */
TEST_F(lb, miss_carries_previous_owner_v6_outer)
{
	uint64_t carried = counter(self->dp, MAGLEV_CTR_SC_CARRIED);
	struct flow f = self->f4;
	uint8_t exp[512];
	struct run_result r;
	size_t n;

	f.dport = 82;
	n = gue_frame6(exp, &f, 0x10, BE1_6, BE2_6);
	run_client(_metadata, self->prog, &f, 0x10, &r);
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(carried + 1, counter(self->dp, MAGLEV_CTR_SC_CARRIED));
}

/*
 * Issue 31 item 2 with second chance: f4's slot is owned by backend 1
 * (previously 2), every other slot by 5; 1 is marked over cap. An ACK with
 * no entry goes to the slot's owner 1 carrying the slot's previous owner 2.
 * Before, it went to the probe's pick 5 (which has no socket for it and
 * sends it on to 2, which has none either).
 */
TEST_F(lb, marked_owner_miss_carries_slot_previous_owner)
{
	static uint32_t owner[MAGLEV_TABLE_SIZE], prev[MAGLEV_TABLE_SIZE];
	struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};
	struct maglev_flow_key k;
	uint8_t exp[512], a[16];
	struct run_result r;
	uint32_t i, slot;
	size_t n;

	v4addr(a, 192, 0, 2, 5);
	ASSERT_EQ(0, add_backend(self->dp, 5, a, P_AF4));
	flow_key(&k, &self->f4);
	slot = maglev_slot(
		maglev_flow_hash_v4(&seed, k.src[0], k.dst[0], k.sport, k.dport, k.proto),
		MAGLEV_TABLE_SIZE);
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		owner[i] = i == slot ? 1 : 5;
		prev[i] = 2;
	}
	ASSERT_EQ(0, maglev_dp_table_swap_prev(self->dp, 0, owner, prev));
	ASSERT_EQ(0, maglev_dp_overcap_set(self->dp, 1, true));
	run_client(_metadata, self->prog, &self->f4, 0x10, &r);
	n = gue_frame(exp, &self->f4, 0x10, BE1, BE2);
	ASSERT_BYTES(r.out, r.len, exp, n);
	/* A SYN of the flow spills to 5 and carries nothing. */
	run_client(_metadata, self->prog, &self->f4, 0x02, &r);
	n = gue_frame(exp, &self->f4, 0x02, a, NULL);
	ASSERT_BYTES(r.out, r.len, exp, n);
}

/* A SYN never carries it and is recorded; the flow's next packets hit the
 * entry and do not carry it either.
 */
TEST_F(lb, syn_and_hits_carry_nothing)
{
	uint64_t carried = counter(self->dp, MAGLEV_CTR_SC_CARRIED);
	uint64_t hits = counter(self->dp, MAGLEV_CTR_CONN_HIT);
	uint8_t exp[512];
	struct run_result r;
	size_t n;

	run_client(_metadata, self->prog, &self->f4, 0x02, &r);
	n = gue_frame(exp, &self->f4, 0x02, BE1, NULL);
	ASSERT_BYTES(r.out, r.len, exp, n);
	run_client(_metadata, self->prog, &self->f4, 0x10, &r);
	n = gue_frame(exp, &self->f4, 0x10, BE1, NULL);
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(hits + 1, counter(self->dp, MAGLEV_CTR_CONN_HIT));
	EXPECT_EQ(carried, counter(self->dp, MAGLEV_CTR_SC_CARRIED));
}

/* The same table on a VIP without second chance: plain GUE. */
TEST_F(lb, vip_without_flag_carries_nothing)
{
	struct flow f = self->f4;
	uint8_t exp[512];
	struct run_result r;
	size_t n;

	f.dport = 81;
	run_client(_metadata, self->prog, &f, 0x10, &r);
	n = gue_frame(exp, &f, 0x10, BE1, NULL);
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(0, counter(self->dp, MAGLEV_CTR_SC_CARRIED));
}

/* Previous owner deleted (neither up nor draining): nothing carried, the
 * flow goes to the current owner as it would without second chance.
 */
TEST_F(lb, deleted_previous_owner_carries_nothing)
{
	struct maglev_backend b = {.family = P_AF4};
	uint8_t exp[512];
	struct run_result r;
	size_t n;

	memcpy(b.addr, BE2, 4);
	ASSERT_EQ(0, maglev_dp_backend_set(self->dp, 2, &b));
	run_client(_metadata, self->prog, &self->f4, 0x10, &r);
	n = gue_frame(exp, &self->f4, 0x10, BE1, NULL);
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(0, counter(self->dp, MAGLEV_CTR_SC_CARRIED));
}

/* A table swapped in without previous owners carries nothing. */
TEST_F(lb, table_without_prev_carries_nothing)
{
	static uint32_t owner[MAGLEV_TABLE_SIZE];
	uint8_t exp[512];
	struct run_result r;
	uint32_t i;
	size_t n;

	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		owner[i] = 1;
	ASSERT_EQ(0, maglev_dp_table_swap(self->dp, 0, owner));
	run_client(_metadata, self->prog, &self->f4, 0x10, &r);
	n = gue_frame(exp, &self->f4, 0x10, BE1, NULL);
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(0, counter(self->dp, MAGLEV_CTR_SC_CARRIED));
}

/*
 * Issue 31 item 4: Linux's own GUE receiver (fou, `ip fou add port P gue`)
 * must take what the balancer carries. Its rules, from 6.1's
 * include/net/gue.h (validate_gue_flags) and net/ipv4/fou_core.c
 * (gue_udp_recv): version 0, a protocol, hlen words present; of the
 * standard flags only P (0x0001: private flags present) is known; with P
 * the first optional word is the private flags, of which only REMCSUM (bit
 * 31) is known. Anything else drops the packet; optional words beyond those
 * are skipped. kmod_second's fou_receiver_takes_carried checks the same
 * against the 6.1 kernel itself.
 */
static int linux_gue_accepts(const uint8_t *gue, size_t avail)
{
	size_t optlen = (size_t)(gue[0] & 0x1f) * 4;
	uint16_t flags = get16(gue + 2);

	if (gue[0] >> 5 || !gue[1] || 4 + optlen > avail || (flags & ~0x0001))
		return 0;
	if (!(flags & 0x0001))
		return 1;
	return optlen >= 4 && !(gue[4] & 0x7f) && !gue[5] && !gue[6] && !gue[7];
}

TEST_F(lb, carried_header_taken_by_linux_gue)
{
	struct flow f = self->f4;
	struct run_result r;

	run_client(_metadata, self->prog, &self->f4, 0x10, &r);
	ASSERT_EQ(MAGLEV_GUE_PREV_WORDS, r.out[OFF_UDP + 8] & 0x1f);
	EXPECT_TRUE(linux_gue_accepts(r.out + OFF_UDP + 8, r.len - OFF_UDP - 8))
	{
		TH_LOG("GUE header %02x %02x %02x %02x, first option word %02x %02x %02x %02x",
		       r.out[OFF_UDP + 8], r.out[OFF_UDP + 9], r.out[OFF_UDP + 10],
		       r.out[OFF_UDP + 11], r.out[OFF_PREV], r.out[OFF_PREV + 1],
		       r.out[OFF_PREV + 2], r.out[OFF_PREV + 3]);
	}
	f.dport = 82;
	run_client(_metadata, self->prog, &f, 0x10, &r);
	ASSERT_EQ(MAGLEV_GUE_PREV_WORDS, r.out[OFF6_UDP + 8] & 0x1f);
	EXPECT_TRUE(linux_gue_accepts(r.out + OFF6_UDP + 8, r.len - OFF6_UDP - 8));
}

FIXTURE(decap)
{
	struct maglev_decap *skel;
	int prog, lfd, cfd, afd, lfd6, cfd6, afd6;
	struct flow f4, f6;
};

static int sh_quiet(const char *cmd)
{
	return system(cmd);
}

/* Listener *lfd on va, a client *cfd bound to ca connected to it, and the
 * accepted *afd: one established connection of family fam.
 */
static void connect_pair(struct __test_metadata *_metadata, int fam, const struct sockaddr *va,
			 const struct sockaddr *ca, socklen_t alen, int *lfd, int *cfd, int *afd)
{
	int one = 1, i, r = -1;

	*lfd = socket(fam, SOCK_STREAM, 0);
	ASSERT_LE(0, *lfd);
	setsockopt(*lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ASSERT_EQ(0, bind(*lfd, va, alen));
	ASSERT_EQ(0, listen(*lfd, 8));
	*cfd = socket(fam, SOCK_STREAM, 0);
	ASSERT_LE(0, *cfd);
	ASSERT_EQ(0, bind(*cfd, ca, alen));
	/* An IPv6 address's local route comes up after "ip addr add"
	 * returns (addrconf's work queue, even with nodad): retry, bounded.
	 */
	for (i = 0; i < 300; i++) {
		r = connect(*cfd, va, alen);
		if (!r || errno != ENETUNREACH)
			break;
		usleep(10000);
	}
	ASSERT_EQ(0, r)
	{
		TH_LOG("connect: %s", strerror(errno));
	}
	*afd = accept(*lfd, NULL, NULL);
	ASSERT_LE(0, *afd);
}

/* A network namespace of this test's own: lo up with the VIP and the
 * client address of both families, a listener on the VIP port 80 and one
 * established connection from the test's client flow (198.51.100.7:40001,
 * [2001:db8:c::7]:40001).
 */
FIXTURE_SETUP(decap)
{
	struct sockaddr_in va = {.sin_family = AF_INET, .sin_port = htons(80)};
	struct sockaddr_in ca = {.sin_family = AF_INET, .sin_port = htons(40001)};
	struct sockaddr_in6 va6 = {.sin6_family = AF_INET6, .sin6_port = htons(80)};
	struct sockaddr_in6 ca6 = {.sin6_family = AF_INET6, .sin6_port = htons(40001)};

	self->lfd = self->cfd = self->afd = self->lfd6 = self->cfd6 = self->afd6 = -1;
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, sh_quiet("ip link set lo up && ip addr add 203.0.113.10/32 dev lo && "
			      "ip addr add 198.51.100.7/32 dev lo && "
			      "ip addr add 2001:db8:f::a/128 dev lo nodad && "
			      "ip addr add 2001:db8:c::7/128 dev lo nodad"));
	client_flows(&self->f4, &self->f6);
	memcpy(&va.sin_addr, self->f4.dst, 4);
	memcpy(&ca.sin_addr, self->f4.src, 4);
	connect_pair(_metadata, AF_INET, (struct sockaddr *)&va, (struct sockaddr *)&ca, sizeof(va),
		     &self->lfd, &self->cfd, &self->afd);
	memcpy(&va6.sin6_addr, self->f6.dst, 16);
	memcpy(&ca6.sin6_addr, self->f6.src, 16);
	connect_pair(_metadata, AF_INET6, (struct sockaddr *)&va6, (struct sockaddr *)&ca6,
		     sizeof(va6), &self->lfd6, &self->cfd6, &self->afd6);
	self->skel = maglev_decap__open_and_load();
	ASSERT_NE(NULL, self->skel);
	self->prog = bpf_program__fd(self->skel->progs.maglev_decap);
}

FIXTURE_TEARDOWN(decap)
{
	maglev_decap__destroy(self->skel);
	close(self->afd6);
	close(self->cfd6);
	close(self->lfd6);
	close(self->afd);
	close(self->cfd);
	close(self->lfd);
}

static uint64_t dcount(FIXTURE_DATA(decap) * self, uint32_t what)
{
	int n = libbpf_num_possible_cpus(), i;
	uint64_t v[512], sum = 0;

	if (n > 512 ||
	    bpf_map_lookup_elem(bpf_map__fd(self->skel->maps.maglev_decap_cnt), &what, v))
		return (uint64_t)-1;
	for (i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

/* Strict source as a fleet with second chance configures it: the
 * balancers' outer source prefixes and the backends' (192.0.2.0/24,
 * 2001:db8:b::/64), to which alone a packet may be sent on.
 */
static void fleet_strict(struct __test_metadata *_metadata, FIXTURE_DATA(decap) * self)
{
	int src = bpf_map__fd(self->skel->maps.maglev_dcp_src);

	ASSERT_EQ(0, decap_set_flags(bpf_map__fd(self->skel->maps.maglev_decap_cfg),
				     MAGLEV_DECAP_F_STRICT_SRC));
	ASSERT_EQ(0, decap_allow_src(src, SRC4, 1, SRC4_PLEN));
	ASSERT_EQ(0, decap_allow_src(src, SRC6, 0, SRC6_PLEN));
	ASSERT_EQ(0, decap_allow_src(src, BE1, 1, 24));
	ASSERT_EQ(0, decap_allow_src(src, BE1_6, 0, 64));
}

/* The inner packet must come out: decapsulated, delivered, byte for byte
 * the MAC addresses, the inner family's ethertype and the inner packet of
 * the IPv4-outer frame in.
 */
static void expect_local(struct __test_metadata *_metadata, int prog, const uint8_t *in, size_t len)
{
	const size_t inner = OFF_PREV + 20;
	uint8_t exp[512];
	struct run_result r;

	ASSERT_EQ(0, run_prog(prog, in, len, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	memcpy(exp, in, 12);
	put16(exp + 12, in[inner] >> 4 == 4 ? 0x0800 : 0x86dd);
	memcpy(exp + 14, in + inner, len - inner);
	ASSERT_BYTES(r.out, r.len, exp, len - inner + 14);
}

TEST_F(decap, established_socket_delivered)
{
	uint8_t in[512];
	size_t n = gue_frame(in, &self->f4, 0x10, BE1, BE2);

	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_LOCAL));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

TEST_F(decap, syn_stays_local)
{
	struct flow f = self->f4;
	uint8_t in[512];
	size_t n;

	f.sport = 40003;
	n = gue_frame(in, &f, 0x02, BE1, BE2);
	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_SYN));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* Issue 31 item 3: a segment of the established connection whose IPv4
 * header has options (one NOP word) is claimed by its socket, the TCP
 * header found past the options, and delivered here; read as "no socket",
 * it would be sent on to the previous owner, which resets the connection.
 */
TEST_F(decap, established_with_ipv4_options_delivered)
{
	struct client_opts co = {.payload = 20};
	uint8_t client[256], in[512];
	size_t n = build_client(client, &self->f4, &co);

	insert_ipv4_nops(client, &n, 14, 4);
	n = gue_wrap(in, client, n, &self->f4, P_AF4, BE1, BE2);
	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_LOCAL));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* The same for IPv6 with a destination-options header before TCP. */
TEST_F(decap, established_with_ipv6_dstopts_delivered)
{
	struct client_opts co = {.payload = 20};
	const uint8_t t[] = {60};
	const size_t l[] = {8};
	uint8_t client[256], in[512];
	size_t n = build_client(client, &self->f6, &co);

	insert_ipv6_ext(client, &n, 14, t, l, 1);
	n = gue_wrap(in, client, n, &self->f6, P_AF4, BE1, BE2);
	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_LOCAL));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* The walk finds the ports, not merely the options: a tuple no socket
 * holds, with the same option or header (three NOP words, two headers:
 * hop-by-hop then destination options), is sent on.
 */
TEST_F(decap, options_without_socket_sent_on)
{
	struct client_opts co = {.payload = 20};
	const uint8_t t[] = {0, 60};
	const size_t l[] = {8, 16};
	struct flow f4 = self->f4, f6 = self->f6;
	uint8_t client[256], in[512];
	struct run_result r;
	size_t n;

	fleet_strict(_metadata, self);
	f4.sport = f6.sport = 40002;
	n = build_client(client, &f4, &co);
	insert_ipv4_nops(client, &n, 14, 12);
	n = gue_wrap(in, client, n, &f4, P_AF4, BE1, BE2);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	EXPECT_EQ(XDP_TX, r.action);
	n = build_client(client, &f6, &co);
	insert_ipv6_ext(client, &n, 14, t, l, 2);
	n = gue_wrap(in, client, n, &f6, P_AF4, BE1, BE2);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	EXPECT_EQ(XDP_TX, r.action);
	EXPECT_EQ(2, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_LOCAL));
}

/* Fragments are delivered here, never sent on: a non-first fragment has no
 * TCP header (its payload, read as one, names here a tuple no socket
 * holds), and the first one must join the rest in this host's reassembly.
 * IPv4 first and later fragments, an IPv6 fragment header.
 */
TEST_F(decap, fragments_delivered)
{
	struct client_opts co = {.payload = 20};
	const uint8_t t[] = {44};
	const size_t l[] = {8};
	const uint16_t frag4[] = {0x2000, 0x0010}; /* MF; offset 128 bytes */
	struct flow f4 = self->f4, f6 = self->f6;
	uint8_t client[256], in[512];
	size_t n;
	int i;

	f4.sport = f6.sport = 40002;
	for (i = 0; i < 2; i++) {
		n = build_client(client, &f4, &co);
		put16(client + 14 + 6, frag4[i]);
		put16(client + 14 + 10, 0);
		put16(client + 14 + 10, csum_finish(csum_add(0, client + 14, 20)));
		n = gue_wrap(in, client, n, &f4, P_AF4, BE1, BE2);
		expect_local(_metadata, self->prog, in, n);
	}
	n = build_client(client, &f6, &co);
	insert_ipv6_ext(client, &n, 14, t, l, 1);
	client[14 + 40 + 3] = 1; /* MF */
	n = gue_wrap(in, client, n, &f6, P_AF4, BE1, BE2);
	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(3, dcount(self, MAGLEV_DECAP_SC_NO_PORTS));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* No socket for the flow (only the listener, no valid syncookie): sent on
 * to backend 2 once, the field cleared; the packet sent on is delivered by
 * the next backend whatever it finds.
 */
TEST_F(decap, no_socket_sent_on_once)
{
	struct flow f = self->f4;
	uint8_t in[512], exp[512];
	struct run_result r, r2;
	size_t n;

	fleet_strict(_metadata, self);
	f.sport = 40002;
	n = gue_frame(in, &f, 0x10, BE1, BE2);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	/* Expected: MACs swapped, outer source our address, destination
	 * backend 2, TTL one lower, checksum right, previous owner cleared.
	 */
	memcpy(exp, in, n);
	memcpy(exp, in + 6, 6);
	memcpy(exp + 6, in, 6);
	memcpy(exp + OFF_IP + 12, BE1, 4);
	memcpy(exp + OFF_IP + 16, BE2, 4);
	exp[OFF_IP + 8]--;
	put16(exp + OFF_IP + 10, 0);
	put16(exp + OFF_IP + 10, csum_finish(csum_add(0, exp + OFF_IP, 20)));
	exp[OFF_PREV + 1] = 0;
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	/* At the previous owner (no socket there either): delivered. */
	expect_local(_metadata, self->prog, r.out, r.len);
	ASSERT_EQ(0, run_prog(self->prog, r.out, r.len, &r2));
	EXPECT_EQ(XDP_PASS, r2.action);
	EXPECT_EQ(2, dcount(self, MAGLEV_DECAP_SC_ONCE));
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* The same with an IPv6 outer header: sent on from backend 1's address to
 * backend 2's, hop limit one lower, the field cleared; then delivered.
 */
TEST_F(decap, no_socket_sent_on_once_v6_outer)
{
	struct flow f = self->f4;
	uint8_t in[512], exp[512];
	struct run_result r, r2;
	size_t n;

	fleet_strict(_metadata, self);
	f.sport = 40004;
	n = gue_frame6(in, &f, 0x10, BE1_6, BE2_6);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	memcpy(exp, in, n);
	memcpy(exp, in + 6, 6);
	memcpy(exp + 6, in, 6);
	memcpy(exp + OFF_IP + 8, BE1_6, 16);
	memcpy(exp + OFF_IP + 24, BE2_6, 16);
	exp[OFF_IP + 7]--;
	exp[OFF6_PREV + 1] = 0;
	ASSERT_BYTES(r.out, r.len, exp, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	ASSERT_EQ(0, run_prog(self->prog, r.out, r.len, &r2));
	EXPECT_EQ(XDP_PASS, r2.action);
	EXPECT_EQ(0x45, r2.out[14]);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_ONCE));
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* The outer UDP checksum of a GUE frame (udp: the UDP header's offset,
 * fam: the outer family): set, as the slow-path module fills it in, or
 * checked (0: right).
 */
static uint16_t udp_csum(const uint8_t *p, size_t len, size_t udp, int fam)
{
	const uint8_t *src = p + OFF_IP + (fam == P_AF4 ? 12 : 8);

	return l4_csum(fam, src, src + (fam == P_AF4 ? 4 : 16), IPPROTO_UDP, p + udp, len - udp);
}

static void set_udp_csum(uint8_t *p, size_t len, size_t udp, int fam)
{
	uint16_t c;

	put16(p + udp + 6, 0);
	c = udp_csum(p, len, udp, fam);
	put16(p + udp + 6, c ? c : 0xffff);
}

/*
 * Issue 31 item 4: the slow-path module fills in the GUE datagram's UDP
 * checksum (mandatory over IPv6). Sent on, the new outer addresses and the
 * cleared family change what it covers: it must still be right, or the
 * previous owner's UDP stack (a kernel GUE receiver) drops the packet. Both
 * outer families; a zero checksum (the XDP balancer's) stays zero (the
 * byte comparisons above).
 */
TEST_F(decap, sent_on_keeps_udp_checksum)
{
	struct flow f = self->f4;
	uint8_t in[512];
	struct run_result r;
	int fam;
	size_t n;

	fleet_strict(_metadata, self);
	for (fam = P_AF4; fam <= P_AF6; fam += P_AF6 - P_AF4) {
		size_t udp = fam == P_AF4 ? OFF_UDP : OFF6_UDP;

		f.sport = fam == P_AF4 ? 40006 : 40007;
		n = fam == P_AF4 ? gue_frame(in, &f, 0x10, BE1, BE2)
				 : gue_frame6(in, &f, 0x10, BE1_6, BE2_6);
		set_udp_csum(in, n, udp, fam);
		ASSERT_EQ(0, udp_csum(in, n, udp, fam));
		ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
		ASSERT_EQ(XDP_TX, r.action);
		EXPECT_NE(0, get16(r.out + udp + 6));
		EXPECT_EQ(0, udp_csum(r.out, r.len, udp, fam))
		{
			TH_LOG("outer IPv%d: UDP checksum %04x is wrong after sending on",
			       fam == P_AF4 ? 4 : 6, get16(r.out + udp + 6));
		}
	}
	EXPECT_EQ(2, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* A balancer of the first encoding (GUE flags 0x0001, before issue 31 item
 * 4) still gets second chance from an upgraded backend: its packet that no
 * socket claims is sent on, the flag kept.
 */
TEST_F(decap, old_encoding_still_sent_on)
{
	struct flow f = self->f4;
	uint8_t in[512];
	struct run_result r;
	size_t n;

	fleet_strict(_metadata, self);
	f.sport = 40008;
	n = gue_frame(in, &f, 0x10, BE1, BE2);
	put16(in + OFF_UDP + 8 + 2, MAGLEV_GUE_F_PREV_OLD);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	EXPECT_EQ(0, memcmp(r.out + OFF_IP + 16, BE2, 4));
	EXPECT_EQ(MAGLEV_GUE_F_PREV_OLD, get16(r.out + OFF_UDP + 8 + 2));
	EXPECT_EQ(0, r.out[OFF_PREV + 1]);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* Strict mode (include/maglev_decap.h) keeps second chance working when the
 * backends' prefix is allowed beside the balancer's: sent on by backend 1,
 * taken by backend 2 (both this namespace here) from backend 1's address.
 * A spoofed source carrying a previous owner is dropped, never sent on; a
 * previous owner in no allowed prefix is not sent to (delivered here).
 */
TEST_F(decap, strict_mode_sent_on_and_delivered)
{
	int src = bpf_map__fd(self->skel->maps.maglev_dcp_src);
	int dst = bpf_map__fd(self->skel->maps.maglev_dcp_dst);
	struct flow f = self->f4;
	uint8_t in[512], spoof[512];
	struct run_result r, r2;
	size_t n;

	ASSERT_EQ(0, decap_set_flags(bpf_map__fd(self->skel->maps.maglev_decap_cfg),
				     MAGLEV_DECAP_F_STRICT_SRC | MAGLEV_DECAP_F_STRICT_DST));
	ASSERT_EQ(0, decap_allow_src(src, SRC4, 1, SRC4_PLEN));
	ASSERT_EQ(0, decap_own_dst(dst, BE1, 1));
	ASSERT_EQ(0, decap_own_dst(dst, BE2, 1));
	f.sport = 40003;
	n = gue_frame(in, &f, 0x10, BE1, BE2);
	memcpy(spoof, in, n);
	spoof[OFF_IP + 12] = 203; /* outer source 203.x: no balancer's */
	put16(spoof + OFF_IP + 10, 0);
	put16(spoof + OFF_IP + 10, csum_finish(csum_add(0, spoof + OFF_IP, 20)));
	ASSERT_EQ(0, run_prog(self->prog, spoof, n, &r));
	EXPECT_EQ(XDP_DROP, r.action);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_DROP_SRC));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));

	/* Backend 2 is in no allowed prefix yet: not sent there. */
	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_NOT_ALLOWED));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	ASSERT_EQ(0, decap_allow_src(src, BE2, 1, 32));
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	/* From backend 1's address: not allowed until the backends' prefix is. */
	ASSERT_EQ(0, run_prog(self->prog, r.out, r.len, &r2));
	EXPECT_EQ(XDP_DROP, r2.action);
	EXPECT_EQ(2, dcount(self, MAGLEV_DECAP_DROP_SRC));
	ASSERT_EQ(0, decap_allow_src(src, BE1, 1, 24));
	expect_local(_metadata, self->prog, r.out, r.len);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_ONCE));
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_DROP_DST));
}

/* Issue 31 item 7: open (unconfigured), or strict on destinations only,
 * the program knows no fleet, and the previous owner is whatever the sender
 * wrote: a segment no socket claims is delivered here, never relayed. With
 * strict source, a previous owner outside the allowed prefixes
 * (203.0.113.99) is not sent to either.
 */
TEST_F(decap, open_mode_never_sends_on)
{
	static const uint8_t STRANGER[4] = {203, 0, 113, 99};
	struct flow f = self->f4;
	uint8_t in[512];
	size_t n;

	f.sport = 40002;
	n = gue_frame(in, &f, 0x10, BE1, BE2);
	expect_local(_metadata, self->prog, in, n);
	ASSERT_EQ(0, decap_set_flags(bpf_map__fd(self->skel->maps.maglev_decap_cfg),
				     MAGLEV_DECAP_F_STRICT_DST));
	ASSERT_EQ(0, decap_own_dst(bpf_map__fd(self->skel->maps.maglev_dcp_dst), BE1, 1));
	expect_local(_metadata, self->prog, in, n);
	fleet_strict(_metadata, self);
	n = gue_frame(in, &f, 0x10, BE1, STRANGER);
	expect_local(_metadata, self->prog, in, n);
	EXPECT_EQ(3, dcount(self, MAGLEV_DECAP_SC_NOT_ALLOWED));
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* No listener at all on the port: sent on as well. */
TEST_F(decap, no_listener_sent_on)
{
	struct flow f = self->f4;
	uint8_t in[512];
	struct run_result r;
	size_t n;

	fleet_strict(_metadata, self);
	f.dport = 81;
	n = gue_frame(in, &f, 0x10, BE1, BE2);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_TX, r.action);
	EXPECT_EQ(0, memcmp(r.out + OFF_IP + 16, BE2, 4));
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* A syncookie ACK stays local: with tcp_syncookies 2 the listener answers
 * a SYN (sent from a raw socket) with a cookie and keeps no request; the
 * ACK completing that handshake, carrying a previous owner, is delivered,
 * as the syncookie check validates it. A wrong cookie is sent on.
 */
TEST_F(decap, syncookie_ack_stays_local)
{
	struct sockaddr_in dst = {.sin_family = AF_INET}, src = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = 2};
	struct flow f = self->f4;
	uint8_t syn[64], buf[256], in[512];
	struct run_result r;
	uint32_t isn = 0;
	int rs, i, n = 0;
	size_t len;

	fleet_strict(_metadata, self);
	ASSERT_EQ(0, sh_quiet("sysctl -qw net.ipv4.tcp_syncookies=2"));
	f.sport = 40004;
	rs = socket(AF_INET, SOCK_RAW, IPPROTO_TCP);
	ASSERT_LE(0, rs);
	setsockopt(rs, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* The SYN's TCP header (the kernel adds the IP header). */
	memset(syn, 0, 20);
	put16(syn, f.sport);
	put16(syn + 2, f.dport);
	put32(syn + 4, 999);
	syn[12] = 5 << 4;
	syn[13] = 0x02;
	put16(syn + 14, 65535);
	put16(syn + 16, l4_csum(P_AF4, f.src, f.dst, IPPROTO_TCP, syn, 20));
	memcpy(&dst.sin_addr, f.dst, 4);
	memcpy(&src.sin_addr, f.src, 4);
	ASSERT_EQ(0, bind(rs, (struct sockaddr *)&src, sizeof(src)));
	ASSERT_EQ(20, sendto(rs, syn, 20, 0, (struct sockaddr *)&dst, sizeof(dst)));
	/* The raw socket sees every TCP packet on lo: find the SYN-ACK. */
	for (i = 0; i < 20 && !isn; i++) {
		n = (int)recv(rs, buf, sizeof(buf), 0);
		if (n < 40)
			break;
		if (buf[9] == IPPROTO_TCP && get16(buf + 20) == f.dport &&
		    get16(buf + 22) == f.sport && (buf[33] & 0x12) == 0x12)
			isn = (uint32_t)get16(buf + 24) << 16 | get16(buf + 26);
	}
	close(rs);
	ASSERT_NE(0, isn);
	/* The ACK: seq 1000 (999 + 1; build_client's), ack = cookie + 1. */
	len = gue_frame(in, &f, 0x10, BE1, BE2);
	put32(in + 66 + 20 + 8, isn + 1);
	put16(in + 66 + 20 + 16, 0);
	put16(in + 66 + 20 + 16,
	      l4_csum(P_AF4, f.src, f.dst, IPPROTO_TCP, in + 66 + 20, len - 66 - 20));
	ASSERT_EQ(0, run_prog(self->prog, in, len, &r));
	EXPECT_EQ(XDP_PASS, r.action);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_COOKIE));
	/* The same ACK with the cookie's hash bits changed (its low bits only
	 * pick an MSS, so an off-by-one may still be valid): not claimed,
	 * sent on.
	 */
	put32(in + 66 + 20 + 8, (isn + 1) ^ 0x55aa0000);
	put16(in + 66 + 20 + 16, 0);
	put16(in + 66 + 20 + 16,
	      l4_csum(P_AF4, f.src, f.dst, IPPROTO_TCP, in + 66 + 20, len - 66 - 20));
	ASSERT_EQ(0, run_prog(self->prog, in, len, &r));
	EXPECT_EQ(XDP_TX, r.action);
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
}

/* Plain GUE (no previous owner) is delivered as before, no lookup. */
TEST_F(decap, plain_gue_untouched)
{
	struct flow f = self->f4;
	uint8_t in[512];
	struct run_result r;
	size_t n;

	f.sport = 40002;
	n = gue_frame(in, &f, 0x10, BE1, NULL);
	ASSERT_EQ(0, run_prog(self->prog, in, n, &r));
	ASSERT_EQ(XDP_PASS, r.action);
	EXPECT_EQ(0, dcount(self, MAGLEV_DECAP_SC_REDIRECT));
	EXPECT_EQ(1, dcount(self, MAGLEV_DECAP_DONE));
}

TEST_HARNESS_MAIN
