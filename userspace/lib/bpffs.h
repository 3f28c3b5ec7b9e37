/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Pins need a bpffs. A host that never mounted one at /sys/fs/bpf (no systemd,
 * a minimal container, a fresh VM) gets one mounted there, as systemd and
 * cilium-agent do; a pin directory elsewhere must already be on a bpffs. A
 * process alone in its mount namespace (ip netns exec) mounts nothing: the
 * bpffs would vanish with it, and forwarding with it.
 */
#ifndef MAGLEV_BPFFS_H
#define MAGLEV_BPFFS_H

#include <stdbool.h>
#include <stddef.h>

/* Where a bpffs is mounted when none is (the kernel's conventional place). */
#define MAGLEV_BPFFS_ROOT "/sys/fs/bpf"

/* Make sure pin directory dir lies on a bpffs: its nearest existing ancestor
 * must be on one, or, for a dir under MAGLEV_BPFFS_ROOT, a bpffs is mounted at
 * MAGLEV_BPFFS_ROOT (*mounted is then set). Returns 0 or a negative errno with
 * err naming what is wrong and the way out.
 */
int maglev_bpffs_ensure(const char *dir, bool *mounted, char *err, size_t errlen);

#endif
