/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Health checks through the encapsulation (maglevd's health_via_encap): a
 * check's TCP or UDP socket connects to the VIP itself and carries the socket mark
 * MAGLEV_HC_MARK_BASE | backend index. bpf/maglev_hc.bpf.c, a TC egress
 * program on the balancer's interfaces, takes the packets with such a mark,
 * looks the backend up in maglev_hc_targets (written here before every
 * check) and encapsulates them toward that backend the way the XDP program
 * encapsulates client packets (IPIP in the four family combinations or GUE,
 * outer source from the configured prefix, next-hop MAC). The backend
 * decapsulates and answers from the VIP straight to the balancer host's own
 * address, which is no VIP, so XDP passes the answer up to the socket.
 *
 * What the BPF program shares with it is in include/maglev_hc.h.
 */
#ifndef MAGLEV_HC_ENCAP_H
#define MAGLEV_HC_ENCAP_H

#include "maglev_hc.h"

#include <stddef.h>
#include <stdint.h>

struct hc_encap;

/*
 * Load the program. cfg_map_fd and ifl2_map_fd are the balancer's pinned
 * maglev_cfg and maglev_ifl2 maps: the program reads the MACs and outer
 * source prefixes from them, so a config reload applies to checks and
 * client traffic alike.
 */
int hc_encap_open(struct hc_encap **out, int cfg_map_fd, int ifl2_map_fd, char *err, size_t errlen);
void hc_encap_close(struct hc_encap *h);
/* Attach to clsact egress of ifindex (creating the qdisc if needed),
 * replacing a filter left by an earlier maglevd.
 */
int hc_encap_attach(struct hc_encap *h, int ifindex, char *err, size_t errlen);
/* Remove our filter from ifindex, whoever loaded it; 0 if there was none. */
int hc_encap_detach(int ifindex);
int hc_encap_set(struct hc_encap *h, uint32_t idx, const struct maglev_hc_target *t);
int hc_encap_clear(struct hc_encap *h, uint32_t idx);
/* Sum of the per-CPU counters. */
int hc_encap_counters(struct hc_encap *h, uint64_t out[MAGLEV_HC_CTR_MAX]);

#endif /* MAGLEV_HC_ENCAP_H */
