// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fuzzer's raw generic netlink socket: opened with a receive timeout and
 * extended ACKs, requests built with the family's header, and the wait for
 * the answer that ends a request (ACK, error or end of dump).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "maglev_genl.h"
#include "sock.h"

int fz_open(struct fz_sock *s, uint16_t family)
{
	struct timeval tv = {.tv_sec = FZ_RECV_TIMEOUT_S};
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int one = 1, rcvbuf = 4 << 20;

	memset(s, 0, sizeof(*s));
	s->family = family;
	s->seq = 1;
	s->rbuf = malloc(FZ_RBUF);
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0 || !s->rbuf || bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

void fz_close(struct fz_sock *s)
{
	if (s->fd > 0)
		close(s->fd);
	free(s->rbuf);
	s->rbuf = NULL;
	s->fd = -1;
}

int fz_send(struct fz_sock *s, const void *buf, size_t len)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};

	if (sendto(s->fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

static void fz_extack(struct fz_sock *s, const struct nlmsghdr *nlh, int err)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e), plen = mnl_nlmsg_get_payload_len(nlh);
	const struct nlattr *attr;
	const void *tlvs;

	snprintf(s->err, sizeof(s->err), "%s", strerror(-err));
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if (off >= plen)
		return;
	tlvs = (const char *)e + off;
	mnl_attr_for_each_payload(tlvs, plen - off)
	{
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    !mnl_attr_validate(attr, MNL_TYPE_NUL_STRING))
			snprintf(s->err, sizeof(s->err), "%s (%s)", mnl_attr_get_str(attr),
				 strerror(-err));
	}
}

/*
 * Read until the answer that ends request seq: its ACK or error (returned as
 * 0 / -errno) or the end of its dump. Data messages of seq go to cb. Anything
 * else is stale and skipped. FZ_TIMEOUT if nothing ends it in time.
 */
int fz_wait(struct fz_sock *s, uint32_t seq, fz_cb cb, void *data)
{
	for (;;) {
		ssize_t got = recv(s->fd, s->rbuf, FZ_RBUF, 0);
		int n = (int)got;

		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? FZ_TIMEOUT : -errno;
		for (struct nlmsghdr *m = (struct nlmsghdr *)s->rbuf; mnl_nlmsg_ok(m, n);
		     m = mnl_nlmsg_next(m, &n)) {
			if (m->nlmsg_seq != seq)
				continue;
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);

				s->err[0] = '\0';
				if (e->error)
					fz_extack(s, m, e->error);
				return e->error;
			}
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb && cb(m, data) < 0)
				return -EPROTO;
		}
	}
}

/* A well-formed request: the family's header; ACK asked for unless a dump. */
struct nlmsghdr *fz_msg(void *buf, size_t size, uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	memset(buf, 0, size); /* libmnl leaves attribute padding as it finds it */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MAGLEV_GENL_VERSION;
	return nlh;
}

int fz_request(struct fz_sock *s, struct nlmsghdr *nlh, fz_cb cb, void *data)
{
	int err;

	nlh->nlmsg_seq = ++s->seq;
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	err = fz_send(s, nlh, nlh->nlmsg_len);
	return err ? err : fz_wait(s, s->seq, cb, data);
}
