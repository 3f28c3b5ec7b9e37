// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/drift.h"

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* The fingerprint's input: 32 ASCII bytes, four little-endian words. */
static const char seed_domain[33] = "maglev-lb seed fingerprint, v1.0";

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		h ^= *b++;
		h *= FNV_PRIME;
	}
	return h;
}

/* Backend address by datapath index, filled and emptied again by each digest. */
static const struct ctl_addr *addr_of_idx[MAGLEV_MAX_BACKENDS];

/*
 * FNV-1a over each slot's backend as family (1 byte) and address (16 bytes,
 * IPv4 zero-padded), 17 zero bytes for a slot naming none of the backends.
 * Backend indices are this daemon's own, addresses are not: two balancers
 * agree on the digest exactly when every slot sends to the same backend.
 */
uint64_t drift_slots_digest(const uint32_t *table, const struct ctl_addr *const *addr_of)
{
	uint64_t h = FNV_BASIS;
	uint32_t i;

	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		const struct ctl_addr *a =
			table[i] < MAGLEV_MAX_BACKENDS ? addr_of[table[i]] : NULL;
		uint8_t id[17] = {0};

		if (a) {
			id[0] = a->family;
			memcpy(id + 1, a->addr, a->family == MAGLEV_AF_INET ? 4 : sizeof(a->addr));
		}
		h = fnv(h, id, sizeof(id));
	}
	return h;
}

uint64_t drift_table_digest(const struct vip *v, const uint32_t *table)
{
	uint64_t h;
	uint32_t i;

	for (i = 0; i < v->nbe; i++)
		addr_of_idx[v->bes[i].idx] = &v->bes[i].addr;
	h = drift_slots_digest(table, addr_of_idx);
	for (i = 0; i < v->nbe; i++)
		addr_of_idx[v->bes[i].idx] = NULL;
	return h;
}

static int cmp_vip(const void *a, const void *b)
{
	return ctl_cmp_vip(&(*(const struct vip *const *)a)->key,
			   &(*(const struct vip *const *)b)->key);
}

/*
 * FNV-1a over every VIP in canonical order (ctl_cmp_vip()) as its key
 * (family, 16 address bytes, port and protocol), its table digest (8 bytes,
 * big-endian) and the settings that change what leaves the balancer besides
 * the table: encapsulation, GUE port (big-endian), second chance, balance
 * factor (thousandths, big-endian). One value two balancers can compare for
 * all their VIPs at once.
 */
uint64_t drift_vips_digest(const struct registry *r)
{
	const struct vip *sorted[MAGLEV_MAX_VIPS]; /* own copy: scrapes may leave the loop */
	uint64_t h = FNV_BASIS;
	uint32_t i, n = 0;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (r->vips[i])
			sorted[n++] = r->vips[i];
	qsort(sorted, n, sizeof(*sorted), cmp_vip);
	for (i = 0; i < n; i++) {
		const struct maglev_vip_key *k = &sorted[i]->key;
		const struct vip *v = sorted[i];
		uint8_t id[20 + 8 + 8];
		int j;

		id[0] = k->family;
		memcpy(id + 1, k->addr, 16);
		memcpy(id + 17, &k->port, 2); /* network order already */
		id[19] = k->proto;
		for (j = 0; j < 8; j++)
			id[20 + j] = (uint8_t)(v->digest >> (56 - 8 * j));
		id[28] = v->encap;
		id[29] = v->second_chance;
		id[30] = (uint8_t)(v->gue_port >> 8);
		id[31] = (uint8_t)v->gue_port;
		for (j = 0; j < 4; j++)
			id[32 + j] = (uint8_t)(v->balance_milli >> (24 - 8 * j));
		h = fnv(h, id, sizeof(id));
	}
	return h;
}

/*
 * SipHash-2-4 keyed with the seed over a fixed string: equal on balancers
 * with the same seed, different otherwise, and (SipHash being a PRF) no
 * help in finding the seed.
 */
uint64_t drift_seed_fingerprint(const struct maglev_seed *seed)
{
	struct maglev_sip s;
	uint64_t w;
	size_t i;

	maglev_sip_init(&s, seed);
	for (i = 0; i + 8 <= sizeof(seed_domain) - 1; i += 8) {
		int j;

		for (w = 0, j = 7; j >= 0; j--)
			w = (w << 8) | (uint8_t)seed_domain[i + j];
		maglev_sip_word(&s, w, 2);
	}
	return maglev_sip_final(&s, sizeof(seed_domain) - 1, 2, 4);
}

void drift_hex(uint64_t h, char *buf)
{
	snprintf(buf, DRIFT_HEX_LEN, "%016" PRIx64, h);
}
