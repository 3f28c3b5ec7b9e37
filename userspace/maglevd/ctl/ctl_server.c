// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control socket: a Unix stream socket, mode 0600 (0660 with the
 * control group), and a peer-credential check on every connection: root,
 * or a member of the configured control group.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/audit.h"
#include "ctl_proto.h"
#include "core/log.h"
#include "core/stream.h"

/* Limits on a control client (docs/operations.md, "Control socket limits"):
 * a request must arrive whole within the timeout, be at most CTL_MAX_REQUEST
 * bytes, and at most CTL_MAX_CLIENTS (daemon.h) clients are held at once.
 */
#define CTL_CLIENT_TIMEOUT_MS 10000

static struct ev_source listener = {.fd = -1};
static char bound_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct stream_pool clients = {.max = CTL_MAX_CLIENTS, .name = "control socket"};

static void ctl_answer(struct daemon *d, int fd, const char *in, size_t len, char **out,
		       size_t *out_len)
{
	uint64_t t0 = mono_us();
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct ctl_peer peer = {.uid = -1, .pid = 0};
	json_object *resp;

	/* Who asked, for the audit line of an accepted change. */
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		peer.uid = cred.uid;
		peer.pid = cred.pid;
	}
	resp = ctl_handle_peer(d, &peer, in, len);
	if (!resp) {
		/* Deferred (a fleet write): answered by stream_answer_id(). */
		*out = NULL;
		return;
	}
	const char *text = json_object_to_json_string_ext(
		resp, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(text);

	*out = malloc(n + 2);
	if (*out) {
		memcpy(*out, text, n);
		(*out)[n] = '\n';
		*out_len = n + 1;
	}
	json_object_put(resp);
	log_debug("control request handled in %llu us", (unsigned long long)(mono_us() - t0));
}

static const char refusal[] =
	"{\"ok\":false,\"error\":\"permission denied: root or the control group only\"}\n";

static void refuse_answer(struct daemon *d, int fd, const char *in, size_t len, char **out,
			  size_t *out_len)
{
	*out = strdup(refusal);
	*out_len = *out ? strlen(*out) : 0;
}

/* Whether pid's supplementary groups include gid (from /proc/PID/status). */
static bool pid_in_group(pid_t pid, gid_t gid)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p, *save = NULL;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = strtok_r(line + 7, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save))
			if ((gid_t)strtoul(p, NULL, 10) == gid)
				found = true;
	}
	fclose(f);
	return found;
}

static void on_accept(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd;

	for (;;) {
		fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("control socket accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
			close(fd);
			continue;
		}
		if (cred.uid != 0 &&
		    !(d->cfg.has_group && (cred.gid == d->cfg.control_gid ||
					   pid_in_group(cred.pid, d->cfg.control_gid)))) {
			log_warn(
				"control socket: refused uid %u (not root or in the control group)",
				cred.uid);
			/* Read the request before answering: closing a Unix socket
			 * with unread data resets the peer, which would lose the answer.
			 */
			stream_start(d, fd, "\n", CTL_MAX_REQUEST, CTL_CLIENT_TIMEOUT_MS, refusal,
				     refuse_answer, &clients);
			continue;
		}
		stream_start(d, fd, "\n", CTL_MAX_REQUEST, CTL_CLIENT_TIMEOUT_MS,
			     "{\"ok\":false,\"error\":\"request too large\"}\n", ctl_answer,
			     &clients);
	}
}

static int mkdir_p(const char *dir, mode_t mode)
{
	char buf[256], *p;

	if (strlen(dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, dir);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

int ctl_server_start(struct daemon *d, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	const char *path = d->cfg.control_socket;
	char dirbuf[sizeof(sun.sun_path)];
	int fd, probe;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control socket path too long");
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	strcpy(dirbuf, path);
	mkdir_p(dirname(dirbuf), 0755);
	/* A socket file that still answers belongs to a running daemon. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && !connect(probe, (struct sockaddr *)&sun, sizeof(sun))) {
		close(probe);
		snprintf(err, errlen, "another maglevd is listening on %s", path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -errno;
	}
	/* Created with mode 0600 from the start: no window for others. */
	{
		mode_t old = umask(0177);
		int r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));

		umask(old);
		if (r) {
			snprintf(err, errlen, "binding %s: %s", path, strerror(errno));
			close(fd);
			return -errno;
		}
	}
	strcpy(bound_path, path);
	ctl_server_apply_group(d);
	if (listen(fd, 128)) {
		snprintf(err, errlen, "listen on %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -errno;
	}
	listener.fd = fd;
	listener.cb = on_accept;
	if (ev_add(d, &listener, EPOLLIN)) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		close(fd);
		unlink(path);
		listener.fd = -1;
		return -EIO;
	}
	return 0;
}

void ctl_server_apply_group(struct daemon *d)
{
	gid_t gid = d->cfg.has_group ? d->cfg.control_gid : 0;
	mode_t mode = d->cfg.has_group ? 0660 : 0600;

	/* The file mode must agree with the peer check, also after a reload. */
	if (chown(bound_path, 0, gid) || chmod(bound_path, mode))
		log_warn("control socket %s: setting owner root:%u mode %o: %s", bound_path,
			 (unsigned int)gid, (unsigned int)mode, strerror(errno));
}

void ctl_server_stop(struct daemon *d)
{
	if (listener.fd < 0)
		return;
	ev_del(d, &listener);
	close(listener.fd);
	listener.fd = -1;
	unlink(bound_path);
}
