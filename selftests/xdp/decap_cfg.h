/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Strict mode of the decap program (include/maglev_decap.h) as the tests
 * set it: the flags, an allowed outer-source prefix, an own address. IPv4
 * given as 4 bytes goes in IPv4-mapped, as the program looks it up.
 */
#ifndef SELFTESTS_XDP_DECAP_CFG_H
#define SELFTESTS_XDP_DECAP_CFG_H

#include <string.h>
#include <bpf/bpf.h>
#include "maglev_decap.h"

static inline int decap_set_flags(int cfg_fd, uint8_t flags)
{
	struct maglev_decap_config c = {};
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(cfg_fd, &zero, &c))
		return -1;
	c.flags = flags;
	return bpf_map_update_elem(cfg_fd, &zero, &c, 0);
}

static inline void decap_key_of(uint32_t a[4], const uint8_t *addr, int v4)
{
	if (v4) {
		uint32_t x;

		memcpy(&x, addr, 4);
		maglev_decap_v4mapped(a, x);
	} else {
		memcpy(a, addr, 16);
	}
}

/* Allow outer sources in addr/plen (plen of the address's own family). */
static inline int decap_allow_src(int src_fd, const uint8_t *addr, int v4, uint32_t plen)
{
	struct maglev_decap_prefix k = {.prefixlen = v4 ? 96 + plen : plen};
	uint8_t one = 1;

	decap_key_of(k.addr, addr, v4);
	return bpf_map_update_elem(src_fd, &k, &one, 0);
}

static inline int decap_own_dst(int dst_fd, const uint8_t *addr, int v4)
{
	struct maglev_decap_addr k;
	uint8_t one = 1;

	decap_key_of(k.addr, addr, v4);
	return bpf_map_update_elem(dst_fd, &k, &one, 0);
}

static inline int decap_del_src(int src_fd, const uint8_t *addr, int v4, uint32_t plen)
{
	struct maglev_decap_prefix k = {.prefixlen = v4 ? 96 + plen : plen};

	decap_key_of(k.addr, addr, v4);
	return bpf_map_delete_elem(src_fd, &k);
}

static inline int decap_del_dst(int dst_fd, const uint8_t *addr, int v4)
{
	struct maglev_decap_addr k;

	decap_key_of(k.addr, addr, v4);
	return bpf_map_delete_elem(dst_fd, &k);
}

#endif /* SELFTESTS_XDP_DECAP_CFG_H */
