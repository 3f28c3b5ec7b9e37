/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Label text every subsystem's metrics share, so that one VIP is one label
 * set whoever prints it: address, port and protocol apart, as
 * node_exporter's IPVS collector has them, so a query can select by port or
 * protocol without parsing.
 */
#ifndef MAGLEVD_METRICS_LABELS_H
#define MAGLEVD_METRICS_LABELS_H

#include <stddef.h>

#include "ctl_proto.h"

/* address="192.0.2.10",port="80",protocol="tcp" fits in this; port "*": all ports. */
#define METRICS_VIP_LABELS_LEN (CTL_ADDR_STRLEN + 48)

/* The VIP's labels, without braces, for "metric{%s} ..." or "{%s,state=...}". */
void metrics_vip_labels(const struct maglev_vip_key *k, char *buf, size_t len);

/* s as a label value: backslash, double quote and newline escaped; truncated to fit. */
void metrics_label_escape(const char *s, char *buf, size_t len);

#endif /* MAGLEVD_METRICS_LABELS_H */
