/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A desired state applied as a difference (fleet mode: each etcd revision).
 * The VIPs of the desired state are built on a registry of their own (want);
 * the transaction's clone of the live registry is then changed only where it
 * differs from want, as the vip and backend requests would change it: a VIP
 * that is the same keeps its struct, its table, its table generation and its
 * second-chance window, and is not rebuilt; a changed one keeps what did not
 * change (backend indices, health, the previous owners of its slots).
 */
#ifndef MAGLEVD_VIP_SYNC_H
#define MAGLEVD_VIP_SYNC_H

#include <stddef.h>

#include "model/registry.h"

/*
 * Make r hold want's VIPs with want's settings and backends: VIPs not in
 * want are deleted, the others added or changed in place. Returns the number
 * of VIPs added, changed or deleted (0: r already held want), or a negative
 * errno with err set.
 */
int registry_sync(struct registry *r, const struct registry_ctx *ctx, const struct registry *want,
		  char *err, size_t errlen);

#endif /* MAGLEVD_VIP_SYNC_H */
