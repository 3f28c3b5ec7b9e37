// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unloading the slow-path module while it forwards, inside the 6.1 VM.
 * Three rounds: configure an IPv4 and an IPv6 VIP, start a sender (whole
 * and fragmented datagrams, so reassembly queues are busy too), wait until
 * the backend receives, remove the module with a netlink socket still open,
 * then check that the family is gone, forwarding stopped, the kernel logged
 * no BUG/WARNING/Oops, and that the module loads again with empty state.
 * Leaves the module loaded, as it found it.
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "kmod_pkt.h"

#define MODNAME "maglev_slowpath"

static int module_load(void)
{
	int fd = open(KMOD_PATH, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return err == -EEXIST ? 0 : err;
}

static int module_unload(void)
{
	return syscall(SYS_delete_module, MODNAME, O_NONBLOCK) ? -errno : 0;
}

struct traffic {
	int client;
	int rx[KMOD_NBACKENDS][2];
	volatile int stop;
	volatile long sent;
	volatile long received;
	struct maglev_flow_key flows[2];
};

static void *sender(void *arg)
{
	struct traffic *t = arg;
	static struct kmod_frame fr[KMOD_MAX_FRAGS];
	static uint8_t payload[3000];
	struct kmod_shape whole = {}, frag = {.frag = 1000};
	long i;

	for (i = 0; !t->stop && i < 200000; i++) {
		const struct maglev_flow_key *k = &t->flows[i & 1];
		int n = kmod_build(k, payload, i % 4 == 3 ? 3000 : 100, i % 4 == 3 ? &frag : &whole,
				   (uint32_t)i, fr);

		if (n < 0 || kmod_send_frames(t->client, fr, NULL, n))
			break;
		t->sent++;
		usleep(200);
	}
	return NULL;
}

static void *receiver(void *arg)
{
	struct traffic *t = arg;
	static struct kmod_rx rx;

	while (!t->stop)
		if (!kmod_recv_any(t->rx, 50, &rx))
			t->received++;
	return NULL;
}

static int configure(struct slowpath_nl *nl)
{
	struct maglev_vip_info ipip = {.encap = MAGLEV_ENCAP_IPIP};
	struct maglev_vip_key k4 = {.family = MAGLEV_AF_INET, .proto = IPPROTO_UDP};
	struct maglev_vip_key k6 = {.family = MAGLEV_AF_INET6, .proto = IPPROTO_UDP};
	struct maglev_backend b4 = {.family = MAGLEV_AF_INET};
	struct maglev_backend b6 = {.family = MAGLEV_AF_INET6};
	static uint32_t t4[251], t6[251];
	int i;

	for (i = 0; i < 251; i++) {
		t4[i] = 1;
		t6[i] = 11;
	}
	inet_pton(AF_INET, "198.51.100.10", k4.addr);
	inet_pton(AF_INET6, "2001:db8:100::10", k6.addr);
	inet_pton(AF_INET, "203.0.113.10", b4.addr);
	inet_pton(AF_INET6, "2001:db8:2:1::2", b6.addr);
	return slowpath_nl_backend_set(nl, 1, &b4) ?: slowpath_nl_backend_set(nl, 11, &b6) ?:
	       slowpath_nl_vip_set(nl, &k4, &ipip) ?: slowpath_nl_vip_set(nl, &k6, &ipip) ?:
	       slowpath_nl_table_push(nl, &k4, 1, t4, 251) ?:
	       slowpath_nl_table_push(nl, &k6, 1, t6, 251);
}

/* Kernel log lines since fd was positioned that show a kernel bug. */
static int kmsg_bad_lines(int fd)
{
	static const char *const bad[] = {
		"BUG", "WARNING", "Oops", "general protection", "refcount_t", "list_del corruption",
		"leak"};
	char rec[4096];
	int found = 0;
	ssize_t n;
	size_t i;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n < 0)
			continue;
		rec[n] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(rec, bad[i])) {
				fprintf(stderr, "# kernel: %s", rec);
				found++;
				break;
			}
		}
	}
	return found;
}

FIXTURE(unload)
{
	struct traffic t;
	int kmsg;
};

FIXTURE_SETUP(unload)
{
	struct slowpath_nl *nl;
	int k;

	if (access(KMOD_PATH, R_OK) || slowpath_nl_open(&nl))
		SKIP(_exit(255), "module not built or not loaded");
	slowpath_nl_close(nl);
	memset(&self->t, 0, sizeof(self->t));
	self->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->kmsg);
	lseek(self->kmsg, 0, SEEK_END);
	ASSERT_EQ(0, system("selftests/kmod/topo.sh up"));
	for (k = 0; k < KMOD_NBACKENDS; k++)
		ASSERT_EQ(0, kmod_backend_sockets(k, self->t.rx[k]));
	self->t.client = kmod_client_socket();
	ASSERT_LE(0, self->t.client);
	self->t.flows[0].family = MAGLEV_AF_INET;
	inet_pton(AF_INET, "198.51.100.200", self->t.flows[0].src);
	inet_pton(AF_INET, "198.51.100.10", self->t.flows[0].dst);
	self->t.flows[1].family = MAGLEV_AF_INET6;
	inet_pton(AF_INET6, "2001:db8:c::200", self->t.flows[1].src);
	inet_pton(AF_INET6, "2001:db8:100::10", self->t.flows[1].dst);
	for (k = 0; k < 2; k++) {
		self->t.flows[k].proto = IPPROTO_UDP;
		self->t.flows[k].sport = htons(40000 + k);
		self->t.flows[k].dport = htons(KMOD_VIP_PORT);
	}
}

FIXTURE_TEARDOWN(unload)
{
	int k;

	/* Whatever happened, leave the module loaded and the namespaces gone. */
	module_load();
	for (k = 0; k < KMOD_NBACKENDS; k++) {
		close(self->t.rx[k][0]);
		close(self->t.rx[k][1]);
	}
	close(self->t.client);
	close(self->kmsg);
	if (system("selftests/kmod/topo.sh down"))
		TH_LOG("topo.sh down failed");
}

TEST_F_TIMEOUT(unload, unload_under_traffic, 180)
{
	struct slowpath_vip_state v;
	struct slowpath_stats st;
	struct slowpath_nl *nl, *gone;
	pthread_t snd, rcv;
	long before, after;
	int round, wait;

	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, module_load());
		ASSERT_EQ(0, kmod_setns("mlk-lb"));
		ASSERT_EQ(0, slowpath_nl_open(&nl));
		/* A fresh module starts empty. */
		EXPECT_EQ(0, slowpath_nl_vip_list(nl, &v, 1));
		ASSERT_EQ(0, slowpath_nl_stats(nl, &st));
		EXPECT_EQ(0, st.cnt[MAGLEV_STAT_FORWARDED]);
		ASSERT_EQ(0, configure(nl))
		{
			TH_LOG("configure: %s", slowpath_nl_errmsg(nl));
		}

		self->t.stop = 0;
		self->t.sent = 0;
		self->t.received = 0;
		ASSERT_EQ(0, pthread_create(&rcv, NULL, receiver, &self->t));
		ASSERT_EQ(0, pthread_create(&snd, NULL, sender, &self->t));
		for (wait = 0; wait < 300 && self->t.received < 50; wait++)
			usleep(10000);
		EXPECT_LE(50, self->t.received);

		/* Unload mid-stream, our netlink socket still open. */
		EXPECT_EQ(0, module_unload());
		EXPECT_EQ(-ENOENT, slowpath_nl_open(&gone));
		usleep(300000);
		before = self->t.received;
		usleep(500000);
		after = self->t.received;
		self->t.stop = 1;
		pthread_join(snd, NULL);
		pthread_join(rcv, NULL);
		slowpath_nl_close(nl);
		TH_LOG("round %d: sent %ld, received %ld", round, self->t.sent, after);
		/* Nothing forwards once the module is gone. */
		EXPECT_EQ(before, after);
	}
	EXPECT_EQ(0, kmsg_bad_lines(self->kmsg));
}

TEST_HARNESS_MAIN
