// SPDX-License-Identifier: GPL-2.0-only
/*
 * The oracle: every well-formed message is answered in time, none makes the
 * kernel log a bug, a refused or dropped message and an accepted read change
 * nothing a client can read back; resets to the baseline when accepted
 * changes pile up; per-command counts; the checks at the end of a test.
 */
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "kmsg.h"
#include "oracle.h"

#define FZ_RESYNC_CHANGES 16
#define FZ_RESYNC_OBJECTS 16

static const char *const fz_cmd_names[] = {
	[MAGLEV_CMD_UNSPEC] = "UNSPEC",		  [MAGLEV_CMD_CONFIG_SET] = "CONFIG_SET",
	[MAGLEV_CMD_CONFIG_GET] = "CONFIG_GET",	  [MAGLEV_CMD_VIP_SET] = "VIP_SET",
	[MAGLEV_CMD_VIP_DEL] = "VIP_DEL",	  [MAGLEV_CMD_VIP_GET] = "VIP_GET",
	[MAGLEV_CMD_BACKEND_SET] = "BACKEND_SET", [MAGLEV_CMD_BACKEND_DEL] = "BACKEND_DEL",
	[MAGLEV_CMD_BACKEND_GET] = "BACKEND_GET", [MAGLEV_CMD_TABLE_BEGIN] = "TABLE_BEGIN",
	[MAGLEV_CMD_TABLE_CHUNK] = "TABLE_CHUNK", [MAGLEV_CMD_TABLE_COMMIT] = "TABLE_COMMIT",
	[MAGLEV_CMD_LOOKUP] = "LOOKUP",		  [MAGLEV_CMD_STATS_GET] = "STATS_GET",
	[MAGLEV_CMD_OVERCAP_SET] = "OVERCAP_SET",
};

static int fz_cmd_changes(unsigned int cmd)
{
	switch (cmd) {
	case MAGLEV_CMD_CONFIG_SET:
	case MAGLEV_CMD_VIP_SET:
	case MAGLEV_CMD_VIP_DEL:
	case MAGLEV_CMD_BACKEND_SET:
	case MAGLEV_CMD_BACKEND_DEL:
	case MAGLEV_CMD_TABLE_BEGIN:
	case MAGLEV_CMD_TABLE_CHUNK:
	case MAGLEV_CMD_TABLE_COMMIT:
	case MAGLEV_CMD_OVERCAP_SET:
		return 1;
	}
	return 0;
}

double fz_elapsed(FIXTURE_DATA(fz) * self)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - self->t0.tv_sec) + (t.tv_nsec - self->t0.tv_nsec) / 1e9;
}

static void fz_count_err(struct fz_stats *st, int err)
{
	switch (err) {
	case -EINVAL:
		st->err_einval++;
		break;
	case -ERANGE:
		st->err_erange++;
		break;
	case -ENOENT:
		st->err_enoent++;
		break;
	case -ESTALE:
		st->err_estale++;
		break;
	case -EOPNOTSUPP:
		st->err_eopnotsupp++;
		break;
	case -ENODATA:
		st->err_enodata++;
		break;
	default:
		st->err_other++;
	}
}

void fz_hexdump(const uint8_t *p, size_t len)
{
	size_t i;

	fprintf(stderr, "#   %zu bytes:", len);
	for (i = 0; i < len && i < 512; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n#     ", p[i]);
	fprintf(stderr, "%s\n", len > 512 ? " ..." : "");
}

static const char *fz_cmd_name(unsigned int cmd)
{
	return cmd <= MAGLEV_CMD_MAX ? fz_cmd_names[cmd] : "unknown";
}

/* Back to the baseline; the state must then read exactly as at the start. */
static int fz_resync(FIXTURE_DATA(fz) * self)
{
	int err = fz_reset(&self->s, self->nl, &self->base);

	if (!err)
		err = fz_snapshot(&self->s, &self->base, &self->cur);
	if (err) {
		fprintf(stderr, "# reset to the baseline failed: %d %s\n", err, self->s.err);
		return -1;
	}
	if (memcmp(&self->cur, &self->base_snap, sizeof(self->cur))) {
		fprintf(stderr, "# state after a reset differs from the baseline\n");
		fz_snap_diff(&self->base_snap, &self->cur);
		return -1;
	}
	memcpy(&self->ref, &self->cur, sizeof(self->ref));
	self->changes_since_reset = 0;
	self->st.resyncs++;
	return 0;
}

/* Reset when accepted changes piled up or took a baseline table away. */
static int fz_need_resync(FIXTURE_DATA(fz) * self)
{
	const struct fz_snap *c = &self->cur;
	int i, tables = 0;

	if (self->changes_since_reset >= FZ_RESYNC_CHANGES || c->nvips > FZ_RESYNC_OBJECTS ||
	    c->nbes > FZ_RESYNC_OBJECTS)
		return 1;
	for (i = 0; i < FZ_PROBES; i++)
		tables += c->look_err[i] == 0;
	return tables < 2;
}

/*
 * Send one fuzz datagram of len bytes and apply the oracle. Its netlink
 * header is well-formed (an answer is due) when nlmsg_len is at least a
 * header and no more than was sent; the datagram is then cut to nlmsg_len,
 * so no trailing bytes are read as a second message. A datagram without a
 * well-formed header is dropped by the kernel without an answer: a NOOP
 * request sent behind it must still be answered. Then the state is read
 * back: a refused request, a silently dropped one and an accepted read
 * must have changed nothing; after an accepted change the new state is the
 * reference. Returns 0, or -1 with the failure described.
 */
int fz_one(FIXTURE_DATA(fz) * self, uint8_t *msg, size_t len, unsigned int idx)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)msg;
	int wellformed =
		len >= NLMSG_HDRLEN && nlh->nlmsg_len >= NLMSG_HDRLEN && nlh->nlmsg_len <= len;
	unsigned int cmd = 0;
	char why[sizeof(self->s.err)];
	int err, res;

	if (wellformed)
		len = nlh->nlmsg_len;
	if (len > NLMSG_HDRLEN && (!wellformed || nlh->nlmsg_len > NLMSG_HDRLEN))
		cmd = msg[NLMSG_HDRLEN];
	if (len >= NLMSG_HDRLEN) {
		nlh->nlmsg_seq = ++self->s.seq;
		nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	}
	self->st.sent[cmd]++;
	err = fz_send(&self->s, msg, len);
	if (wellformed) {
		res = err ? err : fz_wait(&self->s, nlh->nlmsg_seq, NULL, NULL);
		if (res > 0) {
			fprintf(stderr, "# message %u (%s): no ACK or error within %d s\n", idx,
				fz_cmd_name(cmd), FZ_RECV_TIMEOUT_S);
			fz_hexdump(msg, len);
			return -1;
		}
	} else {
		uint8_t noop[NLMSG_HDRLEN];
		struct nlmsghdr *n = mnl_nlmsg_put_header(noop);

		n->nlmsg_type = NLMSG_NOOP;
		n->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		n->nlmsg_seq = ++self->s.seq;
		err = fz_send(&self->s, noop, sizeof(noop));
		if (!err)
			err = fz_wait(&self->s, n->nlmsg_seq, NULL, NULL);
		if (err) {
			fprintf(stderr, "# message %u: the NOOP behind it got %d, not an ACK\n",
				idx, err);
			fz_hexdump(msg, len);
			return -1;
		}
		res = FZ_NO_REPLY;
		self->st.silent[cmd]++;
	}
	if (fz_kmsg_bad(self->kmsg)) {
		fprintf(stderr, "# message %u (%s) made the kernel log a bug\n", idx,
			fz_cmd_name(cmd));
		fz_hexdump(msg, len);
		return -1;
	}
	snprintf(why, sizeof(why), "%s", res == FZ_NO_REPLY ? "dropped" : self->s.err);
	if (res == 0) {
		self->st.acked[cmd]++;
	} else if (res < 0) {
		self->st.rejected[cmd]++;
		fz_count_err(&self->st, res);
	}

	err = fz_snapshot(&self->s, &self->base, &self->cur);
	if (err) {
		fprintf(stderr, "# message %u: reading the state back failed: %d %s\n", idx, err,
			self->s.err);
		return -1;
	}
	self->st.checks++;
	if (res == 0 && fz_cmd_changes(cmd)) {
		if (memcmp(&self->ref, &self->cur, sizeof(self->cur))) {
			self->st.changes++;
			self->changes_since_reset++;
		}
		memcpy(&self->ref, &self->cur, sizeof(self->ref));
		return fz_need_resync(self) ? fz_resync(self) : 0;
	}
	if (res == 0)
		self->st.reads_total++;
	else
		self->st.rejected_total++;
	if (memcmp(&self->ref, &self->cur, sizeof(self->cur))) {
		fprintf(stderr, "# message %u (%s, %s: %s) changed the module's state\n", idx,
			fz_cmd_name(cmd), res == 0 ? "accepted" : "refused",
			res == 0 ? "a read" : why);
		fz_snap_diff(&self->ref, &self->cur);
		fz_hexdump(msg, len);
		return -1;
	}
	return 0;
}

void fz_report(FIXTURE_DATA(fz) * self, const char *what, unsigned int n)
{
	const struct fz_stats *st = &self->st;
	unsigned int c, unknown = 0, unknown_silent = 0;

	for (c = 0; c < FZ_NCMD; c++) {
		if (!st->sent[c])
			continue;
		if (c > MAGLEV_CMD_MAX || c == MAGLEV_CMD_UNSPEC) {
			unknown += st->sent[c];
			unknown_silent += st->silent[c];
			continue;
		}
		fprintf(stderr, "#   %-12s %5u sent, %5u accepted, %5u refused, %4u dropped\n",
			fz_cmd_names[c], st->sent[c], st->acked[c], st->rejected[c], st->silent[c]);
	}
	if (unknown)
		fprintf(stderr, "#   %-12s %5u sent (command 0 or > %d), %u dropped\n", "other",
			unknown, MAGLEV_CMD_MAX, unknown_silent);
	fprintf(stderr,
		"#   errors: EINVAL %u, ERANGE %u, ENOENT %u, ESTALE %u, EOPNOTSUPP %u, ENODATA "
		"%u, other %u\n",
		st->err_einval, st->err_erange, st->err_enoent, st->err_estale, st->err_eopnotsupp,
		st->err_enodata, st->err_other);
	fprintf(stderr,
		"# %s: %u random messages, none crashed, state unchanged by %u refused or "
		"dropped and %u accepted reads (%u snapshots); %u accepted changes, %u resets; "
		"%.1f s\n",
		what, n, st->rejected_total, st->reads_total, st->checks, st->changes, st->resyncs,
		fz_elapsed(self));
}

/* End of every test: baseline again, every slot looks up right, clean log. */
int fz_finish(FIXTURE_DATA(fz) * self)
{
	int bad;

	if (fz_resync(self))
		return -1;
	bad = fz_check_base_lookups(&self->s, &self->base);
	if (bad) {
		fprintf(stderr, "# %d baseline lookups differ from the userspace pick\n", bad);
		return -1;
	}
	bad = fz_kmsg_bad(self->kmsg);
	if (bad) {
		fprintf(stderr, "# %d kernel log records show a kernel bug\n", bad);
		return -1;
	}
	return 0;
}
