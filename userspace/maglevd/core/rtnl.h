/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* One rtnetlink request and its answers, over libmnl (rtnl.c). */
#ifndef MAGLEVD_RTNL_H
#define MAGLEVD_RTNL_H

#include <libmnl/libmnl.h>

/*
 * Send nlh on a socket of its own and feed the answers (a dump, or an ack)
 * to cb (NULL: only the ack counts). Returns 0 or a negative errno, the
 * kernel's refusal included.
 */
int rtnl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

#endif /* MAGLEVD_RTNL_H */
