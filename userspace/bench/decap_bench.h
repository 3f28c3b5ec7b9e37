/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The backend's decap program in xdp_bench, through the same wrapper (it
 * restores the frame's first 80 bytes and moves the head back, which covers
 * what decap rewrites): plain GUE (no socket lookup), GUE carrying a
 * previous owner whose segment an established socket claims (lookup hit,
 * delivered), and one no socket claims (lookup finds only the listener, the
 * syncookie check fails, sent on: in strict source mode, decap_strict, as
 * the decap sends nothing on when open). The sockets live in a network
 * namespace of the benchmark's own (unshare), made after every balancer
 * case ran.
 */
#ifndef DECAP_BENCH_H
#define DECAP_BENCH_H

#include <sched.h>
#include <unistd.h>
#include <sys/socket.h>
#include "maglev_decap.skel.h"
#include "decap_cfg.h"

struct decap_bench {
	struct maglev_decap *skel;
	int lfd, cfd, afd;
};

/* GUE frame (FRAME bytes) of f toward backend 192.0.2.1, carrying
 * 192.0.2.2 as previous owner when prev.
 */
static void decap_frame(uint8_t *out, const struct flow *f, int prev)
{
	struct encap_want w = {
		.outer_family = P_AF4, .gue = 1, .gue_port = MAGLEV_GUE_PORT_DEFAULT};
	size_t over = 20 + 12 + (prev ? 20 : 0), hdr = 14 + 20 + 20;
	struct client_opts co = {.tcp_flags = 0x10, .payload = FRAME - over - hdr};
	uint8_t client[FRAME];
	size_t n, len;

	w.backend[0] = 192, w.backend[1] = 0, w.backend[2] = 2, w.backend[3] = 1;
	w.src4[0] = 198, w.src4[1] = 51, w.src4[2] = 100, w.src4[3] = 128;
	w.src4_plen = 25;
	n = build_client(client, f, &co);
	len = build_encap(out, client, n, f, &w);
	if (!prev)
		return;
	memmove(out + 66, out + 46, len - 46);
	memset(out + 46, 0, 20);
	out[42] = MAGLEV_GUE_PREV_WORDS;
	out[46] = MAGLEV_GUE_PREV_TYPE;
	out[47] = P_AF4;
	out[50] = 192, out[51] = 0, out[52] = 2, out[53] = 2;
	len += 20;
	put16(out + 16, (uint16_t)(len - 14));
	put16(out + 24, 0);
	put16(out + 24, csum_finish(csum_add(0, out + 14, 20)));
	put16(out + 38, (uint16_t)(len - 34));
}

/* The namespace, a listener on the flow's VIP port and one established
 * connection with the flow's tuple; the decap program. 0 or -errno.
 */
static int decap_setup(struct decap_bench *d, const struct flow *f)
{
	struct sockaddr_in va = {.sin_family = AF_INET, .sin_port = htons(f->dport)};
	struct sockaddr_in ca = {.sin_family = AF_INET, .sin_port = htons(f->sport)};
	int one = 1;

	if (unshare(CLONE_NEWNET))
		return -errno;
	if (system("ip link set lo up && ip addr add 203.0.113.10/32 dev lo && "
		   "ip addr add 198.51.100.7/32 dev lo"))
		return -EIO;
	memcpy(&va.sin_addr, f->dst, 4);
	memcpy(&ca.sin_addr, f->src, 4);
	d->lfd = socket(AF_INET, SOCK_STREAM, 0);
	d->cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (d->lfd < 0 || d->cfd < 0)
		return -errno;
	setsockopt(d->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(d->lfd, (struct sockaddr *)&va, sizeof(va)) || listen(d->lfd, 8) ||
	    bind(d->cfd, (struct sockaddr *)&ca, sizeof(ca)) ||
	    connect(d->cfd, (struct sockaddr *)&va, sizeof(va)))
		return -errno;
	d->afd = accept(d->lfd, NULL, NULL);
	if (d->afd < 0)
		return -errno;
	d->skel = maglev_decap__open_and_load();
	return d->skel ? 0 : -errno;
}

/* Strict source as a fleet with second chance runs it: the balancers'
 * prefix (198.51.100.128/25) and the backends' (192.0.2.0/24, the previous
 * owner 192.0.2.2 among them). 0 or -1.
 */
static int decap_strict(struct decap_bench *d)
{
	static const uint8_t lb[4] = {198, 51, 100, 128}, be[4] = {192, 0, 2, 0};
	int src = bpf_map__fd(d->skel->maps.maglev_dcp_src);

	return decap_allow_src(src, lb, 1, 25) || decap_allow_src(src, be, 1, 24) ||
	       decap_set_flags(bpf_map__fd(d->skel->maps.maglev_decap_cfg),
			       MAGLEV_DECAP_F_STRICT_SRC);
}

/* Sum over CPUs of decap counter what. */
static uint64_t decap_ctr(struct decap_bench *d, uint32_t what)
{
	int n = libbpf_num_possible_cpus(), i;
	uint64_t v[512], sum = 0;

	if (n > 512 || bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.maglev_decap_cnt), &what, v))
		return 0;
	for (i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

#endif /* DECAP_BENCH_H */
