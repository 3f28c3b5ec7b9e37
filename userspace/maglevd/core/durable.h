/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A file created, renamed or removed survives a power loss only once its
 * directory has reached the disk too: fsync of the parent directory.
 */
#ifndef MAGLEVD_DURABLE_H
#define MAGLEVD_DURABLE_H

/* fsync the directory holding path; 0 or -errno. */
int durable_dir_of(const char *path);

#endif
