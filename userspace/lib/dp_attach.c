// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attaching the balancer to interfaces with bpf_links (pinned, so that they
 * outlive maglevd), and detaching it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpffs.h"
#include "datapath.h"
#include "dp_layout.h"
#include "maglev_hash.h"
#include "maglev_conn.h"
#include "maglev_second.h"
#include "dp_priv.h"

static void link_path(struct maglev_dp *dp, int ifindex, char *path, size_t len)
{
	snprintf(path, len, "%s/link_xdp_%d", dp->pin_dir, ifindex);
}

int maglev_dp_attach(struct maglev_dp *dp, int ifindex, bool generic, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	int prog_fd = bpf_program__fd(dp->skel->progs.maglev_xdp);
	char path[PATH_MAX];
	int fd, ret, i;

	if (ifindex <= 0)
		return dp_fail(err, errlen, -EINVAL, "bad interface index %d", ifindex);
	if (dp->pin) {
		link_path(dp, ifindex, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			/* Same link, new program: no forwarding gap. */
			ret = bpf_link_update(fd, prog_fd, NULL);
			close(fd);
			if (!ret)
				return 0;
			ret = -errno;
			if (ret != -ENOLINK)
				return dp_fail(err, errlen, ret, "update pinned link %s: %s", path,
					       strerror(-ret));
			/* The interface went away with its link: start over. */
			unlink(path);
		}
	}
	lopts.flags = generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &lopts);
	if (fd < 0) {
		ret = -errno;
		return dp_fail(err, errlen, ret, "attach XDP (%s mode) to ifindex %d: %s%s",
			       generic ? "generic" : "native", ifindex, strerror(-ret),
			       ret == -EBUSY ? " (another XDP program is attached)"
			       : !generic    ? " (try generic mode)"
					     : "");
	}
	if (dp->pin) {
		ret = bpf_obj_pin(fd, path) ? -errno : 0;
		close(fd);
		if (ret)
			return dp_fail(err, errlen, ret, "pin link %s: %s", path, strerror(-ret));
		return 0;
	}
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++) {
		if (dp->link_fd[i] < 0) {
			dp->link_fd[i] = fd;
			dp->link_ifindex[i] = ifindex;
			return 0;
		}
	}
	close(fd);
	return dp_fail(err, errlen, -ENOSPC, "more than %d unpinned links", MAGLEV_DP_MAX_LINKS);
}

int maglev_dp_detach(struct maglev_dp *dp, int ifindex)
{
	char path[PATH_MAX];
	int fd, i, ret;

	if (dp->pin) {
		link_path(dp, ifindex, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd < 0)
			return -errno;
		ret = bpf_link_detach(fd) ? -errno : 0;
		close(fd);
		unlink(path);
		return ret == -ENOLINK ? 0 : ret;
	}
	for (i = 0; i < MAGLEV_DP_MAX_LINKS; i++) {
		if (dp->link_fd[i] >= 0 && dp->link_ifindex[i] == ifindex) {
			close(dp->link_fd[i]);
			dp->link_fd[i] = -1;
			return 0;
		}
	}
	return -ENOENT;
}
