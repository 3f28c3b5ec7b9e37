/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the slow-path module tests: namespaces, a seeded PRNG,
 * the userspace reference of the module's pick, and Internet checksums.
 */
#ifndef KMOD_UTIL_H
#define KMOD_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "maglev_hash.h"
#include "maglev_maps.h"
#include "slowpath_nl.h"

#define KMOD_PATH "build/kernel/maglev_slowpath.ko"

/* splitmix64: small, seedable, good enough to pick test flows. */
static inline uint64_t kmod_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t kmod_seed_from_env(void)
{
	const char *s = getenv("MAGLEV_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}

/* Enter a named network namespace (ip netns). */
static inline int kmod_setns(const char *name)
{
	char path[128];
	int fd, err;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return err;
}

/* The backend index the module must pick: the reference computation. */
static inline uint32_t kmod_expected_pick(const struct maglev_seed *seed,
					  const struct maglev_flow_key *f, const uint32_t *table,
					  uint32_t size)
{
	uint64_t h;

	if (f->family == MAGLEV_AF_INET)
		h = maglev_flow_hash_v4(seed, f->src[0], f->dst[0], f->sport, f->dport, f->proto);
	else
		h = maglev_flow_hash_v6(seed, f->src, f->dst, f->sport, f->dport, f->proto);
	return table[maglev_slot(h, size)];
}

static inline uint32_t kmod_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* Fold and complement; the result is in network byte order. */
static inline uint16_t kmod_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

#endif /* KMOD_UTIL_H */
