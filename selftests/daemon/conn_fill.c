// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fill WAYS ways of every bucket of a pinned connection table (PIN_DIR's
 * maglev_conns) with intact entries that are not live: TCP connections
 * the client closed long ago, naming backend index 0 (no backend). What a
 * long-running balancer's table holds (entries are replaced, never
 * removed): the census reads and checks each one, the datapath takes
 * their ways first for new flows. Written through the table's mmap, while
 * the datapath runs: each entry's tag last, as the datapath writes.
 *
 * Usage: conn_fill PIN_DIR WAYS; prints the entries written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "maglev_conn.h"

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	struct bpf_map_info info = {0};
	__u32 ilen = sizeof(info), zero = 0, i;
	struct maglev_conn_params p;
	struct maglev_conn_bucket *m;
	unsigned long n = 0;
	size_t len, page = (size_t)sysconf(_SC_PAGESIZE);
	int cfd, kfd, ways, w;

	if (argc != 3 || (ways = atoi(argv[2])) < 1 || ways > MAGLEV_CONN_WAYS) {
		fprintf(stderr, "usage: conn_fill PIN_DIR WAYS (1..%d)\n", MAGLEV_CONN_WAYS);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/maglev_conns", argv[1]);
	cfd = bpf_obj_get(path);
	snprintf(path, sizeof(path), "%s/maglev_connkey", argv[1]);
	kfd = bpf_obj_get(path);
	if (cfd < 0 || kfd < 0 || bpf_obj_get_info_by_fd(cfd, &info, &ilen) ||
	    bpf_map_lookup_elem(kfd, &zero, &p)) {
		fprintf(stderr, "conn_fill: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	len = ((size_t)info.max_entries * sizeof(*m) + page - 1) / page * page;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "conn_fill: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < info.max_entries; i++) {
		for (w = 0; w < ways; w++) {
			struct maglev_conn_slot *s = &m[i].slot[w];
			__u64 h;

			if (__atomic_load_n(&m[i].tag[w], __ATOMIC_ACQUIRE))
				continue;
			memset(s, 0, sizeof(*s));
			s->key.family = MAGLEV_AF_INET;
			s->key.proto = IPPROTO_TCP;
			s->key.src[0] = htonl(0xc6336400 | (i & 0xff)); /* 198.51.100.x */
			s->key.src[1] = i;
			s->key.dst[0] = htonl(0xcb0071fe); /* 203.0.113.254 */
			s->key.sport = htons((__u16)(10000 + w));
			s->key.dport = htons(9);
			s->flags = MAGLEV_CONN_F_CLOSING; /* last_seen_ns 0: long ago */
			h = maglev_conn_hash(&s->key, p.seed);
			s->check = maglev_conn_check(h, s);
			m[i].ref[w] = MAGLEV_CONN_REF_USED;
			__atomic_store_n(&m[i].tag[w], maglev_conn_tag(h), __ATOMIC_RELEASE);
			n++;
		}
	}
	munmap(m, len);
	printf("%lu\n", n);
	return 0;
}
