// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The pin directory's bpffs (userspace/lib/bpffs.c): on a host with none at
 * /sys/fs/bpf one is mounted and the balancer pins there; a pin directory on
 * another filesystem, a mount that fails, and a mount namespace that would
 * die with the process are refused with an error naming the cause. Each case
 * runs in a private mount namespace of its own with /sys/fs/bpf unmounted,
 * so the host's mounts are never touched.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "kselftest_harness.h"
#include "bpffs.h"
#include "datapath.h"

FIXTURE(bpffs)
{
	pid_t holder; /* another process in our mount namespace */
};

static bool on_bpffs(const char *path)
{
	struct statfs s;

	return !statfs(path, &s) && s.f_type == BPF_FS_MAGIC;
}

FIXTURE_SETUP(bpffs)
{
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	while (on_bpffs(MAGLEV_BPFFS_ROOT))
		ASSERT_EQ(0, umount2(MAGLEV_BPFFS_ROOT, MNT_DETACH));
	self->holder = fork();
	ASSERT_LE(0, self->holder);
	if (!self->holder) {
		pause();
		_exit(0);
	}
}

FIXTURE_TEARDOWN(bpffs)
{
	if (self->holder > 0) {
		kill(self->holder, SIGKILL);
		waitpid(self->holder, NULL, 0);
	}
}

TEST_F(bpffs, mounted_when_missing_and_the_balancer_pins_there)
{
	struct maglev_dp_opts o = {.pin_dir = MAGLEV_BPFFS_ROOT "/maglev-bpffs-test"};
	struct maglev_dp *dp = NULL;
	char err[512] = "";
	bool mounted = true;

	ASSERT_FALSE(on_bpffs(MAGLEV_BPFFS_ROOT));
	ASSERT_EQ(0, maglev_dp_open(&dp, &o, err, sizeof(err)))
	TH_LOG("%s", err);
	ASSERT_TRUE(maglev_dp_mounted_bpffs(dp));
	ASSERT_TRUE(on_bpffs(MAGLEV_BPFFS_ROOT));
	ASSERT_EQ(0, access(MAGLEV_BPFFS_ROOT "/maglev-bpffs-test/maglev_conns", F_OK));
	maglev_dp_close(dp);
	/* Mounted once: the next open adopts the pins and mounts nothing. */
	ASSERT_EQ(0, maglev_dp_open(&dp, &o, err, sizeof(err)))
	TH_LOG("%s", err);
	ASSERT_FALSE(maglev_dp_mounted_bpffs(dp));
	maglev_dp_close(dp);
	ASSERT_EQ(0, maglev_bpffs_ensure(o.pin_dir, &mounted, err, sizeof(err)));
	ASSERT_FALSE(mounted);
}

TEST_F(bpffs, pin_dir_on_another_filesystem_is_refused)
{
	char dir[] = "/tmp/maglev-bpffs-test.XXXXXX", sub[64], err[512] = "";
	bool mounted = true;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/pins", dir);
	ASSERT_EQ(-ENOTSUP, maglev_bpffs_ensure(sub, &mounted, err, sizeof(err)));
	rmdir(dir);
	ASSERT_FALSE(mounted);
	ASSERT_NE(NULL, strstr(err, sub)) TH_LOG("%s", err);
	ASSERT_NE(NULL, strstr(err, "is not on a bpffs")) TH_LOG("%s", err);
	ASSERT_FALSE(on_bpffs(MAGLEV_BPFFS_ROOT));
}

TEST_F(bpffs, failed_mount_is_reported)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct c[2];
	char err[512] = "";
	bool mounted = true;

	/* Without CAP_SYS_ADMIN mount(2) fails with EPERM. */
	ASSERT_EQ(0, syscall(SYS_capget, &h, c));
	c[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	ASSERT_EQ(0, syscall(SYS_capset, &h, c));
	ASSERT_EQ(-EPERM,
		  maglev_bpffs_ensure(MAGLEV_BPFFS_ROOT "/maglev", &mounted, err, sizeof(err)));
	ASSERT_FALSE(mounted);
	ASSERT_NE(NULL, strstr(err, "mounting one failed: Operation not permitted"))
	TH_LOG("%s", err);
	ASSERT_FALSE(on_bpffs(MAGLEV_BPFFS_ROOT));
}

TEST_F(bpffs, mount_namespace_of_our_own_is_refused)
{
	char err[512] = "";
	bool mounted = true;

	kill(self->holder, SIGKILL);
	waitpid(self->holder, NULL, 0);
	self->holder = 0;
	ASSERT_EQ(-EPERM,
		  maglev_bpffs_ensure(MAGLEV_BPFFS_ROOT "/maglev", &mounted, err, sizeof(err)));
	ASSERT_FALSE(mounted);
	ASSERT_NE(NULL, strstr(err, "alone in its mount namespace")) TH_LOG("%s", err);
	ASSERT_FALSE(on_bpffs(MAGLEV_BPFFS_ROOT));
}

TEST_HARNESS_MAIN
