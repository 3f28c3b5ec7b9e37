// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <time.h>
#include <linux/netlink.h>

#include "core/rtnl.h"

int rtnl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	unsigned int seq = (unsigned int)time(NULL), portid;
	int r;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		mnl_socket_close(nl);
		return r;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = -errno;
		mnl_socket_close(nl);
		return r;
	}
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		r = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
		if (r <= MNL_CB_STOP) {
			r = r < 0 ? -errno : 0;
			break;
		}
	}
	mnl_socket_close(nl);
	return r;
}
