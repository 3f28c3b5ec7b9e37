/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hand-built client frames for the module's forwarding tests: UDP datagrams
 * over IPv4 (optionally with options) or IPv6 (optionally with a
 * destination-options header), whole or cut into fragments, sent from the
 * client namespace through an AF_PACKET socket so nothing in the client's
 * stack rewrites them; and the backends' receiving sockets.
 */
#ifndef KMOD_PKT_H
#define KMOD_PKT_H

#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <sys/socket.h>
#include "kmod_util.h"

#define KMOD_LB_MAC	"\x02\x00\x00\x00\x00\x02"
#define KMOD_CLIENT_MAC "\x02\x00\x00\x00\x00\x01"
#define KMOD_VIP_PORT	5000
#define KMOD_GUE_PORT	6080
#define KMOD_NBACKENDS	3
#define KMOD_MAX_FRAGS	64
#define KMOD_FRAME_MAX	1600

struct kmod_flow {
	struct maglev_flow_key key; /* family, addresses, ports (network order) */
};

struct kmod_frame {
	size_t len;
	uint8_t b[KMOD_FRAME_MAX];
};

/* Datagram shape. frag: bytes of fragmentable payload per fragment (a
 * multiple of 8), 0 for a whole datagram.
 */
struct kmod_shape {
	size_t frag;
	int ip_options; /* IPv4: a record-route option (whole datagrams only) */
	int dst_opts;	/* IPv6: a destination-options header */
	uint8_t ttl;	/* TTL / hop limit; 0: 64 */
};

static inline uint32_t kmod_pseudo_sum(const struct maglev_flow_key *k, size_t ulen)
{
	uint8_t tail[4] = {0, 0, 0, IPPROTO_UDP};
	uint32_t sum = 0, l32 = htonl((uint32_t)ulen);
	uint16_t l = htons((uint16_t)ulen);

	if (k->family == MAGLEV_AF_INET) {
		sum = kmod_csum_add(sum, k->src, 4);
		sum = kmod_csum_add(sum, k->dst, 4);
		sum += IPPROTO_UDP;
		return kmod_csum_add(sum, &l, 2);
	}
	sum = kmod_csum_add(sum, k->src, 16);
	sum = kmod_csum_add(sum, k->dst, 16);
	sum = kmod_csum_add(sum, &l32, 4);
	return kmod_csum_add(sum, tail, 4);
}

/* UDP header + payload with a correct checksum, into out. */
static inline size_t kmod_udp(const struct maglev_flow_key *k, const uint8_t *payload, size_t plen,
			      uint8_t *out)
{
	size_t ulen = 8 + plen;
	uint16_t l = htons((uint16_t)ulen), c;

	memcpy(out, &k->sport, 2);
	memcpy(out + 2, &k->dport, 2);
	memcpy(out + 4, &l, 2);
	memset(out + 6, 0, 2);
	memcpy(out + 8, payload, plen);
	c = kmod_csum_fold(kmod_csum_add(kmod_pseudo_sum(k, ulen), out, ulen));
	if (!c)
		c = 0xffff;
	memcpy(out + 6, &c, 2);
	return ulen;
}

static inline uint8_t *kmod_eth(struct kmod_frame *f, int v6)
{
	uint16_t type = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);

	memcpy(f->b, KMOD_LB_MAC, 6);
	memcpy(f->b + 6, KMOD_CLIENT_MAC, 6);
	memcpy(f->b + 12, &type, 2);
	return f->b + 14;
}

/*
 * Build the frames of one IP packet carrying l4 (len bytes of protocol
 * proto, complete with its checksum). Returns the number of frames, or -1
 * if they would not fit. ident: IPv4 id / IPv6 fragment identification.
 */
static inline int kmod_build_ip(const struct maglev_flow_key *k, uint8_t proto, const uint8_t *l4,
				size_t len, const struct kmod_shape *s, uint32_t ident,
				struct kmod_frame *fr)
{
	static uint8_t body[70000];
	size_t blen = 0, off, n;
	int v6 = k->family == MAGLEV_AF_INET6, count = 0;
	uint8_t first_nh = proto;

	if (v6 && s->dst_opts) {
		/* Next header, length 0 (8 bytes), PadN of 4 zero bytes. */
		static const uint8_t opt[6] = {1, 4, 0, 0, 0, 0};

		body[0] = proto;
		body[1] = 0;
		memcpy(body + 2, opt, sizeof(opt));
		blen = 8;
		first_nh = IPPROTO_DSTOPTS;
	}
	if (blen + len > sizeof(body))
		return -1;
	memcpy(body + blen, l4, len);
	blen += len;
	for (off = 0; off < blen; off += n) {
		struct kmod_frame *f = &fr[count];
		int last;
		uint8_t *p;

		if (count == KMOD_MAX_FRAGS)
			return -1;
		n = s->frag ? s->frag : blen;
		if (n > blen - off)
			n = blen - off;
		if (n + 14 + 40 + 8 + 8 > KMOD_FRAME_MAX)
			return -1;
		last = off + n == blen;
		p = kmod_eth(f, v6);
		if (!v6) {
			size_t optlen = s->ip_options ? 8 : 0, hl = 20 + optlen;
			uint16_t tot = htons((uint16_t)(hl + n));
			uint16_t fo = htons((uint16_t)((off / 8) | (last ? 0 : 0x2000)));
			uint16_t id = htons((uint16_t)ident), c;

			p[0] = 0x40 | (uint8_t)(hl / 4);
			p[1] = 0;
			memcpy(p + 2, &tot, 2);
			memcpy(p + 4, &id, 2);
			memcpy(p + 6, &fo, 2);
			p[8] = s->ttl ? s->ttl : 64;
			p[9] = proto;
			memset(p + 10, 0, 2);
			memcpy(p + 12, k->src, 4);
			memcpy(p + 16, k->dst, 4);
			if (optlen) {
				/* Record route with one empty slot, then end of list. */
				static const uint8_t rr[8] = {7, 7, 4, 0, 0, 0, 0, 0};

				memcpy(p + 20, rr, 8);
			}
			c = kmod_csum_fold(kmod_csum_add(0, p, hl));
			memcpy(p + 10, &c, 2);
			memcpy(p + hl, body + off, n);
			f->len = 14 + hl + n;
		} else {
			int frag = s->frag != 0;
			uint16_t pl = htons((uint16_t)(n + (frag ? 8 : 0)));

			p[0] = 0x60;
			p[1] = p[2] = p[3] = 0;
			memcpy(p + 4, &pl, 2);
			p[6] = frag ? IPPROTO_FRAGMENT : first_nh;
			p[7] = s->ttl ? s->ttl : 64;
			memcpy(p + 8, k->src, 16);
			memcpy(p + 24, k->dst, 16);
			p += 40;
			if (frag) {
				uint16_t fo = htons((uint16_t)(off | (last ? 0 : 1)));
				uint32_t id = htonl(ident);

				p[0] = first_nh;
				p[1] = 0;
				memcpy(p + 2, &fo, 2);
				memcpy(p + 4, &id, 4);
				p += 8;
			}
			memcpy(p, body + off, n);
			f->len = 14 + 40 + (frag ? 8 : 0) + n;
		}
		count++;
	}
	return count;
}

/* The frames of one UDP datagram of flow k (see kmod_build_ip). */
static inline int kmod_build(const struct maglev_flow_key *k, const uint8_t *payload, size_t plen,
			     const struct kmod_shape *s, uint32_t ident, struct kmod_frame *fr)
{
	static uint8_t udp[70000];

	if (plen + 8 > sizeof(udp))
		return -1;
	return kmod_build_ip(k, IPPROTO_UDP, udp, kmod_udp(k, payload, plen, udp), s, ident, fr);
}

/* The client's AF_PACKET socket on c0 in mlk-c. */
static inline int kmod_client_socket(void)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET};
	int fd;

	if (kmod_setns("mlk-c"))
		return -1;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	sll.sll_ifindex = (int)if_nametoindex("c0");
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int kmod_send_frames(int fd, const struct kmod_frame *f, const int *order, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct kmod_frame *x = &f[order ? order[i] : i];

		if (send(fd, x->b, x->len, 0) != (ssize_t)x->len)
			return -1;
	}
	return 0;
}

/* The key of the VIP addr (text) of family on KMOD_VIP_PORT. */
static inline struct maglev_vip_key kmod_vip_key(int family, const char *addr, uint8_t proto)
{
	struct maglev_vip_key k = {
		.family = family,
		.proto = proto,
		.port = htons(KMOD_VIP_PORT),
	};

	inet_pton(family == MAGLEV_AF_INET ? AF_INET : AF_INET6, addr, k.addr);
	return k;
}

/* A random client flow toward key: from 198.51.100.128/25 or
 * 2001:db8:c::/64, any port from 1024.
 */
static inline void kmod_client_flow(const struct maglev_vip_key *key, uint64_t *rand,
				    struct maglev_flow_key *f)
{
	memset(f, 0, sizeof(*f));
	f->family = key->family;
	f->proto = key->proto;
	memcpy(f->dst, key->addr, sizeof(f->dst));
	if (f->family == MAGLEV_AF_INET) {
		f->src[0] = htonl(0xc6336480 | (kmod_rand(rand) & 0x7f));
	} else {
		f->src[0] = htonl(0x20010db8);
		f->src[1] = htonl(0x000c0000);
		f->src[2] = (uint32_t)kmod_rand(rand);
		f->src[3] = (uint32_t)kmod_rand(rand);
	}
	f->sport = htons(1024 + kmod_rand(rand) % 60000);
	f->dport = htons(KMOD_VIP_PORT);
}

/* Backend index idx's address on topo.sh's topology: 1..10 reach backend
 * idx over IPv4 (203.0.113.8*idx+2), 11..20 backend idx-10 over IPv6
 * (2001:db8:2:K::2).
 */
static inline void kmod_backend_addr(uint32_t idx, uint8_t addr[16])
{
	char a[64];

	memset(addr, 0, 16);
	if (idx <= 10) {
		snprintf(a, sizeof(a), "203.0.113.%u", 8 * idx + 2);
		inet_pton(AF_INET, a, addr);
	} else {
		snprintf(a, sizeof(a), "2001:db8:2:%u::2", idx - 10);
		inet_pton(AF_INET6, a, addr);
	}
}

/*
 * The start of a forwarding test's set-up: topo.sh up (*up set, for the
 * caller's clean-up), in mlk-lb a module handle *nl (open on success), a
 * random seed drawn from MAGLEV_TEST_SEED (printed; *rand goes on from it)
 * given to the module and copied to *seed, and backends 1..KMOD_NBACKENDS
 * (IPv4) and 11.. (IPv6).
 */
static inline int kmod_lb_setup(struct slowpath_nl **nl, struct maglev_seed *seed, uint64_t *rand,
				int *up)
{
	struct slowpath_config cfg = {};
	uint32_t k;
	int err;

	if (system("selftests/kmod/topo.sh up"))
		return -EIO;
	*up = 1;
	if (kmod_setns("mlk-lb"))
		return -errno;
	err = slowpath_nl_open(nl);
	if (err)
		return err;
	*rand = kmod_seed_from_env();
	printf("# MAGLEV_TEST_SEED=0x%llx\n", (unsigned long long)*rand);
	cfg.seed.k0 = kmod_rand(rand);
	cfg.seed.k1 = kmod_rand(rand);
	*seed = cfg.seed;
	err = slowpath_nl_config_set(*nl, &cfg);
	for (k = 1; k <= KMOD_NBACKENDS && !err; k++) {
		struct maglev_backend b4 = {.family = MAGLEV_AF_INET};
		struct maglev_backend b6 = {.family = MAGLEV_AF_INET6};

		kmod_backend_addr(k, (uint8_t *)b4.addr);
		kmod_backend_addr(10 + k, (uint8_t *)b6.addr);
		err = slowpath_nl_backend_set(*nl, k, &b4)
			      ?: slowpath_nl_backend_set(*nl, 10 + k, &b6);
	}
	if (err)
		fprintf(stderr, "# configuring the module: %s\n", slowpath_nl_errmsg(*nl));
	return err;
}

/* Backend k's UDP sockets (index 0: IPv4, 1: IPv6) on the VIP port. */
static inline int kmod_backend_sockets(int k, int fds[2])
{
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(KMOD_VIP_PORT)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(KMOD_VIP_PORT)};
	int one = 1, big = 8 << 20;
	char ns[16];

	snprintf(ns, sizeof(ns), "mlk-b%d", k + 1);
	if (kmod_setns(ns))
		return -1;
	fds[0] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	fds[1] = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fds[0] < 0 || fds[1] < 0)
		return -1;
	setsockopt(fds[0], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fds[1], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fds[1], IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* The TTL / hop limit the datagram arrived with. */
	setsockopt(fds[0], IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	setsockopt(fds[1], IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	if (bind(fds[0], (struct sockaddr *)&a4, sizeof(a4)) ||
	    bind(fds[1], (struct sockaddr *)&a6, sizeof(a6)))
		return -1;
	return 0;
}

struct kmod_rx {
	int backend; /* 0..KMOD_NBACKENDS-1 */
	int family;
	uint32_t src[4];
	uint16_t sport; /* network order */
	int ttl;	/* TTL / hop limit on arrival, -1 if unknown */
	size_t len;
	uint8_t data[70000];
};

/* Wait up to timeout_ms for one datagram on any backend socket. */
static inline int kmod_recv_any(int fds[KMOD_NBACKENDS][2], int timeout_ms, struct kmod_rx *rx)
{
	struct pollfd p[KMOD_NBACKENDS * 2];
	int i, n;

	for (i = 0; i < KMOD_NBACKENDS * 2; i++) {
		p[i].fd = fds[i / 2][i % 2];
		p[i].events = POLLIN;
	}
	n = poll(p, KMOD_NBACKENDS * 2, timeout_ms);
	if (n <= 0)
		return -1;
	for (i = 0; i < KMOD_NBACKENDS * 2; i++) {
		struct sockaddr_storage ss;
		char cbuf[CMSG_SPACE(sizeof(int)) * 2];
		struct iovec iov = {rx->data, sizeof(rx->data)};
		struct msghdr mh = {.msg_name = &ss,
				    .msg_namelen = sizeof(ss),
				    .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *cm;
		ssize_t got;

		if (!(p[i].revents & POLLIN))
			continue;
		got = recvmsg(p[i].fd, &mh, 0);
		if (got < 0)
			continue;
		rx->ttl = -1;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TTL) ||
			    (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_HOPLIMIT))
				memcpy(&rx->ttl, CMSG_DATA(cm), sizeof(int));
		memset(rx->src, 0, sizeof(rx->src));
		rx->backend = i / 2;
		rx->len = (size_t)got;
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s = (struct sockaddr_in *)&ss;

			rx->family = MAGLEV_AF_INET;
			memcpy(rx->src, &s->sin_addr, 4);
			rx->sport = s->sin_port;
		} else {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

			rx->family = MAGLEV_AF_INET6;
			memcpy(rx->src, &s->sin6_addr, 16);
			rx->sport = s->sin6_port;
		}
		return 0;
	}
	return -1;
}

#endif /* KMOD_PKT_H */
