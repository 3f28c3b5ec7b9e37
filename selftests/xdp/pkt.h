/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The tests' own packet builders and checksums, written from the RFCs and
 * independent of bpf/: expected packets are built here byte by byte and
 * compared with what the BPF programs produce.
 */
#ifndef MAGLEV_TEST_PKT_H
#define MAGLEV_TEST_PKT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>

#define P_AF4 2
#define P_AF6 10

struct flow {
	int family;
	uint8_t src[16], dst[16]; /* network order bytes; IPv4 in [0..3] */
	uint16_t sport, dport;	  /* host order */
	uint8_t proto;
};

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* RFC 1071 over big-endian 16-bit words; returns the unfolded sum. */
static inline uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static inline uint16_t csum_finish(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* TCP/UDP/ICMPv6 checksum with the pseudo header. */
static inline uint16_t l4_csum(int family, const uint8_t *src, const uint8_t *dst, uint8_t proto,
			       const uint8_t *seg, size_t len)
{
	uint32_t sum = 0;
	int alen = family == P_AF4 ? 4 : 16;

	sum = csum_add(sum, src, alen);
	sum = csum_add(sum, dst, alen);
	sum += proto;
	sum += (uint32_t)len;
	sum = csum_add(sum, seg, len);
	return csum_finish(sum);
}

static const uint8_t MAC_CLIENT_RTR[6] = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x01};
static const uint8_t MAC_LB[6] = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x02};
static const uint8_t MAC_NEXTHOP[6] = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x03};

/* Ethernet with nvlan tags (outer 802.1ad when two, like QinQ). */
static inline size_t put_eth(uint8_t *p, const uint8_t *dst, const uint8_t *src, int nvlan,
			     uint16_t type)
{
	size_t off = 12;
	int i;

	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	for (i = 0; i < nvlan; i++) {
		put16(p + off, nvlan == 2 && i == 0 ? 0x88a8 : 0x8100);
		put16(p + off + 2, 100 + i);
		off += 4;
	}
	put16(p + off, type);
	return off + 2;
}

static inline size_t put_ip4(uint8_t *p, uint8_t tos, uint16_t tot, uint16_t frag, uint8_t ttl,
			     uint8_t proto, const uint8_t *s, const uint8_t *d)
{
	p[0] = 0x45;
	p[1] = tos;
	put16(p + 2, tot);
	put16(p + 4, 0x1234);
	put16(p + 6, frag);
	p[8] = ttl;
	p[9] = proto;
	put16(p + 10, 0);
	memcpy(p + 12, s, 4);
	memcpy(p + 16, d, 4);
	put16(p + 10, csum_finish(csum_add(0, p, 20)));
	return 20;
}

static inline size_t put_ip6(uint8_t *p, uint8_t tc, uint32_t label, uint16_t plen, uint8_t nh,
			     uint8_t hlim, const uint8_t *s, const uint8_t *d)
{
	put32(p, 6u << 28 | (uint32_t)tc << 20 | (label & 0xfffff));
	put16(p + 4, plen);
	p[6] = nh;
	p[7] = hlim;
	memcpy(p + 8, s, 16);
	memcpy(p + 24, d, 16);
	return 40;
}

struct client_opts {
	int nvlan;
	uint8_t tos;
	uint8_t ttl;	   /* 0: 64 */
	uint8_t tcp_flags; /* 0: ACK */
	size_t payload;
	int no_df;
};

/* A client's frame toward the VIP: Ethernet, IP, TCP or UDP, payload. */
static inline size_t build_client(uint8_t *b, const struct flow *f, const struct client_opts *o)
{
	size_t l4len = (f->proto == IPPROTO_TCP ? 20 : 8) + o->payload;
	uint8_t ttl = o->ttl ? o->ttl : 64;
	size_t off, i;
	uint8_t *l4;

	off = put_eth(b, MAC_LB, MAC_CLIENT_RTR, o->nvlan, f->family == P_AF4 ? 0x0800 : 0x86dd);
	if (f->family == P_AF4)
		off += put_ip4(b + off, o->tos, 20 + l4len, o->no_df ? 0 : 0x4000, ttl, f->proto,
			       f->src, f->dst);
	else
		off += put_ip6(b + off, o->tos, 0x12345, l4len, f->proto, ttl, f->src, f->dst);
	l4 = b + off;
	memset(l4, 0, l4len);
	put16(l4, f->sport);
	put16(l4 + 2, f->dport);
	if (f->proto == IPPROTO_TCP) {
		put32(l4 + 4, 1000);
		put32(l4 + 8, 2000);
		l4[12] = 5 << 4;
		l4[13] = o->tcp_flags ? o->tcp_flags : 0x10;
		put16(l4 + 14, 65535);
	} else {
		put16(l4 + 4, l4len);
	}
	for (i = 0; i < o->payload; i++)
		l4[l4len - o->payload + i] = (uint8_t)(i * 7 + 1);
	put16(l4 + (f->proto == IPPROTO_TCP ? 16 : 6),
	      l4_csum(f->family, f->src, f->dst, f->proto, l4, l4len));
	return off + l4len;
}

/* What the balancer must put in front of the inner packet. */
struct encap_want {
	int outer_family;
	int gue;
	uint16_t gue_port; /* host order */
	uint8_t backend[16];
	/* outer source prefix (bytes) and length, per family */
	uint8_t src4[4];
	int src4_plen;
	uint8_t src6[16];
	int src6_plen;
	int nvlan;
};

/* murmur3 fmix32 over the client's address words and ports as a
 * little-endian machine loads them from the packet (docs/datapath.md).
 */
static inline uint32_t flow_fold(const struct flow *f)
{
	uint32_t w[4] = {0, 0, 0, 0}, x;
	uint16_t sp = htons(f->sport), dp = htons(f->dport);

	memcpy(w, f->src, f->family == P_AF4 ? 4 : 16);
	x = w[0] ^ w[1] ^ w[2] ^ w[3] ^ ((uint32_t)sp << 16 | dp);
	x ^= x >> 16;
	x *= 0x85ebca6b;
	x ^= x >> 13;
	x *= 0xc2b2ae35;
	x ^= x >> 16;
	return x;
}

/* Prefix bytes with the host part of the last 32 bits from fold. */
static inline void outer_src(uint8_t *out, const uint8_t *prefix, int alen, int plen, uint32_t fold)
{
	int host_bits = alen * 8 - plen, i;

	memcpy(out, prefix, alen);
	if (host_bits > 32)
		host_bits = 32;
	for (i = 0; i < host_bits; i++) {
		int bit = alen * 8 - 1 - i; /* from the last bit up */
		uint8_t m = (uint8_t)(1u << (7 - bit % 8));

		if ((fold >> i) & 1)
			out[bit / 8] |= m;
		else
			out[bit / 8] &= (uint8_t)~m;
	}
}

/*
 * Expected balancer output for client frame in (from build_client): the
 * inner packet with TTL / hop limit decremented (checksum recomputed from
 * scratch), behind the outer headers.
 */
static inline size_t build_encap(uint8_t *out, const uint8_t *in, size_t in_len,
				 const struct flow *f, const struct encap_want *w)
{
	size_t l2 = 14 + 4 * w->nvlan, inner_len = in_len - l2, off, over;
	uint32_t fold = flow_fold(f);
	uint8_t inner_proto = f->family == P_AF4 ? 4 : 41;
	uint8_t src[16], tos, *inner;
	int i;

	over = (w->outer_family == P_AF4 ? 20 : 40) + (w->gue ? 12 : 0);
	/* L2: new MACs, the same tags, outer ethertype. */
	off = put_eth(out, MAC_NEXTHOP, MAC_LB, w->nvlan,
		      w->outer_family == P_AF4 ? 0x0800 : 0x86dd);
	for (i = 0; i < w->nvlan; i++)
		memcpy(out + 12 + 4 * i, in + 12 + 4 * i, 4);
	inner = out + off + over;
	memcpy(inner, in + l2, inner_len);
	if (f->family == P_AF4) {
		tos = inner[1];
		inner[8]--;
		put16(inner + 10, 0);
		put16(inner + 10, csum_finish(csum_add(0, inner, 20)));
	} else {
		tos = (uint8_t)(get16(inner) >> 4);
		inner[7]--;
	}
	if (w->outer_family == P_AF4) {
		outer_src(src, w->src4, 4, w->src4_plen, fold);
		out[off] = 0x45;
		out[off + 1] = tos;
		put16(out + off + 2, (uint16_t)(inner_len + over));
		put16(out + off + 4, 0);
		put16(out + off + 6, 0x4000);
		out[off + 8] = 64;
		out[off + 9] = w->gue ? 17 : inner_proto;
		put16(out + off + 10, 0);
		memcpy(out + off + 12, src, 4);
		memcpy(out + off + 16, w->backend, 4);
		put16(out + off + 10, csum_finish(csum_add(0, out + off, 20)));
		off += 20;
	} else {
		outer_src(src, w->src6, 16, w->src6_plen, fold);
		off += put_ip6(out + off, tos, fold & 0xfffff, (uint16_t)(inner_len + over - 40),
			       w->gue ? 17 : inner_proto, 64, src, w->backend);
	}
	if (w->gue) {
		put16(out + off, 0x8000 | (fold & 0x7fff));
		put16(out + off + 2, w->gue_port);
		put16(out + off + 4, (uint16_t)(inner_len + 12));
		put16(out + off + 6, 0);
		out[off + 8] = 0;
		out[off + 9] = inner_proto;
		put16(out + off + 10, 0);
		off += 12;
	}
	return off + inner_len;
}

/* An ICMP error from router about the VIP -> client packet of flow f
 * (quoting quote bytes of it); the frame's length.
 */
static inline size_t build_icmp_error(uint8_t *b, const struct flow *f, const uint8_t *router,
				      uint8_t type, uint8_t code, size_t quote)
{
	struct flow rev = *f;
	struct client_opts co = {.payload = 64};
	uint8_t orig[512], *ic;
	size_t off, len;

	memcpy(rev.src, f->dst, 16);
	memcpy(rev.dst, f->src, 16);
	rev.sport = f->dport;
	rev.dport = f->sport;
	build_client(orig, &rev, &co);
	off = put_eth(b, MAC_LB, MAC_CLIENT_RTR, 0, f->family == P_AF4 ? 0x0800 : 0x86dd);
	len = 8 + quote;
	if (f->family == P_AF4)
		off += put_ip4(b + off, 0xc0, (uint16_t)(20 + len), 0, 60, 1, router, f->dst);
	else
		off += put_ip6(b + off, 0, 0, (uint16_t)len, 58, 60, router, f->dst);
	ic = b + off;
	memset(ic, 0, 8);
	ic[0] = type;
	ic[1] = code;
	put16(ic + 6, 1400);
	memcpy(ic + 8, orig + 14, quote);
	if (f->family == P_AF4)
		put16(ic + 2, csum_finish(csum_add(0, ic, len)));
	else
		put16(ic + 2, l4_csum(P_AF6, router, f->dst, 58, ic, len));
	return off + len;
}

/* Insert IPv6 extension headers (types[i], lens[i] bytes each) between the
 * IPv6 header at frame + l3 and what follows it; *len and the payload length
 * grow accordingly.
 */
static inline void insert_ipv6_ext(uint8_t *frame, size_t *len, size_t l3, const uint8_t *types,
				   const size_t *lens, int count)
{
	size_t l4 = l3 + 40, seglen = *len - l4, total = 0;
	uint8_t seg[2048], first = frame[l3 + 6], *p = frame + l4;
	int i;

	memcpy(seg, p, seglen);
	for (i = 0; i < count; i++) {
		memset(p, 0, lens[i]);
		p[0] = i + 1 < count ? types[i + 1] : first;
		p[1] = types[i] == 44 ? 0 : (uint8_t)(lens[i] / 8 - 1);
		p += lens[i];
		total += lens[i];
	}
	memcpy(p, seg, seglen);
	frame[l3 + 6] = types[0];
	*len += total;
	put16(frame + l3 + 4, (uint16_t)(*len - l4));
}

/* Insert nbytes (a multiple of 4, at most 40) of IPv4 NOP options after the
 * 20-byte IPv4 header at frame + l3; IHL, total length and checksum follow.
 */
static inline void insert_ipv4_nops(uint8_t *frame, size_t *len, size_t l3, size_t nbytes)
{
	uint8_t *ip = frame + l3, rest[2048];
	size_t seglen = *len - l3 - 20;

	memcpy(rest, ip + 20, seglen);
	memset(ip + 20, 1, nbytes);
	memcpy(ip + 20 + nbytes, rest, seglen);
	*len += nbytes;
	ip[0] = (uint8_t)(0x40 | (20 + nbytes) / 4);
	put16(ip + 2, (uint16_t)(*len - l3));
	put16(ip + 10, 0);
	put16(ip + 10, csum_finish(csum_add(0, ip, 20 + nbytes)));
}

#endif /* MAGLEV_TEST_PKT_H */
