// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the XDP balancer: every input is one Ethernet frame,
 * run once through the real program with BPF_PROG_TEST_RUN against a fixed
 * set-up (fz_backends / fz_vips below), and judged by an oracle written from
 * the RFCs, pkt.h and the userspace table builder, independent of bpf/:
 *
 *   - the syscall succeeds and the verdict is never XDP_ABORTED;
 *   - exactly one reason counter moved, by one, and the verdict is that
 *     reason's class (TX_* XDP_TX, PASS_* XDP_PASS, DROP_* XDP_DROP);
 *   - XDP_PASS leaves the frame byte for byte as it came;
 *   - a forward (TX_FORWARD, TX_ICMP_FORWARD) is exactly the encapsulation
 *     pkt.h describes of the input toward the backend the userspace Maglev
 *     table picks for the flow (the connection table is emptied before
 *     every input, so every flow is new), within the MTU; a second run of
 *     the same frame hits the connection table and leaves identically;
 *   - a forwarded TCP flow's entry, moved to another usable backend (as a
 *     table change leaves it), keeps sending every variant of the frame
 *     there: a FIN or RST, then flags the input chooses, then a SYN and an
 *     ACK (issue 31: no spoofed FIN/RST/SYN moves an established flow);
 *   - echo replies and too-big errors are well formed and addressed back.
 *
 * A violation prints what was expected and abort()s, so libFuzzer keeps the
 * input as a crash. Which reason each input reached feeds back to libFuzzer
 * through extra counters: coverage from inside the BPF program.
 *
 * Environment: MAGLEV_XDP_FUZZ_GEN=DIR writes the seed corpus to DIR (each
 * seed checked to reach its reason) and exits; MAGLEV_XDP_FUZZ_STATS=FILE
 * writes the per-reason input counts to FILE at exit.
 */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#include "fixture.h"
#pragma clang diagnostic pop
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>
#include "maglev_table.h"
#include "xdp_fuzz.h"

#define V4(a, b, c, d)     \
	{                  \
		a, b, c, d \
	}
#define V6(net, host)                                                           \
	{                                                                       \
		0x20, 0x01, 0x0d, 0xb8, 0, net, 0, 0, 0, 0, 0, 0, 0, 0, 0, host \
	}

const struct fz_backend fz_backends[] = {
	{1, P_AF4, V4(192, 0, 2, 21), MAGLEV_BACKEND_F_UP},
	{2, P_AF4, V4(192, 0, 2, 22), MAGLEV_BACKEND_F_UP},
	{3, P_AF6, V6(0xb, 0x21), MAGLEV_BACKEND_F_UP},
	{4, P_AF6, V6(0xb, 0x22), MAGLEV_BACKEND_F_UP},
	{5, P_AF4, V4(192, 0, 2, 23), MAGLEV_BACKEND_F_DRAIN},
	/* Down (health check) but still in the tables of VIPs 5 and 9. */
	{6, P_AF4, V4(192, 0, 2, 24), 0},
};
const size_t fz_nbackends = sizeof(fz_backends) / sizeof(fz_backends[0]);

const struct fz_vip fz_vips[] = {
	{P_AF4, V4(203, 0, 113, 10), 80, IPPROTO_TCP, 1, MAGLEV_ENCAP_IPIP, 0, {1, 2, 3}},
	{P_AF4, V4(203, 0, 113, 10), 53, IPPROTO_UDP, 2, MAGLEV_ENCAP_GUE, 9000, {1, 4}},
	{P_AF4, V4(203, 0, 113, 11), 0, IPPROTO_TCP, 3, MAGLEV_ENCAP_IPIP, 0, {3, 4}},
	{P_AF4, V4(203, 0, 113, 11), 443, IPPROTO_TCP, 4, MAGLEV_ENCAP_GUE, 0, {2, 5}},
	{P_AF4, V4(203, 0, 113, 12), 0, IPPROTO_UDP, 5, MAGLEV_ENCAP_GUE, 9000, {1, 6}},
	{P_AF6, V6(0xf, 0x10), 80, IPPROTO_TCP, 6, MAGLEV_ENCAP_IPIP, 0, {1, 3, 4}},
	{P_AF6, V6(0xf, 0x10), 0, IPPROTO_UDP, 7, MAGLEV_ENCAP_GUE, 9000, {2, 3}},
	/* A VIP whose table was never installed. */
	{P_AF6, V6(0xf, 0x11), 443, IPPROTO_TCP, 8, MAGLEV_ENCAP_IPIP, 0, {0}},
	{P_AF6, V6(0xf, 0x12), 4500, IPPROTO_UDP, 9, MAGLEV_ENCAP_GUE, 0, {4, 6}},
};
const size_t fz_nvips = sizeof(fz_vips) / sizeof(fz_vips[0]);

#define FZ_MAX_VIP_ID 16

/* libFuzzer adds these bytes to its coverage: per reason x VLAN depth x L3
 * family, and per (VIP, backend) of a forward.
 */
#define XC_REASONS (MAGLEV_REASON_MAX * 4 * 3)
#define XC_FWD	   (FZ_MAX_VIP_ID * 8)
__attribute__((section("__libfuzzer_extra_counters"), used)) static uint8_t xc[XC_REASONS + XC_FWD];

static struct {
	struct maglev_dp *dp;
	int prog, reasons_fd, ctrs_fd, ncpus;
	void *conns;
	size_t conns_len;
	uint64_t *vals; /* batch lookup buffer */
	uint64_t reasons[MAGLEV_REASON_MAX], ctrs[MAGLEV_CTR_MAX];
	uint64_t hist[MAGLEV_REASON_MAX], execs;
	uint32_t *tables[FZ_MAX_VIP_ID]; /* backend index per slot, by vip_id */
	struct maglev_seed seed;
	const uint8_t *in; /* the current input, for failure reports */
	size_t n;
	const char *stage;		   /* which check of the input, for failure reports */
	struct maglev_conn_params connkey; /* the connection table's seed, mask */
} fz;

static void hexline(const char *what, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(stderr, "xdp_fuzz: %s (%zu bytes):", what, n);
	for (i = 0; i < n && i < 256; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n  ", p[i]);
	fprintf(stderr, "%s\n", n > 256 ? " ..." : "");
}

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xdp_fuzz: ORACLE VIOLATION: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (fz.stage)
		fprintf(stderr, "xdp_fuzz: during: %s\n", fz.stage);
	if (fz.in)
		hexline("input", fz.in, fz.n);
	abort();
}

static void fail_bytes(const char *what, const uint8_t *got, size_t glen, const uint8_t *exp,
		       size_t elen)
{
	size_t i;

	for (i = 0; i < glen && i < elen && got[i] == exp[i]; i++)
		;
	hexline("expected", exp, elen);
	hexline("got", got, glen);
	fail("%s: first difference at byte %zu (lengths got %zu, want %zu)", what, i, glen, elen);
}

static void expect_bytes(const char *what, const uint8_t *got, size_t glen, const uint8_t *exp,
			 size_t elen)
{
	if (glen != elen || memcmp(got, exp, elen))
		fail_bytes(what, got, glen, exp, elen);
}

/* Per-CPU array, summed over CPUs, in one BPF_MAP_LOOKUP_BATCH. */
static void read_percpu(int fd, uint32_t n, uint64_t *out)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t keys[MAGLEV_REASON_MAX], count = n, next = 0, i;
	int c, ret;

	ret = bpf_map_lookup_batch(fd, NULL, &next, keys, fz.vals, &count, &o);
	if ((ret && errno != ENOENT) || count != n)
		fail("batch lookup of counters: %s (%u of %u)", strerror(errno), count, n);
	for (i = 0; i < n; i++) {
		out[i] = 0;
		for (c = 0; c < fz.ncpus; c++)
			out[i] += fz.vals[i * fz.ncpus + c];
	}
}

/* One's-complement sum of 16-bit words, folded; 0 and 0xffff are the same
 * number, so 0xffff is returned as 0.
 */
static uint16_t ones_sum(const uint8_t *p, size_t len)
{
	uint32_t s = csum_add(0, p, len);

	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff ? 0 : (uint16_t)s;
}

const struct fz_backend *fz_backend(uint32_t idx)
{
	size_t i;

	for (i = 0; i < fz_nbackends; i++)
		if (fz_backends[i].idx == idx)
			return &fz_backends[i];
	return NULL;
}

static const struct fz_vip *vip_get(const struct flow *f, uint16_t port)
{
	size_t i, alen = f->family == P_AF4 ? 4 : 16;

	for (i = 0; i < fz_nvips; i++) {
		const struct fz_vip *v = &fz_vips[i];

		if (v->family == f->family && v->proto == f->proto && v->port == port &&
		    !memcmp(v->addr, f->dst, alen))
			return v;
	}
	return NULL;
}

const struct fz_vip *fz_vip_find(const struct flow *f)
{
	const struct fz_vip *v = vip_get(f, f->dport);

	return v ? v : vip_get(f, 0);
}

/* Some VIP (any port, any protocol) has this address. */
static int vip_addr(int family, const uint8_t *a)
{
	size_t i;

	for (i = 0; i < fz_nvips; i++)
		if (fz_vips[i].family == family &&
		    !memcmp(fz_vips[i].addr, a, family == P_AF4 ? 4 : 16))
			return 1;
	return 0;
}

uint32_t fz_pick(const struct fz_vip *v, const struct flow *f)
{
	uint32_t w[2][4] = {{0}};
	uint16_t sp = htons(f->sport), dp = htons(f->dport);
	uint64_t h;

	if (!fz.tables[v->vip_id])
		return 0;
	/* The words as the program loads them from the packet. */
	memcpy(w[0], f->src, f->family == P_AF4 ? 4 : 16);
	memcpy(w[1], f->dst, f->family == P_AF4 ? 4 : 16);
	if (f->family == P_AF4)
		h = maglev_flow_hash_v4(&fz.seed, w[0][0], w[1][0], sp, dp, f->proto);
	else
		h = maglev_flow_hash_v6(&fz.seed, w[0], w[1], sp, dp, f->proto);
	return fz.tables[v->vip_id][maglev_slot(h, MAGLEV_TABLE_SIZE)];
}

/* The input as the oracle reads it. */
struct view {
	size_t l2; /* Ethernet + tags */
	int family;
	const uint8_t *ip;
	size_t l3_len; /* from the IP header */
	size_t hl;     /* IP header, with IPv4 options or IPv6 extension headers */
	uint8_t tos, ttl, proto;
};

/* IPv6 extension headers the program may forward (docs/datapath.md): at most
 * four, no fragment header, no routing header with segments left. Returns
 * the bytes they take and sets *proto to what follows, or 0 when such a
 * packet must not be forwarded.
 */
static size_t ipv6_ext_len(const uint8_t *ip, size_t avail, uint8_t *proto)
{
	size_t off = 40;
	uint8_t nh = ip[6];
	int i;

	for (i = 0; i < 4 && (nh == 0 || nh == 43 || nh == 60 || nh == 44); i++) {
		if (off + 8 > avail || nh == 44 || (nh == 43 && ip[off + 3]))
			return 0;
		nh = ip[off];
		off += ((size_t)ip[off + 1] + 1) * 8;
	}
	if (nh == 0 || nh == 43 || nh == 60 || nh == 44)
		return 0;
	*proto = nh;
	return off;
}

/* L2 length and ethertype; 0 when the frame has no complete L2 header or
 * more than two tags.
 */
static size_t parse_l2(const uint8_t *p, size_t n, uint16_t *type)
{
	size_t off = 12;
	int i;

	for (i = 0; i < 3; i++) {
		if (off + 2 > n)
			return 0;
		*type = get16(p + off);
		if (*type != 0x8100 && *type != 0x88a8)
			return off + 2;
		off += 4;
	}
	return 0;
}

/* Parse the L3 header of a frame the program acted on (TX_*): anything it
 * must have validated and is not there is a violation.
 */
static void parse_view(const uint8_t *in, size_t n, struct view *v)
{
	uint16_t type = 0;

	memset(v, 0, sizeof(*v));
	v->l2 = parse_l2(in, n, &type);
	if (!v->l2)
		fail("transmitted a frame without a valid L2 header");
	v->ip = in + v->l2;
	if (type == 0x0800 && v->l2 + 20 <= n) {
		v->family = P_AF4;
		if (v->ip[0] >> 4 != 4 || (v->ip[0] & 15) < 5)
			fail("transmitted an IPv4 packet with version/IHL %#x", v->ip[0]);
		v->hl = (v->ip[0] & 15) * 4u;
		v->l3_len = get16(v->ip + 2);
		v->tos = v->ip[1];
		v->ttl = v->ip[8];
		v->proto = v->ip[9];
	} else if (type == 0x86dd && v->l2 + 40 <= n) {
		v->family = P_AF6;
		if (v->ip[0] >> 4 != 6)
			fail("transmitted an IPv6 packet with version %d", v->ip[0] >> 4);
		v->l3_len = get16(v->ip + 4) + 40u;
		v->tos = (uint8_t)(get16(v->ip) >> 4);
		v->ttl = v->ip[7];
		v->proto = v->ip[6];
		v->hl = 40;
		if (v->proto == 0 || v->proto == 43 || v->proto == 60 || v->proto == 44) {
			v->hl = ipv6_ext_len(v->ip, n - v->l2, &v->proto);
			if (!v->hl)
				fail("transmitted an IPv6 packet with a fragment, routing with "
				     "segments left or a chain over four headers");
		}
	} else {
		fail("transmitted a frame that is not IPv4/IPv6");
	}
	if (v->l3_len > n - v->l2)
		fail("transmitted a packet whose IP length %zu exceeds the frame", v->l3_len);
	if (v->hl > v->l3_len)
		fail("transmitted a packet whose headers (%zu) exceed its IP length", v->hl);
}

/* The client's flow of a TCP/UDP packet. */
static void flow_of(const struct view *v, size_t n, struct flow *f)
{
	size_t hl = v->hl, alen = v->family == P_AF4 ? 4 : 16;
	const uint8_t *l4 = v->ip + hl;

	if (v->proto != IPPROTO_TCP && v->proto != IPPROTO_UDP)
		fail("balanced a packet of protocol %u", v->proto);
	if (v->l2 + hl + 4 > n)
		fail("balanced a packet without ports");
	memset(f, 0, sizeof(*f));
	f->family = v->family;
	memcpy(f->src, v->ip + (v->family == P_AF4 ? 12 : 8), alen);
	memcpy(f->dst, v->ip + (v->family == P_AF4 ? 16 : 24), alen);
	f->proto = v->proto;
	f->sport = get16(l4);
	f->dport = get16(l4 + 2);
}

/* The flow an ICMP error is about: the quoted packet went VIP -> client. */
static void icmp_flow_of(const struct view *v, size_t n, struct flow *f)
{
	const uint8_t *q = v->ip + (v->family == P_AF4 ? 28 : 48);
	size_t qh = v->family == P_AF4 ? 20 : 40, alen = v->family == P_AF4 ? 4 : 16;

	if (v->proto != (v->family == P_AF4 ? 1 : 58))
		fail("ICMP-forwarded a packet of protocol %u", v->proto);
	if (v->hl != (v->family == P_AF4 ? 20u : 40u))
		fail("ICMP-forwarded an error with IPv4 options or IPv6 extension headers");
	if ((size_t)(q - (v->ip - v->l2)) + qh + 4 > n)
		fail("ICMP-forwarded an error without a complete quote");
	memset(f, 0, sizeof(*f));
	f->family = v->family;
	if (v->family == P_AF4) {
		if (q[0] != 0x45)
			fail("ICMP-forwarded a quote with version/IHL %#x", q[0]);
		memcpy(f->src, q + 16, alen);
		memcpy(f->dst, q + 12, alen);
		f->proto = q[9];
	} else {
		memcpy(f->src, q + 24, alen);
		memcpy(f->dst, q + 8, alen);
		f->proto = q[6];
	}
	f->sport = get16(q + qh + 2);
	f->dport = get16(q + qh);
}

/* The backend the userspace pick gives flow f, which must be usable: the
 * program forwarded (or answered for) it.
 */
static const struct fz_backend *expected_backend(const struct flow *f, const struct fz_vip **vp)
{
	const struct fz_vip *vip = fz_vip_find(f);
	const struct fz_backend *be;
	uint32_t idx;

	if (!vip)
		fail("acted on a flow to port %u proto %u that belongs to no VIP", f->dport,
		     f->proto);
	idx = fz_pick(vip, f);
	be = fz_backend(idx);
	if (!be || !(be->flags & (MAGLEV_BACKEND_F_UP | MAGLEV_BACKEND_F_DRAIN)))
		fail("acted on a flow of VIP %u whose userspace pick (backend %u) is unusable",
		     vip->vip_id, idx);
	*vp = vip;
	return be;
}

static uint32_t overhead(const struct fz_backend *be, const struct fz_vip *vip)
{
	return (be->family == P_AF6 ? 40 : 20) + (vip->encap == MAGLEV_ENCAP_GUE ? 12 : 0);
}

/* TX_FORWARD / TX_ICMP_FORWARD: outer headers exactly as pkt.h builds them,
 * then the input's L3 packet (and any bytes after it) with the TTL / hop
 * limit one lower and the IPv4 checksum updated for it; toward want, or if
 * NULL the userspace pick's backend.
 */
static void check_encap(const uint8_t *in, size_t n, const struct run_result *r, int icmp,
			const struct fz_backend *want)
{
	static uint8_t exp[FZ_MAX_LEN + 128];
	const struct fz_backend *be;
	const struct fz_vip *vip;
	uint8_t src[16], *inner, inner_proto, outer_proto;
	struct view v;
	struct flow f;
	uint32_t fold, over;
	size_t off;

	parse_view(in, n, &v);
	if (icmp)
		icmp_flow_of(&v, n, &f);
	else
		flow_of(&v, n, &f);
	be = expected_backend(&f, &vip);
	if (want)
		be = want;
	over = overhead(be, vip);
	if (v.l3_len + over > FZ_MTU)
		fail("forwarded %zu L3 bytes + %u of encapsulation above the MTU %u", v.l3_len,
		     over, FZ_MTU);
	if (v.ttl <= 1)
		fail("forwarded a packet with TTL %u", v.ttl);

	fold = flow_fold(&f);
	inner_proto = v.family == P_AF4 ? 4 : 41;
	outer_proto = vip->encap == MAGLEV_ENCAP_GUE ? 17 : inner_proto;
	memcpy(exp, MAC_NEXTHOP, 6);
	memcpy(exp + 6, MAC_LB, 6);
	memcpy(exp + 12, in + 12, v.l2 - 14); /* the VLAN tags stay */
	put16(exp + v.l2 - 2, be->family == P_AF4 ? 0x0800 : 0x86dd);
	off = v.l2;
	if (be->family == P_AF4) {
		outer_src(src, SRC4, 4, SRC4_PLEN, fold);
		off += put_ip4(exp + off, v.tos, (uint16_t)(v.l3_len + over), 0x4000, 64,
			       outer_proto, src, be->addr);
		/* put_ip4 writes a test IP id; the balancer's is 0. */
		put16(exp + v.l2 + 4, 0);
		put16(exp + v.l2 + 10, 0);
		put16(exp + v.l2 + 10, csum_finish(csum_add(0, exp + v.l2, 20)));
	} else {
		outer_src(src, SRC6, 16, SRC6_PLEN, fold);
		off += put_ip6(exp + off, v.tos, fold & 0xfffff, (uint16_t)(v.l3_len + over - 40),
			       outer_proto, 64, src, be->addr);
	}
	if (vip->encap == MAGLEV_ENCAP_GUE) {
		put16(exp + off, (uint16_t)(0x8000 | (fold & 0x7fff)));
		put16(exp + off + 2, vip->gue_port ? vip->gue_port : MAGLEV_GUE_PORT_DEFAULT);
		put16(exp + off + 4, (uint16_t)(v.l3_len + 12));
		put16(exp + off + 6, 0);
		exp[off + 8] = 0;
		exp[off + 9] = inner_proto;
		put16(exp + off + 10, 0);
		off += 12;
	}
	if (off != v.l2 + over || r->len != n + over)
		fail_bytes("encapsulated frame length", r->out, r->len, exp, n + over);
	inner = exp + off;
	memcpy(inner, in + v.l2, n - v.l2);
	if (v.family == P_AF4) {
		inner[8]--;
		/* Incremental update (RFC 1624): the header's one's-complement
		 * sum is unchanged, whether or not the input's was valid.
		 */
		if (ones_sum(r->out + off, v.hl) != ones_sum(in + v.l2, v.hl))
			fail_bytes("inner IPv4 checksum not updated for the TTL", r->out, r->len,
				   exp, n + over);
		memcpy(inner + 10, r->out + off + 10, 2);
	} else {
		inner[7]--;
	}
	expect_bytes(icmp ? "ICMP error encapsulation" : "encapsulation", r->out, r->len, exp,
		     n + over);
	if (vip->vip_id < FZ_MAX_VIP_ID && be->idx < 8)
		xc[XC_REASONS + vip->vip_id * 8 + be->idx]++;
}

/* TX_ECHO_REPLY: the request turned around in place. */
static void check_echo(const uint8_t *in, size_t n, const struct run_result *r)
{
	static uint8_t exp[FZ_MAX_LEN];
	struct view v;
	size_t ic_off;
	uint8_t *ip;

	parse_view(in, n, &v);
	ic_off = v.l2 + (v.family == P_AF4 ? 20 : 40);
	if (ic_off + 8 > n)
		fail("echo reply to a truncated ICMP header");
	if (v.proto != (v.family == P_AF4 ? 1 : 58) || in[ic_off] != (v.family == P_AF4 ? 8 : 128))
		fail("echo reply to protocol %u type %u", v.proto, in[ic_off]);
	if (!vip_addr(v.family, v.ip + (v.family == P_AF4 ? 16 : 24)))
		fail("echo reply on behalf of an address that is no VIP");
	memcpy(exp, in, n);
	memcpy(exp, in + 6, 6);
	memcpy(exp + 6, in, 6);
	ip = exp + v.l2;
	if (v.family == P_AF4) {
		memcpy(ip + 12, in + v.l2 + 16, 4);
		memcpy(ip + 16, in + v.l2 + 12, 4);
		ip[8] = 64;
		put16(ip + 10, 0);
		put16(ip + 10, csum_finish(csum_add(0, ip, 20)));
		exp[ic_off] = 0;
	} else {
		memcpy(ip + 8, in + v.l2 + 24, 16);
		memcpy(ip + 24, in + v.l2 + 8, 16);
		ip[7] = 64;
		exp[ic_off] = 129;
	}
	if (r->len != n)
		fail_bytes("echo reply length", r->out, r->len, exp, n);
	/* Type and checksum words: the sum over both is unchanged (RFC 1624),
	 * and swapping the addresses does not change the pseudo header.
	 */
	if (ones_sum(r->out + ic_off, 4) != ones_sum(in + ic_off, 4))
		fail_bytes("echo reply checksum not updated for the type", r->out, r->len, exp, n);
	memcpy(exp + ic_off + 2, r->out + ic_off + 2, 2);
	expect_bytes("echo reply", r->out, r->len, exp, n);
}

/* TX_TOO_BIG: frag-needed / packet-too-big back to the client, quoting the
 * start of its packet, advertising the MTU left after encapsulation.
 */
static void check_too_big(const uint8_t *in, size_t n, const struct run_result *r)
{
	static uint8_t exp[256];
	const struct fz_backend *be;
	const struct fz_vip *vip;
	size_t q, off;
	uint32_t over, mtu;
	struct view v;
	struct flow f;
	uint8_t *ic;

	parse_view(in, n, &v);
	flow_of(&v, n, &f);
	be = expected_backend(&f, &vip);
	over = overhead(be, vip);
	if (v.l3_len + over <= FZ_MTU)
		fail("too-big for %zu L3 bytes + %u of encapsulation, MTU %u", v.l3_len, over,
		     FZ_MTU);
	if (v.family == P_AF4 && !(get16(v.ip + 6) & 0x4000))
		fail("frag-needed for an IPv4 packet without DF");
	if (v.hl != (v.family == P_AF4 ? 20u : 40u))
		fail("too-big for a packet with options: its quote misses the ports");
	mtu = FZ_MTU - over;
	if (v.family == P_AF6 && mtu < 1280)
		mtu = 1280;
	q = v.family == P_AF4 ? 28 : 48;
	memcpy(exp, in + 6, 6);
	memcpy(exp + 6, in, 6);
	memcpy(exp + 12, in + 12, v.l2 - 12);
	off = v.l2;
	if (v.family == P_AF4) {
		off += put_ip4(exp + off, 0, (uint16_t)(20 + 8 + q), 0, 64, 1, v.ip + 16,
			       v.ip + 12);
		put16(exp + v.l2 + 4, 0);
		put16(exp + v.l2 + 10, 0);
		put16(exp + v.l2 + 10, csum_finish(csum_add(0, exp + v.l2, 20)));
	} else {
		off += put_ip6(exp + off, 0, 0, (uint16_t)(8 + q), 58, 64, v.ip + 24, v.ip + 8);
	}
	ic = exp + off;
	memset(ic, 0, 8);
	if (v.family == P_AF4) {
		ic[0] = 3;
		ic[1] = 4;
		put16(ic + 6, (uint16_t)mtu);
	} else {
		ic[0] = 2;
		put32(ic + 4, mtu);
	}
	memcpy(ic + 8, v.ip, q);
	if (v.family == P_AF4)
		put16(ic + 2, csum_finish(csum_add(0, ic, 8 + q)));
	else
		put16(ic + 2, l4_csum(P_AF6, v.ip + 24, v.ip + 8, 58, ic, 8 + q));
	expect_bytes("too-big error", r->out, r->len, exp, off + 8 + q);
}

static uint32_t reason_action(int reason)
{
	if (reason >= MAGLEV_REASON_DROP_L2_TRUNC)
		return XDP_DROP;
	if (reason >= MAGLEV_REASON_PASS_NOT_IP)
		return XDP_PASS;
	return XDP_TX;
}

/* Run the frame once; returns the single reason it ended in and fills
 * ctr_delta with how the connection-table counters moved.
 */
static int run_once(const uint8_t *in, size_t n, struct run_result *r, uint64_t *ctr_delta)
{
	uint64_t now[MAGLEV_REASON_MAX], ctrs[MAGLEV_CTR_MAX];
	int i, reason = -1, ret;

	ret = run_prog(fz.prog, in, n, r);
	if (ret)
		fail("BPF_PROG_TEST_RUN failed: %s", strerror(errno));
	if (r->action == XDP_ABORTED)
		fail("XDP_ABORTED");
	read_percpu(fz.reasons_fd, MAGLEV_REASON_MAX, now);
	read_percpu(fz.ctrs_fd, MAGLEV_CTR_MAX, ctrs);
	for (i = 0; i < MAGLEV_REASON_MAX; i++) {
		uint64_t d = now[i] - fz.reasons[i];

		if (!d)
			continue;
		if (d != 1 || reason >= 0)
			fail("reason counters do not add up: %s moved by %llu%s%s",
			     maglev_dp_reason_name(i), (unsigned long long)d,
			     reason >= 0 ? " after " : "",
			     reason >= 0 ? maglev_dp_reason_name(reason) : "");
		reason = i;
	}
	if (reason < 0)
		fail("no reason counter moved (action %u)", r->action);
	if (r->action != reason_action(reason))
		fail("action %u for reason %s", r->action, maglev_dp_reason_name(reason));
	for (i = 0; i < MAGLEV_CTR_MAX; i++)
		ctr_delta[i] = ctrs[i] - fz.ctrs[i];
	memcpy(fz.reasons, now, sizeof(now));
	memcpy(fz.ctrs, ctrs, sizeof(ctrs));
	return reason;
}

static void expect_ctrs(const char *when, const uint64_t *d, int hit, int miss, int insert)
{
	static const int want_zero[] = {MAGLEV_CTR_CONN_REPICK, MAGLEV_CTR_CONN_EXPIRED,
					MAGLEV_CTR_CONN_INSERT_SKIP, MAGLEV_CTR_CONN_EVICT};
	size_t i;

	if (d[MAGLEV_CTR_CONN_HIT] != (uint64_t)hit || d[MAGLEV_CTR_CONN_MISS] != (uint64_t)miss ||
	    d[MAGLEV_CTR_CONN_INSERT] != (uint64_t)insert)
		fail("%s: conn_hit/miss/insert moved by %llu/%llu/%llu, want %d/%d/%d", when,
		     (unsigned long long)d[MAGLEV_CTR_CONN_HIT],
		     (unsigned long long)d[MAGLEV_CTR_CONN_MISS],
		     (unsigned long long)d[MAGLEV_CTR_CONN_INSERT], hit, miss, insert);
	for (i = 0; i < sizeof(want_zero) / sizeof(want_zero[0]); i++)
		if (d[want_zero[i]])
			fail("%s: %s moved", when, maglev_dp_counter_name(want_zero[i]));
}

/* The way of the connection table holding f's entry, NULL if none; *h gets
 * the key's hash (for the check word).
 */
static struct maglev_conn_slot *conn_slot(const struct flow *f, uint64_t *h)
{
	struct maglev_conn_bucket *b;
	struct maglev_flow_key k;
	int w;

	flow_key(&k, f);
	*h = maglev_conn_hash(&k, fz.connkey.seed);
	b = (struct maglev_conn_bucket *)fz.conns + (*h & fz.connkey.mask);
	for (w = 0; w < MAGLEV_CONN_WAYS; w++)
		if (b->tag[w] == maglev_conn_tag(*h) && maglev_conn_key_eq(&b->slot[w].key, &k))
			return &b->slot[w];
	return NULL;
}

/*
 * Issue 31: no sequence of FIN, RST and SYN packets, spoofed or not, moves a
 * TCP flow whose entry names a usable backend. The forwarded flow's entry
 * is moved to another usable backend of the same family (up or draining,
 * chosen by the input), as a table change leaves an established flow; then
 * the frame goes again with the flags replaced: a FIN or an RST, three
 * flags the input chooses, a SYN, an ACK. Every one must hit the entry and
 * leave, byte for byte, toward that backend.
 */
static void check_spoofs(const uint8_t *in, size_t n)
{
	static const uint8_t flags[] = {0x11, 0x04, 0x14, 0x02, 0x10, 0x19, 0x01, 0x18};
	static uint8_t copy[FZ_MAX_LEN];
	static struct run_result r;
	const struct fz_backend *alt[8], *cur;
	struct maglev_backend mb;
	struct maglev_conn_slot *s;
	uint64_t d[MAGLEV_CTR_MAX], h;
	uint8_t seq[6];
	size_t off, i, nalt = 0;
	struct view v;
	struct flow f;

	parse_view(in, n, &v);
	flow_of(&v, n, &f);
	if (f.proto != IPPROTO_TCP)
		return;
	s = conn_slot(&f, &h);
	if (!s)
		fail("a forwarded TCP flow has no connection entry");
	cur = fz_backend(s->conn.backend_idx);
	if (!cur)
		fail("the entry names backend %u, which does not exist", s->conn.backend_idx);
	for (i = 0; i < fz_nbackends; i++)
		if (fz_backends[i].idx != cur->idx && fz_backends[i].family == cur->family &&
		    (fz_backends[i].flags & (MAGLEV_BACKEND_F_UP | MAGLEV_BACKEND_F_DRAIN)))
			alt[nalt++] = &fz_backends[i];
	if (!nalt)
		return;
	cur = alt[in[n - 1] % nalt];
	if (maglev_dp_backend_get(fz.dp, cur->idx, &mb))
		fail("reading backend %u", cur->idx);
	s->conn.backend_idx = cur->idx;
	s->conn.backend_gen = mb.gen;
	s->check = maglev_conn_check(h, s);

	seq[0] = in[n / 2] & 1 ? 0x04 : 0x11; /* RST, or FIN ACK */
	for (i = 1; i < 4; i++)
		seq[i] = flags[in[(n * i) / 4] % sizeof(flags)];
	seq[4] = 0x02; /* SYN */
	seq[5] = 0x10; /* ACK */
	off = v.l2 + v.hl + 13;
	memcpy(copy, in, n);
	for (i = 0; i < sizeof(seq); i++) {
		copy[off] = seq[i];
		fz.stage = "a FIN/RST/SYN sequence against an entry moved to another backend";
		if (run_once(copy, n, &r, d) != MAGLEV_REASON_TX_FORWARD)
			fail("TCP flags %#x (step %zu) not forwarded on the flow's entry", seq[i],
			     i);
		check_encap(copy, n, &r, 0, cur);
		expect_ctrs("a packet of an entry moved to another backend", d, 1, 0, 0);
	}
	fz.stage = NULL;
}

/* Coverage feature of the input: reason x VLAN depth x L3 family. */
static void feed_back(const uint8_t *in, size_t n, int reason)
{
	uint16_t type = 0;
	size_t l2 = parse_l2(in, n, &type);
	int depth = l2 ? (int)(l2 - 14) / 4 : 3;
	int fam = !l2 ? 0 : type == 0x0800 ? 1 : type == 0x86dd ? 2 : 0;

	xc[(reason * 4 + depth) * 3 + fam]++;
}

/* The whole oracle for one frame; returns its reason. */
static int fz_one(const uint8_t *in, size_t n)
{
	static struct run_result r, r2;
	uint64_t d[MAGLEV_CTR_MAX];
	int reason;

	fz.in = in;
	fz.n = n;
	/* Every flow is new: the expected backend is the userspace pick. */
	memset(fz.conns, 0, fz.conns_len);
	reason = run_once(in, n, &r, d);
	fz.hist[reason]++;
	fz.execs++;
	feed_back(in, n, reason);
	switch (reason) {
	case MAGLEV_REASON_TX_FORWARD:
		check_encap(in, n, &r, 0, NULL);
		expect_ctrs("new flow", d, 0, 1, 1);
		/* The flow's second packet takes the connection table. */
		if (run_once(in, n, &r2, d) != MAGLEV_REASON_TX_FORWARD)
			fail("second packet of a forwarded flow not forwarded");
		expect_ctrs("second packet", d, 1, 0, 0);
		expect_bytes("second packet of the flow", r2.out, r2.len, r.out, r.len);
		check_spoofs(in, n);
		break;
	case MAGLEV_REASON_TX_ICMP_FORWARD:
		check_encap(in, n, &r, 1, NULL);
		if (d[MAGLEV_CTR_CONN_INSERT])
			fail("an ICMP error created a connection entry");
		break;
	case MAGLEV_REASON_TX_ECHO_REPLY:
		check_echo(in, n, &r);
		break;
	case MAGLEV_REASON_TX_TOO_BIG:
		check_too_big(in, n, &r);
		break;
	default:
		if (reason_action(reason) == XDP_PASS)
			expect_bytes("passed frame modified", r.out, r.len, in, n);
		break;
	}
	fz.in = NULL;
	return reason;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* BPF_PROG_TEST_RUN refuses frames shorter than an Ethernet header. */
	if (size < 14 || size > FZ_MAX_LEN)
		return -1;
	fz_one(data, size);
	return 0;
}

static void setup_fail(const char *what, int ret)
{
	fprintf(stderr, "xdp_fuzz: set-up: %s: %s\n", what, strerror(ret < 0 ? -ret : ret));
	exit(1);
}

static void install_tables(void)
{
	static uint32_t slots[MAGLEV_TABLE_SIZE];
	struct maglev_backend_spec spec[FZ_VIP_BACKENDS];
	struct maglev_err err;
	size_t i, j, nb;
	int ret;

	for (i = 0; i < fz_nvips; i++) {
		const struct fz_vip *v = &fz_vips[i];
		uint32_t *t;

		memset(spec, 0, sizeof(spec));
		for (nb = 0; nb < FZ_VIP_BACKENDS && v->backends[nb]; nb++) {
			const struct fz_backend *be = fz_backend(v->backends[nb]);

			spec[nb].family = (uint8_t)be->family;
			memcpy(spec[nb].addr, be->addr, be->family == P_AF4 ? 4 : 16);
			spec[nb].weight = 1;
		}
		if (!nb)
			continue;
		ret = maglev_table_build(&fz.seed, spec, nb, MAGLEV_TABLE_SIZE, slots, &err);
		if (ret) {
			fprintf(stderr, "xdp_fuzz: table of VIP %u: %s\n", v->vip_id, err.msg);
			exit(1);
		}
		t = malloc(sizeof(slots));
		if (!t)
			setup_fail("table", -ENOMEM);
		for (j = 0; j < MAGLEV_TABLE_SIZE; j++)
			t[j] = v->backends[slots[j]];
		ret = maglev_dp_table_swap(fz.dp, v->vip_id, t);
		if (ret)
			setup_fail("table swap", ret);
		fz.tables[v->vip_id] = t;
	}
}

static void setup(void)
{
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = 64};
	struct bpf_map_info info = {};
	uint32_t ilen = sizeof(info);
	struct maglev_config cfg;
	char err[256] = "";
	size_t i, page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t zero = 0;
	int ret, fd;

	ret = maglev_dp_open(&fz.dp, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "xdp_fuzz: maglev_dp_open: %s\n", err);
		exit(1);
	}
	base_config(&cfg);
	cfg.mtu = FZ_MTU;
	ret = maglev_dp_set_config(fz.dp, &cfg);
	if (ret)
		setup_fail("config", ret);
	fz.seed.k0 = cfg.seed_k0;
	fz.seed.k1 = cfg.seed_k1;
	for (i = 0; i < fz_nbackends; i++) {
		const struct fz_backend *b = &fz_backends[i];
		struct maglev_backend mb = {.family = (uint8_t)b->family, .flags = b->flags};

		memcpy(mb.addr, b->addr, b->family == P_AF4 ? 4 : 16);
		ret = maglev_dp_backend_set(fz.dp, b->idx, &mb);
		if (ret)
			setup_fail("backend", ret);
	}
	for (i = 0; i < fz_nvips; i++) {
		const struct fz_vip *v = &fz_vips[i];

		ret = add_vip(fz.dp, v->addr, v->family, v->port, v->proto, v->vip_id, v->encap,
			      v->gue_port);
		if (ret)
			setup_fail("VIP", ret);
	}
	install_tables();

	fz.prog = maglev_dp_prog_fd(fz.dp);
	fd = maglev_dp_map_fd(fz.dp, "maglev_connkey");
	if (fd < 0 || bpf_map_lookup_elem(fd, &zero, &fz.connkey))
		setup_fail("connection table seed", -errno);
	fz.reasons_fd = maglev_dp_map_fd(fz.dp, "maglev_reasons");
	fz.ctrs_fd = maglev_dp_map_fd(fz.dp, "maglev_ctrs");
	fd = maglev_dp_map_fd(fz.dp, "maglev_conns");
	if (fz.reasons_fd < 0 || fz.ctrs_fd < 0 || fd < 0)
		setup_fail("map fds", -ENOENT);
	ret = bpf_obj_get_info_by_fd(fd, &info, &ilen);
	if (ret)
		setup_fail("conn map info", errno);
	fz.conns_len = ((size_t)info.max_entries * info.value_size + page - 1) / page * page;
	fz.conns = mmap(NULL, fz.conns_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fz.conns == MAP_FAILED)
		setup_fail("mmap connection table", errno);
	fz.ncpus = libbpf_num_possible_cpus();
	if (fz.ncpus <= 0)
		setup_fail("possible CPUs", fz.ncpus);
	fz.vals = calloc((size_t)fz.ncpus * MAGLEV_REASON_MAX, sizeof(uint64_t));
	if (!fz.vals)
		setup_fail("counters", -ENOMEM);
	read_percpu(fz.reasons_fd, MAGLEV_REASON_MAX, fz.reasons);
	read_percpu(fz.ctrs_fd, MAGLEV_CTR_MAX, fz.ctrs);
}

static const char *stats_path;

/* Per-reason input counts, for the runner's coverage figures. */
static void write_stats(void)
{
	FILE *f = fopen(stats_path, "w");
	int i;

	if (!f)
		return;
	fprintf(f, "execs %llu\n", (unsigned long long)fz.execs);
	for (i = 0; i < MAGLEV_REASON_MAX; i++)
		fprintf(f, "%s %llu\n", maglev_dp_reason_name(i), (unsigned long long)fz.hist[i]);
	fclose(f);
}

static const char *gen_dir;

static int emit_seed(const char *name, const uint8_t *frame, size_t len, int want)
{
	char path[4096];
	FILE *f;
	int got;

	if (len < 14 || len > FZ_MAX_LEN) {
		fprintf(stderr, "xdp_fuzz: seed %s: length %zu out of range\n", name, len);
		return -1;
	}
	got = fz_one(frame, len);
	if (got != want) {
		fprintf(stderr, "xdp_fuzz: seed %s reached %s, meant for %s\n", name,
			maglev_dp_reason_name(got), maglev_dp_reason_name(want));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/seed-%s", gen_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(frame, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "xdp_fuzz: write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	stats_path = getenv("MAGLEV_XDP_FUZZ_STATS");
	if (stats_path && *stats_path)
		atexit(write_stats);
	gen_dir = getenv("MAGLEV_XDP_FUZZ_GEN");
	if (gen_dir && *gen_dir)
		exit(fz_gen_seeds(emit_seed) ? 1 : 0);
	return 0;
}
