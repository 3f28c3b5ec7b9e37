// SPDX-License-Identifier: GPL-2.0-only
/*
 * Captures the real client's requests as the mutation corpus: libmnl's send
 * replaced by one that keeps a copy, and the client's reads and refused
 * deletes issued to fill it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "capture.h"

struct fz_capture g_cap;

/*
 * slowpath_nl.c sends through mnl_socket_sendto(); this definition in the
 * test executable takes precedence over libmnl's, so the exact bytes the
 * client builds can be kept as a mutation corpus while they are sent.
 */
ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *buf, size_t len)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	const struct nlmsghdr *nlh = buf;

	if (g_cap.on && g_cap.n < FZ_CAPTURE_MAX && nlh->nlmsg_type >= NLMSG_MIN_TYPE &&
	    nlh->nlmsg_type != GENL_ID_CTRL) {
		g_cap.msg[g_cap.n] = malloc(len);
		if (g_cap.msg[g_cap.n]) {
			memcpy(g_cap.msg[g_cap.n], buf, len);
			g_cap.len[g_cap.n++] = len;
		}
	}
	return sendto(mnl_socket_get_fd(nl), buf, len, 0, (struct sockaddr *)&to, sizeof(to));
}

/*
 * The client's other requests, for the corpus: reads, and deletes of objects
 * that do not exist (refused, so the baseline stays).
 */
void fz_capture_reads(struct slowpath_nl *nl, const struct fz_base *b)
{
	struct maglev_vip_key gone = fz_key(MAGLEV_AF_INET, "198.51.100.99", 80, IPPROTO_TCP);
	struct slowpath_vip_state vs;
	struct slowpath_lookup lk;
	struct slowpath_stats stats;
	struct slowpath_config cfg;
	struct maglev_backend be;

	slowpath_nl_vip_get(nl, &gone, &vs);
	slowpath_nl_vip_del(nl, &gone);
	slowpath_nl_vip_list(nl, &vs, 1);
	slowpath_nl_backend_get(nl, 1, &be);
	slowpath_nl_backend_del(nl, 4);
	slowpath_nl_lookup(nl, &b->probes[0], &lk);
	slowpath_nl_stats(nl, &stats);
	slowpath_nl_config_get(nl, &cfg);
}
