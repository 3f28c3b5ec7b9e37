/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared set-up for the XDP tests: a balancer loaded through the datapath
 * library with unpinned maps, a known configuration, and helpers to run a
 * frame through BPF_PROG_TEST_RUN and compare bytes.
 */
#ifndef MAGLEV_TEST_FIXTURE_H
#define MAGLEV_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "kselftest_harness.h"
#include "datapath.h"
#include "maglev_conn.h"
#include "maglev_hash.h"
#include "maglev_table.h"
#include "pkt.h"

/* Addresses: clients 198.51.100.0/25 and 2001:db8:c::/64, VIPs 203.0.113.0/24
 * and 2001:db8:f::/64, backends 192.0.2.0/24 and 2001:db8:b::/64, outer
 * sources 198.51.100.128/25 and 2001:db8:5::/64.
 */
static const uint8_t SRC4[4] = {198, 51, 100, 128};
static const uint8_t SRC6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0x05};
#define SRC4_PLEN 25
#define SRC6_PLEN 64

static inline void v4addr(uint8_t *a, uint8_t x, uint8_t y, uint8_t z, uint8_t w)
{
	memset(a, 0, 16);
	a[0] = x;
	a[1] = y;
	a[2] = z;
	a[3] = w;
}

static inline void v6addr(uint8_t *a, uint16_t net, uint32_t host)
{
	memset(a, 0, 16);
	a[0] = 0x20;
	a[1] = 0x01;
	a[2] = 0x0d;
	a[3] = 0xb8;
	put16(a + 4, net);
	put32(a + 12, host);
}

static inline void base_config(struct maglev_config *c)
{
	memset(c, 0, sizeof(*c));
	c->seed_k0 = MAGLEV_DEFAULT_SEED_K0;
	c->seed_k1 = MAGLEV_DEFAULT_SEED_K1;
	memcpy(c->nexthop_mac, MAC_NEXTHOP, 6);
	memcpy(c->src_mac, MAC_LB, 6);
	memcpy(&c->src4_prefix, SRC4, 4);
	c->src4_plen = SRC4_PLEN;
	memcpy(c->src6_prefix, SRC6, 16);
	c->src6_plen = SRC6_PLEN;
}

/* A balancer with unpinned maps and the base config; o: NULL for the
 * defaults (65,536 flows).
 */
static inline struct maglev_dp *open_dp_opts(struct __test_metadata *_metadata,
					     const struct maglev_dp_opts *opts)
{
	struct maglev_dp_opts o = {.pin_dir = "", .conn_table_size = 1 << 16};
	struct maglev_config cfg;
	struct maglev_dp *dp = NULL;
	char err[256] = "";
	int ret;

	if (opts)
		o = *opts;
	ret = maglev_dp_open(&dp, &o, err, sizeof(err));
	if (ret)
		TH_LOG("maglev_dp_open: %s", err);
	ASSERT_EQ(0, ret);
	base_config(&cfg);
	ASSERT_EQ(0, maglev_dp_set_config(dp, &cfg));
	return dp;
}

static inline struct maglev_dp *open_dp(struct __test_metadata *_metadata)
{
	return open_dp_opts(_metadata, NULL);
}

static inline void vip_key(struct maglev_vip_key *k, const uint8_t *addr, int family, uint16_t port,
			   uint8_t proto)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->addr, addr, family == P_AF4 ? 4 : 16);
	k->family = family;
	k->port = htons(port);
	k->proto = proto;
}

static inline int add_vip(struct maglev_dp *dp, const uint8_t *addr, int family, uint16_t port,
			  uint8_t proto, uint32_t vip_id, int encap, uint16_t gue_port)
{
	struct maglev_vip_info info = {
		.vip_id = vip_id, .encap = (uint8_t)encap, .gue_port = htons(gue_port)};
	struct maglev_vip_key k;

	vip_key(&k, addr, family, port, proto);
	return maglev_dp_vip_set(dp, &k, &info);
}

static inline int add_backend(struct maglev_dp *dp, uint32_t idx, const uint8_t *addr, int family)
{
	struct maglev_backend b = {.family = (uint8_t)family, .flags = MAGLEV_BACKEND_F_UP};

	memcpy(b.addr, addr, family == P_AF4 ? 4 : 16);
	return maglev_dp_backend_set(dp, idx, &b);
}

/* A table whose every slot is backend idx. */
static inline int fill_table(struct maglev_dp *dp, uint32_t vip_id, uint32_t idx)
{
	static uint32_t t[MAGLEV_TABLE_SIZE];
	uint32_t i;

	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		t[i] = idx;
	return maglev_dp_table_swap(dp, vip_id, t);
}

struct run_result {
	uint32_t action;
	uint32_t len;
	uint8_t out[4096];
};

static inline int run_prog(int prog_fd, const void *in, size_t len, struct run_result *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out), .repeat = 1);
	int ret = bpf_prog_test_run_opts(prog_fd, &o);

	r->action = o.retval;
	r->len = o.data_size_out;
	return ret;
}

static inline void hexdump_diff(const uint8_t *got, size_t glen, const uint8_t *exp, size_t elen)
{
	size_t i, n = glen > elen ? glen : elen;

	for (i = 0; i < n; i++) {
		if (i < glen && i < elen && got[i] == exp[i])
			continue;
		fprintf(stderr,
			"#   first difference at byte %zu: got %02x want %02x (lens %zu/%zu)\n", i,
			i < glen ? got[i] : 0, i < elen ? exp[i] : 0, glen, elen);
		return;
	}
}

#define ASSERT_BYTES(got, glen, exp, elen)                                     \
	do {                                                                   \
		int same_ = (glen) == (elen) && !memcmp((got), (exp), (elen)); \
		if (!same_)                                                    \
			hexdump_diff((got), (glen), (exp), (elen));            \
		ASSERT_TRUE(same_);                                            \
	} while (0)

static inline uint64_t reason_count(struct maglev_dp *dp, int reason)
{
	uint64_t c[MAGLEV_REASON_MAX];

	if (maglev_dp_reason_stats(dp, c))
		return (uint64_t)-1;
	return c[reason];
}

static inline uint64_t counter(struct maglev_dp *dp, int ctr)
{
	uint64_t c[MAGLEV_CTR_MAX];

	if (maglev_dp_counter_stats(dp, c))
		return (uint64_t)-1;
	return c[ctr];
}

static inline void flow_key(struct maglev_flow_key *k, const struct flow *f)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->src, f->src, f->family == P_AF4 ? 4 : 16);
	memcpy(k->dst, f->dst, f->family == P_AF4 ? 4 : 16);
	k->sport = htons(f->sport);
	k->dport = htons(f->dport);
	k->proto = f->proto;
	k->family = f->family;
}

/* Connection-table bucket of a flow, from the table's own seed and mask;
 * UINT32_MAX if they cannot be read.
 */
static inline uint32_t bucket_of(struct maglev_dp *dp, const struct flow *f)
{
	struct maglev_conn_params p;
	struct maglev_flow_key k;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(maglev_dp_map_fd(dp, "maglev_connkey"), &zero, &p))
		return UINT32_MAX;
	flow_key(&k, f);
	return (uint32_t)maglev_conn_hash(&k, p.seed) & p.mask;
}

/* Outer destination of an encapsulated frame (l2 bytes of MAC + tags). */
static inline void outer_dst(const struct run_result *r, size_t l2, uint8_t *dst)
{
	memset(dst, 0, 16);
	if (get16(r->out + l2 - 2) == 0x0800)
		memcpy(dst, r->out + l2 + 16, 4);
	else
		memcpy(dst, r->out + l2 + 24, 16);
}

/* The tests' client flows: 198.51.100.7:40001 -> 203.0.113.10:80 and
 * 2001:db8:c::7 -> 2001:db8:f::10, TCP.
 */
static inline void client_flows(struct flow *f4, struct flow *f6)
{
	memset(f4, 0, sizeof(*f4));
	f4->family = P_AF4;
	v4addr(f4->src, 198, 51, 100, 7);
	v4addr(f4->dst, 203, 0, 113, 10);
	f4->sport = 40001;
	f4->dport = 80;
	f4->proto = IPPROTO_TCP;
	*f6 = *f4;
	f6->family = P_AF6;
	v6addr(f6->src, 0xc, 7);
	v6addr(f6->dst, 0xf, 10);
}

/* The table of backends be[lo..hi] (weight 1; odd indices IPv4, even IPv6,
 * as the tests add them) under the default seed, with datapath indices
 * (spec index + lo) as entries.
 */
static inline int backends_table(const uint8_t (*be)[16], int lo, int hi, uint32_t *out)
{
	struct maglev_seed seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};
	struct maglev_backend_spec *spec = calloc(hi - lo + 1, sizeof(*spec));
	struct maglev_err err;
	int n = 0, idx, ret;
	uint32_t i;

	if (!spec)
		return -ENOMEM;
	for (idx = lo; idx <= hi; idx++, n++) {
		spec[n].family = idx % 2 ? P_AF4 : P_AF6;
		memcpy(spec[n].addr, be[idx], 16);
		spec[n].weight = 1;
	}
	ret = maglev_table_build(&seed, spec, n, MAGLEV_TABLE_SIZE, out, &err);
	free(spec);
	if (ret)
		return ret;
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
		out[i] += lo;
	return 0;
}

/* Which of be[1..n] a client frame of f (TCP flags) was encapsulated to, by
 * the outer destination; 0: not XDP_TX, -1: none of them.
 */
static inline int backend_sent_to(int prog, const struct flow *f, uint8_t flags,
				  const uint8_t (*be)[16], int n)
{
	struct client_opts co = {.tcp_flags = flags};
	struct run_result r;
	uint8_t in[256], dst[16];
	size_t len;
	int i;

	len = build_client(in, f, &co);
	if (run_prog(prog, in, len, &r) || r.action != XDP_TX)
		return 0;
	outer_dst(&r, 14, dst);
	for (i = 1; i <= n; i++)
		if (!memcmp(dst, be[i], 16))
			return i;
	return -1;
}

#endif /* MAGLEV_TEST_FIXTURE_H */
