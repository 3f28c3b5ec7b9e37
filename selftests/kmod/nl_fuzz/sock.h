/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A raw generic netlink socket with a receive timeout, and well-formed
 * requests sent on it: every answer a request is due is awaited.
 */
#ifndef NL_FUZZ_SOCK_H
#define NL_FUZZ_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

#define FZ_SMALL	  512
#define FZ_RBUF		  (256 * 1024)
#define FZ_RECV_TIMEOUT_S 10
#define FZ_NO_REPLY	  1 /* sentinel result: the kernel rightly sent nothing */
#define FZ_TIMEOUT	  2 /* sentinel result: no answer within the timeout */

struct fz_sock {
	int fd;
	uint32_t seq;
	uint16_t family;
	char err[256];
	uint8_t *rbuf;
};

typedef int (*fz_cb)(const struct nlmsghdr *nlh, void *data);

int fz_open(struct fz_sock *s, uint16_t family);
void fz_close(struct fz_sock *s);
int fz_send(struct fz_sock *s, const void *buf, size_t len);
int fz_wait(struct fz_sock *s, uint32_t seq, fz_cb cb, void *data);
struct nlmsghdr *fz_msg(void *buf, size_t size, uint16_t family, uint8_t cmd, uint16_t flags);
int fz_request(struct fz_sock *s, struct nlmsghdr *nlh, fz_cb cb, void *data);

#endif /* NL_FUZZ_SOCK_H */
