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
 * The first part of this header is shared with the BPF program.
 */
#ifndef MAGLEV_HC_ENCAP_H
#define MAGLEV_HC_ENCAP_H

#include <linux/types.h>

/* Socket mark of a check: the top 16 bits say "maglevd health check", the
 * low 16 bits hold the backend index (MAGLEV_MAX_BACKENDS is 65536).
 */
#define MAGLEV_HC_MARK_BASE 0x6d670000U
#define MAGLEV_HC_MARK_MASK 0xffff0000U
#define MAGLEV_HC_MARK_IDX  0x0000ffffU

/* Where a check of backend index idx goes; all addresses and ports in
 * network order, IPv4 addresses in word 0.
 */
struct maglev_hc_target {
	__u32 backend[4];
	__u32 vip[4];
	__u8 backend_family; /* MAGLEV_AF_INET / MAGLEV_AF_INET6: the outer family */
	__u8 vip_family;     /* the inner family, the check socket's */
	__u8 encap;	     /* enum maglev_encap */
	__u8 proto;	     /* the check's IPPROTO_TCP or IPPROTO_UDP (0: TCP) */
	__u16 gue_port;	     /* GUE destination port */
	__u16 port;	     /* the check's destination port on the VIP */
};

/* Per-CPU counters of the TC program, index = enum value. */
enum maglev_hc_counter {
	MAGLEV_HC_ENCAP,     /* encapsulated and sent */
	MAGLEV_HC_NO_TARGET, /* marked, but no target or not the target's VIP: dropped */
	MAGLEV_HC_ERROR,     /* malformed or the room could not be made: dropped */
	MAGLEV_HC_CTR_MAX
};

/* TC filter identity on clsact egress, so a restarted maglevd replaces its
 * own filter and `tc filter del dev IF egress pref 1 handle 0x6d67 bpf`
 * removes it by hand.
 */
#define MAGLEV_HC_TC_HANDLE   0x6d67
#define MAGLEV_HC_TC_PRIORITY 1

#ifndef __bpf__
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
#endif

#endif /* MAGLEV_HC_ENCAP_H */
