/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel log: records that show a kernel bug (BUG, WARNING, Oops...). */
#ifndef NL_FUZZ_KMSG_H
#define NL_FUZZ_KMSG_H

int fz_kmsg_open(void);
int fz_kmsg_bad(int fd);

#endif /* NL_FUZZ_KMSG_H */
