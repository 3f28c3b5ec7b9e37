// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bpffs for the pin directory: see bpffs.h.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "bpffs.h"

/* The filesystem type of path's nearest existing ancestor (path itself if it
 * exists); that ancestor is left in found.
 */
static int fs_type_of(const char *path, char *found, size_t len, long *type)
{
	struct statfs sfs;
	char *slash;

	snprintf(found, len, "%s", path);
	for (;;) {
		if (!statfs(found, &sfs)) {
			*type = (long)sfs.f_type;
			return 0;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		slash = strrchr(found, '/');
		if (!slash)
			return -ENOENT;
		if (slash == found)
			slash[1] = '\0'; /* "/" exists */
		else
			*slash = '\0';
	}
}

static bool under_root(const char *dir)
{
	size_t n = strlen(MAGLEV_BPFFS_ROOT);

	return !strncmp(dir, MAGLEV_BPFFS_ROOT, n) && (dir[n] == '\0' || dir[n] == '/');
}

/* Whether another process holds this process's mount namespace. A bpffs
 * mounted in a namespace nobody else holds (ip netns exec, a sandboxed unit)
 * is gone when this process exits, and the pinned program and maps with it.
 */
static bool mount_ns_shared(void)
{
	char path[64];
	struct stat self, st;
	struct dirent *e;
	bool shared = false;
	DIR *d;

	if (stat("/proc/self/ns/mnt", &self))
		return false;
	d = opendir("/proc");
	if (!d)
		return false;
	while (!shared && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", pid);
		shared = !stat(path, &st) && st.st_ino == self.st_ino && st.st_dev == self.st_dev;
	}
	closedir(d);
	return shared;
}

int maglev_bpffs_ensure(const char *dir, bool *mounted, char *err, size_t errlen)
{
	char found[PATH_MAX];
	long type = 0;
	int ret;

	*mounted = false;
	if (dir[0] != '/') {
		snprintf(err, errlen, "pin directory %s: not an absolute path", dir);
		return -EINVAL;
	}
	ret = fs_type_of(dir, found, sizeof(found), &type);
	if (ret) {
		snprintf(err, errlen, "pin directory %s: %s", dir, strerror(-ret));
		return ret;
	}
	if (type == BPF_FS_MAGIC)
		return 0;
	if (!under_root(dir) || strcmp(found, MAGLEV_BPFFS_ROOT)) {
		snprintf(err, errlen,
			 "pin directory %s is not on a bpffs (%s is not one): mount one "
			 "(mount -t bpf bpf DIR) or use a pin_dir under " MAGLEV_BPFFS_ROOT,
			 dir, found);
		return -ENOTSUP;
	}
	if (!mount_ns_shared()) {
		snprintf(err, errlen,
			 "pin directory %s needs a bpffs at " MAGLEV_BPFFS_ROOT
			 ", none is mounted there, and this process is alone in its mount "
			 "namespace (started by ip netns exec?): a bpffs mounted here would "
			 "vanish with it, and forwarding with it; mount one on the host "
			 "(mount -t bpf bpf " MAGLEV_BPFFS_ROOT
			 ") or enter only the network namespace (nsenter --net=...)",
			 dir);
		return -EPERM;
	}
	/* Mode 0700 as systemd mounts it: pins hold the balancer's state. */
	if (mount("bpf", MAGLEV_BPFFS_ROOT, "bpf", 0, "mode=0700")) {
		ret = -errno;
		snprintf(err, errlen,
			 "pin directory %s needs a bpffs at " MAGLEV_BPFFS_ROOT
			 ", none is mounted there and mounting one failed: %s "
			 "(mount it before starting: mount -t bpf bpf " MAGLEV_BPFFS_ROOT ")",
			 dir, strerror(-ret));
		return ret;
	}
	*mounted = true;
	return 0;
}
