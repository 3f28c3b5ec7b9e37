// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fleet/etcd_client.h"
#include "fleet/fleet.h"
#include "fleet/fleet_health.h"
#include "datapath/drift.h"
#include "datapath/readback.h"
#include "core/log.h"
#include "model/state.h"
#include "core/stream.h"
#include "version.h"

/* A maglevctl change on its way to etcd, then waiting to be applied here. */
struct wjob {
	uint64_t stream_id;
	char *body;
	/* This write's id, the value its txn gives PREFIX changed and this
	 * balancer's PREFIX writes/NODE (see fleet_write).
	 */
	char id[160];
	/* Nothing to write: the txn only checks --expect-revision. */
	bool noop;
	int64_t rev;
	bool failed, succeeded, maybe_sent;
	char err[400];
	struct wjob *next;
};

/* Its down verdicts' share of a status value: with the rest (512 VIPs'
 * digests at most) well under etcd's 1.5 MiB request limit.
 */
#define FLEET_STATUS_HEALTH_MAX (1u << 20)

/* Each balancer's status key lives this long without a keepalive. */
#define FLEET_LEASE_TTL_S 5
#define FLEET_PUBLISH_MS  1000

/* A linearizable read on the watched member this often, each within the
 * timeout; two failures in a row leave that member for the next.
 */
#define FLEET_PROBE_MS	       1000
#define FLEET_PROBE_TIMEOUT_MS 2000

/* How long a maglevctl change may wait for etcd and the apply. */
#define FLEET_WRITE_TIMEOUT_MS 10000

/* The desired state as etcd held it at one revision: key -> value. */
struct snapshot {
	int64_t rev;
	/* From a full read, whose revision is the store's (the balancers'
	 * status keys move it too): what changes nothing keeps the one applied.
	 */
	bool reread;
	size_t n, cap;
	char **keys, **vals;
};

static struct {
	/* Shared between the thread and the loop, under lock. */
	pthread_mutex_t lock;
	struct snapshot *pending;
	bool connected;
	char error[400];
	char endpoint[300]; /* the endpoint the desired state comes from */
	/* The watch is up (on client's endpoint); when a linearizable read
	 * last confirmed that the member watched is current (mono_ms, 0:
	 * never): a full read, or a probe during the watch.
	 */
	atomic_bool watching;
	_Atomic uint64_t confirmed_ms;
	/* The same for the balancers' statuses (health_scope fleet). */
	atomic_bool hwatching;
	_Atomic uint64_t hconfirmed_ms;
	bool health_fallback; /* the loop's: following the own checks */
	bool health_cut_logged;
	struct etcd_client *qclient; /* the probe's */
	/* The thread's own. */
	struct etcd_client *client;
	struct snapshot map;
	char prefix[160];
	pthread_t thread;
	bool running;
	atomic_bool stop;
	/* Writes: the loop queues todo, the writer thread moves them to done. */
	pthread_cond_t wcond;
	struct wjob *todo, *done;
	struct etcd_client *wclient;
	pthread_t wthread;
	char changed_key[200], writes_key[400]; /* PREFIX changed, PREFIX writes/NODE */
	uint64_t writes;			/* ids handed out */
	/* Status publishing: the loop sets status, the publisher thread puts it
	 * under a lease and reads every balancer's into nodes.
	 */
	char *status;	    /* this balancer's, JSON */
	json_object *nodes; /* every live balancer's, by the last read */
	atomic_bool kick;   /* the status changed: publish now */
	/* health_scope fleet: every balancer's status as the health thread
	 * watches them (hmap, its own), handed to the loop as hnodes.
	 */
	json_object *hnodes;
	uint64_t hnodes_gen; /* bumped at each change */
	int64_t hnodes_rev;  /* the newest change's revision */
	struct snapshot hmap;
	struct etcd_client *hclient;
	pthread_t hthread;
	bool hrunning;
	bool nodes_agree;
	uint64_t disagree_since_ms; /* 0: they agree */
	char nodes_error[400];
	struct etcd_client *pclient;
	pthread_t pthread;
	char nodes_prefix[160];
	/* This balancer as its status names it: host and pin_dir. */
	char instance[CFG_PATH_MAX + 80];
	/* Another balancer holds this one's status key (fleet_node): who. */
	char node_conflict[CFG_PATH_MAX * 2 + 300], conflict_logged[CFG_PATH_MAX * 2 + 300];
	/* The loop's own. */
	struct wjob *waiting; /* committed, not applied here yet */
	struct ev_source src;
	bool loop_connected;
	char loop_error[400];
	char loop_endpoint[300];
	uint64_t applied_total, refused_total;
	int64_t counted_rev;		     /* the last revision applied_total counted */
	uint64_t applied_at_ms;		     /* wall clock: comparable between balancers */
	uint64_t health_gen, health_commits; /* what the fleet's verdicts were applied from */
	int64_t refused_rev;
	char refused_error[512];
} F = {.lock = PTHREAD_MUTEX_INITIALIZER, .wcond = PTHREAD_COND_INITIALIZER, .src = {.fd = -1}};

bool fleet_enabled(const struct daemon *d)
{
	return d->cfg.fleet_etcd[0] != '\0';
}

static void snap_clear(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->keys[i]);
		free(s->vals[i]);
	}
	s->n = 0;
}

static void snap_free(struct snapshot *s)
{
	if (!s)
		return;
	snap_clear(s);
	free(s->keys);
	free(s->vals);
	free(s);
}

/* Put (val non-NULL) or delete key; takes the strings. */
static int snap_set(struct snapshot *s, char *key, char *val)
{
	size_t i;

	for (i = 0; i < s->n && strcmp(s->keys[i], key); i++)
		;
	if (i < s->n) {
		free(key);
		free(s->vals[i]);
		if (val) {
			s->vals[i] = val;
			return 0;
		}
		free(s->keys[i]);
		s->n--;
		s->keys[i] = s->keys[s->n];
		s->vals[i] = s->vals[s->n];
		return 0;
	}
	if (!val) {
		free(key);
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **k = realloc(s->keys, cap * sizeof(*k)), **v;

		if (!k)
			goto oom;
		s->keys = k;
		v = realloc(s->vals, cap * sizeof(*v));
		if (!v)
			goto oom;
		s->vals = v;
		s->cap = cap;
	}
	s->keys[s->n] = key;
	s->vals[s->n] = val;
	s->n++;
	return 0;
oom:
	free(key);
	free(val);
	return -ENOMEM;
}

static struct snapshot *snap_copy(const struct snapshot *s)
{
	struct snapshot *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return NULL;
	c->rev = s->rev;
	c->reread = s->reread;
	for (i = 0; i < s->n; i++) {
		char *k = strdup(s->keys[i]), *v = strdup(s->vals[i]);

		if (!k || !v || snap_set(c, k, v)) {
			if (k && v)
				k = v = NULL; /* snap_set freed them */
			free(k);
			free(v);
			snap_free(c);
			return NULL;
		}
	}
	return c;
}

static void wake_loop(void)
{
	uint64_t one = 1;

	if (write(F.src.fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("fleet: waking the event loop: %s", strerror(errno));
}

/* Hand the map at its revision to the loop; an older one not yet taken is dropped. */
static void post_map(void)
{
	struct snapshot *c = snap_copy(&F.map);

	if (!c) {
		log_err("fleet: out of memory copying the desired state");
		return;
	}
	pthread_mutex_lock(&F.lock);
	snap_free(F.pending);
	F.pending = c;
	F.connected = true;
	F.error[0] = '\0';
	snprintf(F.endpoint, sizeof(F.endpoint), "%s", etcd_client_endpoint(F.client));
	pthread_mutex_unlock(&F.lock);
	wake_loop();
}

static void set_disconnected(const char *why)
{
	pthread_mutex_lock(&F.lock);
	F.connected = false;
	snprintf(F.error, sizeof(F.error), "%s", why);
	pthread_mutex_unlock(&F.lock);
	wake_loop();
}

/* Keys under the prefix outside vips/ are not the desired state. */
static bool is_vip_key(const char *key)
{
	return !strncmp(key, F.prefix, strlen(F.prefix));
}

static int on_watch(const struct etcd_watch_msg *m, void *arg)
{
	int64_t rev = 0;
	size_t i;

	(void)arg;
	if (m->compacted)
		return 1; /* the revision we need is gone: read everything again */
	if (!m->n)
		return 0; /* created, or a progress notice */
	for (i = 0; i < m->n; i++) {
		const struct etcd_kv *kv = &m->events[i];
		char *k, *v = NULL;

		if (kv->mod_revision > rev)
			rev = kv->mod_revision;
		if (!is_vip_key(kv->key))
			continue;
		k = strdup(kv->key);
		if (kv->value)
			v = strdup(kv->value);
		if (!k || (kv->value && !v) || snap_set(&F.map, k, v)) {
			if (!k || (kv->value && !v)) {
				free(k);
				free(v);
			}
			log_err("fleet: out of memory");
			return 1;
		}
	}
	/* The revision of the change itself, the same on every balancer. */
	F.map.rev = rev ? rev : m->revision;
	F.map.reread = false;
	post_map();
	return 0;
}

static void pause_ms(unsigned int ms)
{
	while (ms && !atomic_load(&F.stop)) {
		unsigned int n = ms > 100 ? 100 : ms;

		usleep(n * 1000);
		ms -= n;
	}
}

/*
 * A full read's keys into *dst, whole or not at all (-ENOMEM: *dst as
 * before, kvs untouched). MAGLEVD_TEST_FLEET_OOM=N: the first full read of
 * the desired state runs out of memory at its Nth key (a test hook).
 */
static int read_into(struct snapshot *dst, const struct etcd_kv *kvs, size_t n)
{
	static long oom_at = -1;
	struct snapshot s = {0};
	size_t i;

	if (oom_at < 0) {
		const char *e = getenv("MAGLEVD_TEST_FLEET_OOM");

		oom_at = e ? atol(e) : 0;
	}
	for (i = 0; i < n; i++) {
		char *k = strdup(kvs[i].key), *v = strdup(kvs[i].value);

		if (dst == &F.map && oom_at > 0 && (long)i + 1 == oom_at) {
			oom_at = 0;
			free(k);
			free(v);
			k = v = NULL;
		}
		if (!k || !v || snap_set(&s, k, v)) {
			if (!k || !v) {
				free(k);
				free(v);
			}
			snap_clear(&s);
			free(s.keys);
			free(s.vals);
			return -ENOMEM;
		}
	}
	snap_clear(dst);
	free(dst->keys);
	free(dst->vals);
	dst->keys = s.keys;
	dst->vals = s.vals;
	dst->n = s.n;
	dst->cap = s.cap;
	return 0;
}

/*
 * A watch on a member cut off from the others stays open and silent, and a
 * member without a leader may still answer from its own, stale, state. So
 * while the watch is up, a linearizable read on the same member every
 * FLEET_PROBE_MS confirms it is current (the age of that confirmation is the
 * input's freshness in status); two failures in a row end the watch, and
 * the thread moves to the next endpoint.
 */
/* One probe of the member c watches prefix on; -1 after two failures in a row (c's watch ended). */
static void probe_one(struct etcd_client *c, const char *prefix, atomic_bool *watching,
		      _Atomic uint64_t *confirmed, int *fails)
{
	char err[400], why[500];
	int64_t rev;

	if (!c || !atomic_load(watching)) {
		*fails = 0;
		return;
	}
	etcd_client_follow(F.qclient, c);
	if (!etcd_probe(F.qclient, prefix, FLEET_PROBE_TIMEOUT_MS, &rev, err, sizeof(err))) {
		if (atomic_load(watching))
			atomic_store(confirmed, mono_ms());
		*fails = 0;
		return;
	}
	if (++*fails < 2 || atomic_load(&F.stop))
		return;
	*fails = 0;
	snprintf(why, sizeof(why), "linearizable reads failed twice in a row (%s)", err);
	log_warn("fleet: etcd %s: %s: leaving it for the next endpoint",
		 etcd_client_endpoint(F.qclient), why);
	etcd_client_abort(c, why);
}

static void *probe_thread(void *arg)
{
	int fails = 0, hfails = 0;

	(void)arg;
	while (!atomic_load(&F.stop)) {
		pause_ms(FLEET_PROBE_MS);
		probe_one(F.client, F.prefix, &F.watching, &F.confirmed_ms, &fails);
		probe_one(F.hclient, F.nodes_prefix, &F.hwatching, &F.hconfirmed_ms, &hfails);
	}
	return NULL;
}

static void *fleet_thread(void *arg)
{
	char err[400], last[400] = "";
	pthread_t qthread;
	bool probing;

	(void)arg;
	probing = !pthread_create(&qthread, NULL, probe_thread, NULL);
	if (!probing)
		log_err("fleet: cannot start the etcd probe: a cut-off member goes unnoticed");
	while (!atomic_load(&F.stop)) {
		struct etcd_kv *kvs;
		bool map_changed;
		size_t n, i;
		int64_t rev;
		int r;

		if (etcd_range_prefix(F.client, F.prefix, &kvs, &n, &rev, err, sizeof(err))) {
			if (atomic_load(&F.stop))
				break;
			if (strcmp(err, last))
				log_warn("fleet: reading %s from etcd: %s", F.prefix, err);
			snprintf(last, sizeof(last), "%s", err);
			set_disconnected(err);
			pause_ms(1000);
			continue;
		}
		if (last[0])
			log_info("fleet: etcd %s reached again", etcd_client_endpoint(F.client));
		last[0] = '\0';
		/* Whether the content differs from what was applied before. */
		map_changed = n != F.map.n;
		for (i = 0; i < n && !map_changed; i++) {
			size_t j;

			for (j = 0; j < F.map.n && strcmp(F.map.keys[j], kvs[i].key); j++)
				;
			map_changed = j == F.map.n || strcmp(F.map.vals[j], kvs[i].value);
		}
		if (read_into(&F.map, kvs, n)) {
			/* Half a desired state would delete the VIPs left out:
			 * keep the one applied, and read again.
			 */
			etcd_kvs_free(kvs, n);
			log_err("fleet: out of memory holding the %zu keys read from etcd: "
				"nothing applied, reading again",
				n);
			snprintf(last, sizeof(last), "out of memory holding the desired state");
			set_disconnected(last);
			pause_ms(1000);
			continue;
		}
		/* The revision of the content, not of the store, which the
		 * balancers' status puts move too: the newest key's, unless a
		 * delete came after it (then only the store's is newer). The
		 * loop keeps the applied one if the content is what it holds.
		 */
		{
			int64_t maxmod = 0, prev = F.map.rev;

			for (i = 0; i < n; i++)
				if (kvs[i].mod_revision > maxmod)
					maxmod = kvs[i].mod_revision;
			F.map.rev = maxmod > prev ? maxmod : map_changed ? rev : prev;
			F.map.reread = true;
		}
		etcd_kvs_free(kvs, n);
		/* A range is linearizable: the state read was the cluster's. */
		atomic_store(&F.confirmed_ms, mono_ms());
		post_map();
		atomic_store(&F.watching, true);
		r = etcd_watch_prefix(F.client, F.prefix, rev + 1, on_watch, NULL, err,
				      sizeof(err));
		atomic_store(&F.watching, false);
		if (atomic_load(&F.stop))
			break;
		if (r > 0) {
			if (err[0])
				log_warn("fleet: %s: reading everything again", err);
			else
				log_info("fleet: watch from revision %" PRId64
					 " compacted: reading again",
					 F.map.rev + 1);
			continue;
		}
		log_warn("fleet: watch: %s", err);
		snprintf(last, sizeof(last), "%s", err);
		set_disconnected(err);
		pause_ms(1000);
	}
	if (probing)
		pthread_join(qthread, NULL);
	return NULL;
}

static json_object *b64str(const char *s);

/*
 * Create this balancer's writes key if it does not exist: a txn's compare
 * on its value fails while it is missing (etcd compares no value of a key
 * that is not there).
 */
static void create_writes_key(void)
{
	json_object *txn = json_object_new_object(), *cmps = json_object_new_array(),
		    *cmp = json_object_new_object(), *ops = json_object_new_array(),
		    *op = json_object_new_object(), *put = json_object_new_object();
	bool ok;
	char err[200];
	int64_t rev;

	json_object_object_add(cmp, "key", b64str(F.writes_key));
	json_object_object_add(cmp, "target", json_object_new_string("CREATE"));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "create_revision", json_object_new_int64(0));
	json_object_array_add(cmps, cmp);
	json_object_object_add(put, "key", b64str(F.writes_key));
	json_object_object_add(put, "value", b64str("none"));
	json_object_object_add(op, "request_put", put);
	json_object_array_add(ops, op);
	json_object_object_add(txn, "compare", cmps);
	json_object_object_add(txn, "success", ops);
	if (etcd_txn(F.wclient, json_object_to_json_string(txn), &rev, &ok, NULL, err, sizeof(err)))
		log_warn("fleet: creating %s: %s", F.writes_key, err);
	json_object_put(txn);
}

/*
 * One write's txn. A txn that committed but whose answer was lost (a
 * timeout: the client tries the next endpoint) fails its compare when sent
 * again, and the failure's read of this balancer's writes key then holds
 * the write's id: written, at that key's revision.
 */
static void run_job(struct wjob *j)
{
	bool created = false;

	for (;;) {
		struct etcd_kv got;

		j->failed = etcd_txn(F.wclient, j->body, &j->rev, &j->succeeded, &got, j->err,
				     sizeof(j->err)) != 0;
		j->maybe_sent |= etcd_client_maybe_sent(F.wclient);
		if (!j->failed && !j->succeeded && !j->noop) {
			if (got.key && !strcmp(got.value, j->id)) {
				j->succeeded = true;
				j->rev = got.mod_revision;
			} else if (!got.key && !created) {
				free(got.value);
				create_writes_key();
				created = true;
				continue;
			}
		}
		free(got.key);
		free(got.value);
		return;
	}
}

static void *writer_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&F.lock);
	while (!atomic_load(&F.stop)) {
		struct wjob *j = F.todo, **tail;

		if (!j) {
			pthread_cond_wait(&F.wcond, &F.lock);
			continue;
		}
		F.todo = j->next;
		pthread_mutex_unlock(&F.lock);
		run_job(j);
		pthread_mutex_lock(&F.lock);
		j->next = NULL;
		for (tail = &F.done; *tail; tail = &(*tail)->next)
			;
		*tail = j;
		wake_loop();
	}
	pthread_mutex_unlock(&F.lock);
	return NULL;
}

/* Agreement of the balancers' statuses: one revision, digest and fingerprint. */
static bool nodes_agree(json_object *nodes)
{
	const char *keys[] = {"revision", "vips_digest", "seed_fingerprint"};
	size_t i, k, n = json_object_array_length(nodes);

	for (i = 1; i < n; i++)
		for (k = 0; k < 3; k++) {
			json_object *a = json_object_object_get(json_object_array_get_idx(nodes, 0),
								keys[k]),
				    *b = json_object_object_get(json_object_array_get_idx(nodes, i),
								keys[k]);

			if (!a || !b ||
			    strcmp(json_object_get_string(a), json_object_get_string(b)))
				return false;
		}
	return true;
}

/* Every balancer's status key, as an array of their JSON. */
static json_object *read_nodes(int64_t *rev, char *err, size_t errlen)
{
	struct etcd_kv *kvs;
	json_object *arr;
	size_t n, i;

	if (etcd_range_prefix(F.pclient, F.nodes_prefix, &kvs, &n, rev, err, errlen))
		return NULL;
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object *o = json_tokener_parse(kvs[i].value);

		if (o && json_object_is_type(o, json_type_object))
			json_object_array_add(arr, o);
		else
			json_object_put(o);
	}
	etcd_kvs_free(kvs, n);
	return arr;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(F.hmap.keys[*(const size_t *)a], F.hmap.keys[*(const size_t *)b]);
}

/* The statuses in hmap as an array for the loop, by node name (what fleet
 * status shows does not depend on the order events came in); rev: the
 * newest change's.
 */
static void post_hnodes(int64_t rev)
{
	json_object *arr = json_object_new_array();
	size_t i, *ord = calloc(F.hmap.n ? F.hmap.n : 1, sizeof(*ord));

	if (!ord) {
		json_object_put(arr);
		log_err("fleet: out of memory ordering the balancers' statuses");
		return;
	}
	for (i = 0; i < F.hmap.n; i++)
		ord[i] = i;
	qsort(ord, F.hmap.n, sizeof(*ord), by_key);
	for (i = 0; i < F.hmap.n; i++) {
		json_object *o = json_tokener_parse(F.hmap.vals[ord[i]]);

		if (o && json_object_is_type(o, json_type_object))
			json_object_array_add(arr, o);
		else
			json_object_put(o);
	}
	free(ord);
	pthread_mutex_lock(&F.lock);
	json_object_put(F.hnodes);
	F.hnodes = arr;
	F.hnodes_rev = rev;
	F.hnodes_gen++;
	pthread_mutex_unlock(&F.lock);
}

static int on_nodes_watch(const struct etcd_watch_msg *m, void *arg)
{
	int64_t rev = 0;
	size_t i;

	(void)arg;
	if (m->compacted)
		return 1;
	if (!m->n)
		return 0;
	for (i = 0; i < m->n; i++) {
		const struct etcd_kv *kv = &m->events[i];
		char *k = strdup(kv->key), *v = kv->value ? strdup(kv->value) : NULL;

		if (kv->mod_revision > rev)
			rev = kv->mod_revision;
		if (!k || (kv->value && !v)) {
			free(k);
			free(v);
			return 1;
		}
		if (snap_set(&F.hmap, k, v))
			return 1; /* out of memory: read everything again */
	}
	post_hnodes(rev ? rev : m->revision);
	return 0;
}

/*
 * health_scope fleet: watch every balancer's status (their verdicts, and by
 * their leases which are live): a full read, then a watch from the next
 * revision; a lease that expires is a delete event. While etcd cannot be
 * read the last statuses stay with the loop: the verdicts freeze.
 */
static void *health_thread(void *arg)
{
	char err[400], last[400] = "";

	(void)arg;
	while (!atomic_load(&F.stop)) {
		struct etcd_kv *kvs;
		int64_t rev, maxmod = 0;
		size_t n, i;
		int r;

		if (etcd_range_prefix(F.hclient, F.nodes_prefix, &kvs, &n, &rev, err,
				      sizeof(err))) {
			if (strcmp(err, last) && !atomic_load(&F.stop))
				log_warn("fleet: reading the balancers' verdicts: %s", err);
			snprintf(last, sizeof(last), "%s", err);
			pause_ms(1000);
			continue;
		}
		last[0] = '\0';
		for (i = 0; i < n; i++)
			if (kvs[i].mod_revision > maxmod)
				maxmod = kvs[i].mod_revision;
		/* Statuses left out would be votes left out: all or none. */
		if (read_into(&F.hmap, kvs, n)) {
			etcd_kvs_free(kvs, n);
			log_err("fleet: out of memory holding the balancers' verdicts: reading "
				"again");
			pause_ms(1000);
			continue;
		}
		etcd_kvs_free(kvs, n);
		atomic_store(&F.hconfirmed_ms, mono_ms());
		/* The content's revision, as for the desired state: the same on
		 * every balancer that holds the same statuses.
		 */
		post_hnodes(maxmod ? maxmod : rev);
		atomic_store(&F.hwatching, true);
		r = etcd_watch_prefix(F.hclient, F.nodes_prefix, rev + 1, on_nodes_watch, NULL, err,
				      sizeof(err));
		atomic_store(&F.hwatching, false);
		if (atomic_load(&F.stop))
			break;
		if (r > 0)
			continue;
		if (strcmp(err, last))
			log_warn("fleet: watching the balancers' verdicts: %s", err);
		snprintf(last, sizeof(last), "%s", err);
		pause_ms(1000);
	}
	return NULL;
}

/* Sleep ms, or less when the loop has a new status to publish. */
static void pause_kick(unsigned int ms)
{
	while (ms && !atomic_load(&F.stop) && !atomic_exchange(&F.kick, false)) {
		unsigned int n = ms > 50 ? 50 : ms;

		usleep(n * 1000);
		ms -= n;
	}
}

/* The lease the status key lives under, 0 while there is none: the
 * publisher grants it, the keepalive thread keeps it alive or, when etcd
 * says it expired, sets it to 0.
 */
static _Atomic int64_t status_lease;

/*
 * Keep the status lease alive every FLEET_PUBLISH_MS on a client of its
 * own: the publisher's puts and reads may each block up to 5 s (a member
 * that accepts but does not answer), as long as the lease lives.
 */
static void *keepalive_thread(void *arg)
{
	struct etcd_client *c = arg;
	char err[400];

	while (!atomic_load(&F.stop)) {
		int64_t id = atomic_load(&status_lease), ttl;

		/* An error says nothing of the lease: it may live, try again. */
		if (id && !etcd_lease_keepalive(c, id, &ttl, err, sizeof(err)) && !ttl)
			atomic_compare_exchange_strong(&status_lease, &id, 0);
		pause_ms(FLEET_PUBLISH_MS);
	}
	return NULL;
}

/* A txn of one put of key = text under lease if cmp holds, else a read of key. */
static char *publish_txn(const char *key, const char *text, int64_t lease, json_object *cmp)
{
	json_object *txn = json_object_new_object(), *cmps = json_object_new_array(),
		    *ok = json_object_new_array(), *fail = json_object_new_array(),
		    *put = json_object_new_object(), *rr = json_object_new_object(),
		    *op = json_object_new_object(), *fop = json_object_new_object();
	char *body;

	json_object_object_add(cmp, "key", b64str(key));
	json_object_array_add(cmps, cmp);
	json_object_object_add(put, "key", b64str(key));
	json_object_object_add(put, "value", b64str(text));
	json_object_object_add(put, "lease", json_object_new_int64(lease));
	json_object_object_add(op, "request_put", put);
	json_object_array_add(ok, op);
	json_object_object_add(rr, "key", b64str(key));
	json_object_object_add(fop, "request_range", rr);
	json_object_array_add(fail, fop);
	json_object_object_add(txn, "compare", cmps);
	json_object_object_add(txn, "success", ok);
	json_object_object_add(txn, "failure", fail);
	body = strdup(json_object_to_json_string_ext(txn, JSON_C_TO_STRING_PLAIN));
	json_object_put(txn);
	return body;
}

/* The "instance" member of a status value ("?" if none). */
static void status_instance(const char *value, char *out, size_t len)
{
	json_object *o = json_tokener_parse(value), *m;

	snprintf(out, len, "%s",
		 o && json_object_object_get_ex(o, "instance", &m) ? json_object_get_string(m)
								   : "?");
	json_object_put(o);
}

/*
 * Put this balancer's status under its lease, unless another balancer with
 * the same fleet_node holds the key: a put only over a key of this lease,
 * none, or this balancer's own (its instance: the same host and pin_dir, a
 * previous life of it whose lease has not expired yet). 0 published, 1
 * held by another (F.node_conflict says by whom), -1 with err.
 */
static int publish(const char *key, const char *text, int64_t lease, char *err, size_t errlen)
{
	json_object *cmp = json_object_new_object();
	struct etcd_kv got;
	char other[300];
	int64_t rev;
	bool ok;
	char *body;
	int r;

	json_object_object_add(cmp, "target", json_object_new_string("LEASE"));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "lease", json_object_new_int64(lease));
	body = publish_txn(key, text, lease, cmp);
	r = body ? etcd_txn(F.pclient, body, &rev, &ok, &got, err, errlen) : -1;
	free(body);
	if (r || ok) {
		if (!r) {
			free(got.key);
			free(got.value);
		}
		return r;
	}
	status_instance(got.key ? got.value : "{}", other, sizeof(other));
	if (got.key && strcmp(other, F.instance)) {
		pthread_mutex_lock(&F.lock);
		snprintf(F.node_conflict, sizeof(F.node_conflict),
			 "fleet_node %s is taken by another balancer (%s); this one (%s) does "
			 "not publish its status: give each balancer its own fleet_node",
			 key + strlen(F.nodes_prefix), other, F.instance);
		pthread_mutex_unlock(&F.lock);
		free(got.key);
		free(got.value);
		return 1;
	}
	/* Gone, or this balancer's own from before: take it, unless it moved. */
	cmp = json_object_new_object();
	json_object_object_add(cmp, "target", json_object_new_string("MOD"));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "mod_revision",
			       json_object_new_int64(got.key ? got.mod_revision : 0));
	free(got.key);
	free(got.value);
	body = publish_txn(key, text, lease, cmp);
	r = body ? etcd_txn(F.pclient, body, &rev, &ok, &got, err, errlen) : -1;
	free(body);
	if (r)
		return r;
	free(got.key);
	free(got.value);
	if (!ok) {
		snprintf(err, errlen, "status key %.300s changed while taking it: trying again",
			 key);
		return -1;
	}
	return 0;
}

static void *publisher_thread(void *arg)
{
	struct daemon *d = arg;
	struct etcd_tls tls = {d->cfg.fleet_ca, d->cfg.fleet_cert, d->cfg.fleet_key};
	struct etcd_client *kclient = etcd_client_new(d->cfg.fleet_etcd, &tls, &F.stop);
	char key[400], err[400], *published = NULL;
	int64_t lease = 0;
	uint64_t put_ms = 0;
	pthread_t kthread;
	bool kalive;

	snprintf(key, sizeof(key), "%s%s", F.nodes_prefix, d->cfg.fleet_node);
	kalive = kclient && !pthread_create(&kthread, NULL, keepalive_thread, kclient);
	if (!kalive)
		log_err("fleet: cannot start the lease keepalive: the status key will expire");
	while (!atomic_load(&F.stop)) {
		json_object *nodes;
		char *text = NULL;
		int64_t rev;
		bool held = false;
		int r;

		pthread_mutex_lock(&F.lock);
		if (F.status)
			text = strdup(F.status);
		pthread_mutex_unlock(&F.lock);
		err[0] = '\0';
		if (lease && !atomic_load(&status_lease))
			lease = 0; /* expired: the keepalive thread heard so */
		if (!lease &&
		    etcd_lease_grant(F.pclient, FLEET_LEASE_TTL_S, &lease, err, sizeof(err))) {
			lease = 0;
		} else if (text && published && strcmp(text, published) &&
			   mono_ms() - put_ms < FLEET_PUBLISH_MS) {
			/* One put a second at most: a flapping backend's changes
			 * are coalesced, etcd's history grows by a second's worth.
			 */
			held = true;
		} else if (text && (!published || strcmp(text, published))) {
			atomic_store(&status_lease, lease);
			put_ms = mono_ms();
			r = publish(key, text, lease, err, sizeof(err));
			if (r < 0) {
				lease = 0; /* expired, or etcd lost: start again */
			} else if (!r) {
				if (F.node_conflict[0]) {
					log_info("fleet: status key %s free again: publishing",
						 key);
					pthread_mutex_lock(&F.lock);
					F.node_conflict[0] = '\0';
					pthread_mutex_unlock(&F.lock);
				}
				free(published);
				published = text;
				text = NULL;
			} else if (strcmp(F.node_conflict, F.conflict_logged)) {
				log_err("fleet: %s", F.node_conflict);
				snprintf(F.conflict_logged, sizeof(F.conflict_logged), "%s",
					 F.node_conflict);
			}
		}
		if (!lease) {
			free(published);
			published = NULL;
		}
		free(text);
		nodes = read_nodes(&rev, err[0] ? err + strlen(err) : err,
				   sizeof(err) - (err[0] ? strlen(err) : 0));
		pthread_mutex_lock(&F.lock);
		if (nodes) {
			json_object_put(F.nodes);
			F.nodes = nodes;
			F.nodes_agree = nodes_agree(nodes);
			if (F.nodes_agree)
				F.disagree_since_ms = 0;
			else if (!F.disagree_since_ms)
				F.disagree_since_ms = mono_ms();
		}
		snprintf(F.nodes_error, sizeof(F.nodes_error), "%s", err);
		pthread_mutex_unlock(&F.lock);
		/* Sooner while the status waits to be published. */
		if (held)
			pause_ms((unsigned int)(FLEET_PUBLISH_MS -
						(mono_ms() - put_ms) % FLEET_PUBLISH_MS));
		else
			pause_kick(lease && (published || F.node_conflict[0]) ? FLEET_PUBLISH_MS
									      : 200);
	}
	atomic_store(&status_lease, 0);
	if (kalive)
		pthread_join(kthread, NULL);
	etcd_client_free(kclient);
	if (lease)
		etcd_lease_revoke(F.pclient, lease); /* a clean stop: gone at once */
	free(published);
	return NULL;
}

/*
 * health_scope fleet: the fleet's verdicts, again when the balancers'
 * statuses read from etcd changed or the registry did (a backend added by
 * a new revision gets the fleet's verdict too). While etcd cannot be read
 * the last statuses read stay: the verdicts freeze.
 */
static void health_from_fleet(struct daemon *d)
{
	json_object *nodes = NULL;
	uint64_t age, max = d->cfg.health_fleet_max_age_ms;
	bool stale;

	if (!fleet_health_on(d))
		return;
	/* The fleet's verdicts frozen for longer than the limit (etcd lost):
	 * a backend that died meanwhile would stay in every table. Follow the
	 * own checks until the input is fresh again.
	 */
	age = fleet_health_age_ms(d);
	stale = max && age > max;
	if (stale != F.health_fallback) {
		if (stale)
			log_warn("health: the balancers' verdicts were last confirmed %" PRIu64
				 " ms ago (health_fleet_max_age_ms %" PRIu64
				 "): following this balancer's own checks",
				 age, max);
		else
			log_info("health: the balancers' verdicts are fresh again: following "
				 "the fleet's quorum");
		F.health_fallback = stale;
		/* Either way, what the new source says is applied at once. */
		F.health_gen = 0;
		F.health_commits = UINT64_MAX;
	}
	if (stale) {
		if (d->commits != F.health_commits || fleet_health_changed_local()) {
			fleet_health_apply(d, NULL, true);
			F.health_commits = d->commits;
		}
		return;
	}
	pthread_mutex_lock(&F.lock);
	if (F.hnodes && (F.hnodes_gen != F.health_gen || d->commits != F.health_commits)) {
		nodes = json_object_get(F.hnodes);
		F.health_gen = F.hnodes_gen;
	}
	pthread_mutex_unlock(&F.lock);
	if (!nodes)
		return;
	fleet_health_apply(d, nodes, false);
	F.health_commits = d->commits;
	json_object_put(nodes);
}

/* This balancer's status as its key holds it; set on the loop, published by the thread. */
static void apply(struct daemon *d, struct snapshot *s);
static void writes_progress(struct daemon *d);
/* On the loop: the last desired state accepted for a commit (a copy), and
 * when it was last applied again.
 */
static struct snapshot *accepted;
static uint64_t reapplied_ms;

/*
 * A desired state whose commit the datapath refused was rolled back (the
 * registry holds the revision before it again) and etcd sends it no second
 * time: apply it again, once a second while it keeps failing, until it
 * holds or a newer revision replaces it.
 */
static void reapply_rolled_back(struct daemon *d)
{
	struct snapshot *c;
	uint64_t now = mono_ms();

	if (!accepted || d->reg->fleet_rev >= (uint64_t)accepted->rev || daemon_commit_busy() ||
	    now - reapplied_ms < 1000)
		return;
	reapplied_ms = now;
	log_warn("fleet: revision %" PRId64 " was rolled back (its commit failed): applying it "
		 "again",
		 accepted->rev);
	c = snap_copy(accepted);
	if (!c)
		return;
	c->reread = false;
	apply(d, c);
	snap_free(c);
}

void fleet_tick(struct daemon *d)
{
	json_object *o, *dg;
	char hex[DRIFT_HEX_LEN], name[CTL_ADDR_STRLEN + 8];
	const char *t;
	uint32_t i;

	static uint64_t last;
	uint64_t now = mono_ms();
	bool voted;

	if (!fleet_enabled(d))
		return;
	health_from_fleet(d);
	reapply_rolled_back(d);
	if (F.waiting) /* answered once their commit is live */
		writes_progress(d);
	/* Twice a second is soon enough for a status that lives 5 s; a new
	 * verdict of this balancer's goes at once (the fleet waits for it).
	 */
	voted = fleet_health_on(d) && fleet_health_changed();
	if (!voted && last && now - last < 500)
		return;
	last = now;
	o = json_object_new_object();
	dg = json_object_new_object();
	json_object_object_add(o, "node", json_object_new_string(d->cfg.fleet_node));
	json_object_object_add(o, "version", json_object_new_string(MAGLEV_VERSION));
	json_object_object_add(o, "instance", json_object_new_string(F.instance));
	json_object_object_add(o, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(o, "revision", json_object_new_uint64(d->reg->fleet_rev));
	drift_hex(drift_vips_digest(d->reg), hex);
	json_object_object_add(o, "vips_digest", json_object_new_string(hex));
	drift_hex(drift_seed_fingerprint(&d->cfg.seed), hex);
	json_object_object_add(o, "seed_fingerprint", json_object_new_string(hex));
	json_object_object_add(o, "connected", json_object_new_boolean(F.loop_connected));
	json_object_object_add(o, "datapath_drift", json_object_new_int64(readback_drift_vips(d)));
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v)
			continue;
		ctl_format_vip(&v->key, name, sizeof(name));
		drift_hex(v->digest, hex);
		json_object_object_add(dg, name, json_object_new_string(hex));
	}
	json_object_object_add(o, "digests", dg);
	json_object_object_add(o, "health_scope",
			       json_object_new_string(fleet_health_on(d) ? "fleet" : "local"));
	if (fleet_health_on(d)) {
		json_object *times;
		bool cut;

		json_object_object_add(o, "health_down_only", json_object_new_boolean(1));
		json_object_object_add(
			o, "health",
			fleet_health_publish(d, FLEET_STATUS_HEALTH_MAX, &cut, &times));
		if (json_object_object_length(times))
			json_object_object_add(o, "health_since", times);
		else
			json_object_put(times);
		if (cut) {
			json_object_object_add(o, "health_truncated", json_object_new_boolean(1));
			if (!F.health_cut_logged)
				log_warn("fleet: this balancer's down verdicts pass %u bytes: the "
					 "rest are left out of its status (counted as up)",
					 FLEET_STATUS_HEALTH_MAX);
		}
		F.health_cut_logged = cut;
	}
	t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	pthread_mutex_lock(&F.lock);
	if (!F.status || strcmp(F.status, t)) {
		free(F.status);
		F.status = strdup(t);
		atomic_store(&F.kick, true);
	}
	pthread_mutex_unlock(&F.lock);
	json_object_put(o);
}

json_object *fleet_nodes_json(struct daemon *d)
{
	json_object *o = json_object_new_object();

	pthread_mutex_lock(&F.lock);
	json_object_object_add(o, "nodes",
			       F.nodes ? json_object_get(F.nodes) : json_object_new_array());
	json_object_object_add(o, "agree", json_object_new_boolean(F.nodes && F.nodes_agree));
	json_object_object_add(o, "health_scope",
			       json_object_new_string(fleet_health_on(d) ? "fleet" : "local"));
	if (fleet_health_on(d)) {
		json_object_object_add(o, "health", fleet_health_json(d, F.hnodes));
		json_object_object_add(o, "health_revision", json_object_new_int64(F.hnodes_rev));
	}
	json_object_object_add(
		o, "disagree_ms",
		json_object_new_uint64(F.disagree_since_ms ? mono_ms() - F.disagree_since_ms : 0));
	if (F.nodes_error[0])
		json_object_object_add(o, "error", json_object_new_string(F.nodes_error));
	pthread_mutex_unlock(&F.lock);
	json_object_object_add(o, "node", json_object_new_string(d->cfg.fleet_node));
	return o;
}

/* A VIP as its key's value: its vip.add, then a backend.add per backend. */
static char *vip_value(const struct vip *v, char *name, size_t namelen)
{
	json_object *o = state_vip_json(v, false), *arr = json_object_new_array(),
		    *add = json_object_new_object(), *m, *bes;
	char *text;
	size_t i, n;

	snprintf(name, namelen, "%s", json_object_get_string(json_object_object_get(o, "vip")));
	json_object_object_add(add, "cmd", json_object_new_string("vip.add"));
	json_object_object_add(add, "vip", json_object_new_string(name));
	if (!v->key.port)
		json_object_object_add(add, "port_any", json_object_new_boolean(1));
	json_object_object_add(add, "encap", json_object_get(json_object_object_get(o, "encap")));
	if (json_object_object_get_ex(o, "gue_port", &m))
		json_object_object_add(add, "gue_port", json_object_get(m));
	json_object_object_add(add, "placement",
			       json_object_get(json_object_object_get(o, "placement")));
	if (json_object_object_get_ex(o, "vnodes", &m))
		json_object_object_add(add, "vnodes", json_object_get(m));
	if (v->second_chance)
		json_object_object_add(add, "second_chance", json_object_new_boolean(1));
	if (json_object_object_get_ex(o, "balance_factor", &m))
		json_object_object_add(add, "balance_factor", json_object_get(m));
	if (json_object_object_get_ex(o, "slow_start_ms", &m))
		json_object_object_add(add, "slow_start_ms", json_object_get(m));
	if (json_object_object_get_ex(o, "hot_threshold", &m))
		json_object_object_add(add, "hot_threshold", json_object_get(m));
	/* The overrides the state file holds, as the request members that set them. */
	if (json_object_object_get_ex(o, "check", &m))
		for (i = 0; i < HC_NFIELDS; i++) {
			const struct hc_field *f = hc_field_at(HC_ORDER_STATE, i);
			json_object *c;

			if (json_object_object_get_ex(m, f->key, &c))
				json_object_object_add(add, f->req, json_object_get(c));
		}
	json_object_array_add(arr, add);
	bes = json_object_object_get(o, "backends");
	n = bes ? json_object_array_length(bes) : 0;
	for (i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(bes, i), *r = json_object_new_object();

		json_object_object_add(r, "cmd", json_object_new_string("backend.add"));
		json_object_object_add(r, "vip", json_object_new_string(name));
		json_object_object_add(r, "backend",
				       json_object_get(json_object_object_get(b, "addr")));
		json_object_object_add(r, "weight",
				       json_object_get(json_object_object_get(b, "weight")));
		if (json_object_get_boolean(json_object_object_get(b, "drain")))
			json_object_object_add(r, "drain", json_object_new_boolean(1));
		/* Until its first passing check: a balancer that adds it from
		 * this value adds it down too (one that has it keeps its own).
		 */
		if (v->bes[i].start_down)
			json_object_object_add(r, "start_down", json_object_new_boolean(1));
		json_object_array_add(arr, r);
	}
	text = strdup(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	json_object_put(o);
	return text;
}

static json_object *b64str(const char *s)
{
	char *e = etcd_b64(s, strlen(s));
	json_object *o = json_object_new_string(e ? e : "");

	free(e);
	return o;
}

/* Add a put of key, or a delete of it (val NULL), to ops. */
static void add_key_op(json_object *ops, const char *key, const char *val)
{
	json_object *op = json_object_new_object(), *r = json_object_new_object();

	json_object_object_add(r, "key", b64str(key));
	if (val)
		json_object_object_add(r, "value", b64str(val));
	json_object_object_add(op, val ? "request_put" : "request_delete_range", r);
	json_object_array_add(ops, op);
}

/* The same for VIP name's key. */
static void add_op(json_object *ops, const char *name, const char *val)
{
	char key[300];

	snprintf(key, sizeof(key), "%s%s", F.prefix, name);
	add_key_op(ops, key, val);
}

/* A compare of key's (or with prefix, every key under it) target. */
static json_object *add_cmp(json_object *cmps, const char *key, bool prefix, const char *target,
			    const char *result)
{
	json_object *cmp = json_object_new_object();

	if (prefix)
		etcd_add_prefix(cmp, key);
	else
		json_object_object_add(cmp, "key", b64str(key));
	json_object_object_add(cmp, "target", json_object_new_string(target));
	json_object_object_add(cmp, "result", json_object_new_string(result));
	json_object_array_add(cmps, cmp);
	return cmp;
}

int fleet_write(struct daemon *d, const struct registry *next, int64_t expect_rev, char *err,
		size_t errlen)
{
	json_object *ops = json_object_new_array(), *txn;
	struct wjob *j;
	uint32_t i;
	int r = 1;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *nv = next->vips[i], *ov;
		char name[CTL_ADDR_STRLEN + 8], oname[CTL_ADDR_STRLEN + 8];
		char *nval = NULL, *oval = NULL;

		if (nv) {
			ov = registry_find_vip(d->reg, &nv->key);
			nval = vip_value(nv, name, sizeof(name));
			oval = ov ? vip_value(ov, oname, sizeof(oname)) : NULL;
			if (nval && (!oval || strcmp(nval, oval)))
				add_op(ops, name, nval);
		}
		free(nval);
		free(oval);
		ov = d->reg->vips[i];
		if (ov && !registry_find_vip(next, &ov->key)) {
			free(vip_value(ov, oname, sizeof(oname)));
			add_op(ops, oname, NULL);
		}
	}
	if (!json_object_array_length(ops) && expect_rev < 0)
		goto out;
	j = calloc(1, sizeof(*j));
	if (j) {
		json_object *cmps = json_object_new_array(), *fail = json_object_new_array(), *rr;
		struct timespec ts;

		txn = json_object_new_object();
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(j->id, sizeof(j->id), "%s %d %lld.%09ld %" PRIu64, d->cfg.fleet_node,
			 (int)getpid(), (long long)ts.tv_sec, ts.tv_nsec, ++F.writes);
		j->noop = !json_object_array_length(ops);
		if (!j->noop) {
			/* Sent again after a lost answer, a committed write fails
			 * here; the failure's read of the key tells (run_job).
			 */
			json_object_object_add(
				add_cmp(cmps, F.writes_key, false, "VALUE", "NOT_EQUAL"), "value",
				b64str(j->id));
			rr = json_object_new_object();
			json_object_object_add(rr, "key", b64str(F.writes_key));
			json_object_array_add(fail, json_object_new_object());
			json_object_object_add(json_object_array_get_idx(fail, 0), "request_range",
					       rr);
			/* Every write moves PREFIX changed: a compare on it sees
			 * deletes, which a compare on the keys that exist cannot.
			 */
			add_key_op(ops, F.changed_key, j->id);
			add_key_op(ops, F.writes_key, j->id);
		}
		if (expect_rev >= 0) {
			/* Nothing under the prefix written or deleted after expect_rev. */
			json_object_object_add(add_cmp(cmps, F.prefix, true, "MOD", "LESS"),
					       "mod_revision",
					       json_object_new_int64(expect_rev + 1));
			json_object_object_add(add_cmp(cmps, F.changed_key, false, "MOD", "LESS"),
					       "mod_revision",
					       json_object_new_int64(expect_rev + 1));
		}
		json_object_object_add(txn, "compare", cmps);
		json_object_object_add(txn, "success", json_object_get(ops));
		json_object_object_add(txn, "failure", fail);
		j->body = strdup(json_object_to_json_string_ext(txn, JSON_C_TO_STRING_PLAIN));
		json_object_put(txn);
	}
	if (!j || !j->body) {
		if (j)
			free(j);
		snprintf(err, errlen, "out of memory");
		r = -1;
		goto out;
	}
	j->stream_id = stream_defer_id(d, FLEET_WRITE_TIMEOUT_MS);
	if (!j->stream_id) {
		free(j->body);
		free(j);
		snprintf(err, errlen, "fleet mode: changes go through the control socket");
		r = -1;
		goto out;
	}
	pthread_mutex_lock(&F.lock);
	{
		struct wjob **tail;

		for (tail = &F.todo; *tail; tail = &(*tail)->next)
			;
		*tail = j;
	}
	pthread_cond_broadcast(&F.wcond);
	pthread_mutex_unlock(&F.lock);
	r = 0;
out:
	json_object_put(ops);
	return r;
}

static void answer(struct daemon *d, struct wjob *j, const char *errmsg)
{
	json_object *o = json_object_new_object();
	const char *t;
	char *out;
	size_t n;

	json_object_object_add(o, "ok", json_object_new_boolean(!errmsg));
	if (errmsg)
		json_object_object_add(o, "error", json_object_new_string(errmsg));
	else
		json_object_object_add(o, "revision", json_object_new_int64(j->rev));
	t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	n = strlen(t);
	out = malloc(n + 2);
	if (out) {
		memcpy(out, t, n);
		out[n] = '\n';
		stream_answer_id(d, j->stream_id, out, n + 1);
	}
	json_object_put(o);
	free(j->body);
	free(j);
}

/* Answer the writes etcd finished, and those this balancer has now applied. */
static void writes_progress(struct daemon *d)
{
	struct wjob *done, *j, **pp;
	char msg[600];

	pthread_mutex_lock(&F.lock);
	done = F.done;
	F.done = NULL;
	pthread_mutex_unlock(&F.lock);
	while ((j = done)) {
		done = j->next;
		if (j->failed) {
			snprintf(msg, sizeof(msg), "fleet: writing to etcd: %s (%s)", j->err,
				 j->maybe_sent ? "its answer was lost: etcd may have committed it, "
						 "see the revision in status"
					       : "nothing written");
			answer(d, j, msg);
		} else if (!j->succeeded) {
			snprintf(msg, sizeof(msg),
				 "fleet: etcd's desired state changed after the expected revision "
				 "(it is at %" PRId64 " now): nothing written",
				 j->rev);
			answer(d, j, msg);
		} else if (j->noop) {
			/* Nothing written: nothing to wait for. */
			j->rev = (int64_t)d->reg->fleet_rev;
			answer(d, j, NULL);
		} else {
			j->next = F.waiting;
			F.waiting = j;
		}
	}
	/* Only while no commit is under way is d->reg what the datapath
	 * holds: a revision still being swapped in, or rolled back, waits.
	 */
	for (pp = &F.waiting; (j = *pp);) {
		if ((uint64_t)j->rev <= d->reg->fleet_rev && !daemon_commit_busy()) {
			*pp = j->next;
			answer(d, j, NULL);
		} else if (F.refused_rev >= j->rev && F.refused_error[0]) {
			*pp = j->next;
			snprintf(msg, sizeof(msg),
				 "fleet: etcd committed revision %" PRId64
				 ", but this balancer refused it: %.400s",
				 j->rev, F.refused_error);
			answer(d, j, msg);
		} else {
			pp = &j->next;
		}
	}
}

/* The VIP requests of one key's value, appended to reqs; -1 with err. */
static int add_vip(json_object *reqs, const char *key, const char *val, char *err, size_t errlen)
{
	const char *name = key + strlen(F.prefix);
	json_object *arr = json_tokener_parse(val);
	size_t i, n;

	if (!arr || !json_object_is_type(arr, json_type_array) ||
	    !(n = json_object_array_length(arr))) {
		snprintf(err, errlen, "%s: not a JSON array of requests", key);
		goto bad;
	}
	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(arr, i), *c, *v;
		const char *want = i ? "backend.add" : "vip.add";

		if (!json_object_is_type(r, json_type_object) ||
		    !json_object_object_get_ex(r, "cmd", &c) ||
		    strcmp(json_object_get_string(c), want)) {
			snprintf(err, errlen, "%s: request %zu: want a %s", key, i + 1, want);
			goto bad;
		}
		if (!json_object_object_get_ex(r, "vip", &v) ||
		    strcmp(json_object_get_string(v), name)) {
			snprintf(err, errlen, "%s: request %zu: its vip is not %.60s", key, i + 1,
				 name);
			goto bad;
		}
		json_object_array_add(reqs, json_object_get(r));
	}
	json_object_put(arr);
	return 0;
bad:
	json_object_put(arr);
	return -1;
}

static void apply(struct daemon *d, struct snapshot *s)
{
	json_object *reqs = json_object_new_array();
	char err[512];
	size_t i;
	int r = 0;

	for (i = 0; i < s->n && !r; i++)
		r = add_vip(reqs, s->keys[i], s->vals[i], err, sizeof(err));
	if (!r)
		r = ctl_apply_desired(d, reqs, (uint64_t)s->rev, s->reread, err, sizeof(err));
	json_object_put(reqs);
	if (r > 0) {
		log_debug("fleet: revision %" PRId64 " holds what revision %" PRIu64
			  " applied: kept",
			  s->rev, d->reg->fleet_rev);
		return;
	}
	if (r) {
		F.refused_total++;
		F.refused_rev = s->rev;
		snprintf(F.refused_error, sizeof(F.refused_error), "%s", err);
		log_err("fleet: revision %" PRId64 " refused, keeping revision %" PRIu64 ": %s",
			s->rev, d->reg->fleet_rev, err);
		return;
	}
	/* A revision applied again after a rollback is still one revision. */
	if (s->rev != F.counted_rev)
		F.applied_total++;
	F.counted_rev = s->rev;
	F.refused_error[0] = '\0';
	if (s != accepted) {
		snap_free(accepted);
		accepted = snap_copy(s); /* NULL without memory: no second try */
	}
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		F.applied_at_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	}
	log_debug("fleet: revision %" PRId64 " applied: %u VIPs", s->rev, d->reg->nvips);
}

static void on_wake(struct daemon *d, struct ev_source *src, uint32_t events)
{
	struct snapshot *s;
	uint64_t v;

	(void)events;
	if (read(src->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_err("fleet: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&F.lock);
	s = F.pending;
	F.pending = NULL;
	if (F.loop_connected != F.connected)
		log_info("fleet: etcd %s%s%s", F.connected ? "connected" : "disconnected",
			 F.connected ? "" : ": ", F.connected ? "" : F.error);
	F.loop_connected = F.connected;
	snprintf(F.loop_error, sizeof(F.loop_error), "%s", F.error);
	snprintf(F.loop_endpoint, sizeof(F.loop_endpoint), "%s", F.endpoint);
	pthread_mutex_unlock(&F.lock);
	if (s)
		apply(d, s);
	snap_free(s);
	writes_progress(d);
}

/* Stop the first n of the etcd, writer, status and health threads, in
 * the order fleet_start starts them (the writer waits on wcond).
 */
static void stop_threads(int n)
{
	pthread_t *t[] = {&F.thread, &F.wthread, &F.pthread, &F.hthread};
	int i;

	atomic_store(&F.stop, true);
	pthread_mutex_lock(&F.lock);
	pthread_cond_broadcast(&F.wcond);
	pthread_mutex_unlock(&F.lock);
	for (i = 0; i < n; i++)
		pthread_join(*t[i], NULL);
}

int fleet_start(struct daemon *d, char *err, size_t errlen)
{
	struct etcd_tls tls = {d->cfg.fleet_ca, d->cfg.fleet_cert, d->cfg.fleet_key};

	if (!fleet_enabled(d))
		return 0;
	snprintf(F.prefix, sizeof(F.prefix), "%s" FLEET_VIPS, d->cfg.fleet_prefix);
	snprintf(F.loop_error, sizeof(F.loop_error), "not connected yet");
	F.client = etcd_client_new(d->cfg.fleet_etcd, &tls, &F.stop);
	F.wclient = etcd_client_new(d->cfg.fleet_etcd, &tls, &F.stop);
	F.pclient = etcd_client_new(d->cfg.fleet_etcd, &tls, &F.stop);
	F.qclient = etcd_client_new(d->cfg.fleet_etcd, &tls, &F.stop);
	if (fleet_health_on(d))
		F.hclient = etcd_client_new(d->cfg.fleet_etcd, &tls, &F.stop);
	snprintf(F.nodes_prefix, sizeof(F.nodes_prefix), "%s" FLEET_NODES, d->cfg.fleet_prefix);
	snprintf(F.changed_key, sizeof(F.changed_key), "%s" FLEET_CHANGED, d->cfg.fleet_prefix);
	snprintf(F.writes_key, sizeof(F.writes_key), "%s" FLEET_WRITES "%s", d->cfg.fleet_prefix,
		 d->cfg.fleet_node);
	{
		char host[256] = "?";

		gethostname(host, sizeof(host) - 1);
		snprintf(F.instance, sizeof(F.instance), "host %s pin_dir %s", host,
			 d->cfg.pin_dir);
	}
	F.map.rev = (int64_t)d->reg->fleet_rev;
	fleet_tick(d);
	F.src.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	F.src.cb = on_wake;
	if (!F.client || !F.wclient || !F.pclient || !F.qclient ||
	    (fleet_health_on(d) && !F.hclient) || F.src.fd < 0 || ev_add(d, &F.src, EPOLLIN)) {
		snprintf(err, errlen, "fleet: cannot set up the etcd client: %s", strerror(errno));
		return -1;
	}
	if (pthread_create(&F.thread, NULL, fleet_thread, NULL)) {
		snprintf(err, errlen, "fleet: cannot start the etcd thread");
		return -1;
	}
	if (pthread_create(&F.wthread, NULL, writer_thread, NULL)) {
		stop_threads(1);
		snprintf(err, errlen, "fleet: cannot start the etcd writer thread");
		return -1;
	}
	if (pthread_create(&F.pthread, NULL, publisher_thread, d)) {
		stop_threads(2);
		snprintf(err, errlen, "fleet: cannot start the etcd status thread");
		return -1;
	}
	if (fleet_health_on(d)) {
		if (pthread_create(&F.hthread, NULL, health_thread, NULL)) {
			stop_threads(3);
			snprintf(err, errlen, "fleet: cannot start the etcd health thread");
			return -1;
		}
		F.hrunning = true;
	}
	F.running = true;
	log_info("fleet: desired state from etcd %s under %s, applied revision %" PRIu64,
		 d->cfg.fleet_etcd, F.prefix, d->reg->fleet_rev);
	return 0;
}

void fleet_stop(struct daemon *d)
{
	if (!F.running)
		return;
	stop_threads(F.hrunning ? 4 : 3);
	F.hrunning = false;
	F.running = false;
	ev_del(d, &F.src);
	close(F.src.fd);
	snap_free(F.pending);
	F.pending = NULL;
	snap_free(accepted);
	accepted = NULL;
	/* Changes still on their way: their clients are gone with the sockets. */
	{
		struct wjob *lists[] = {F.todo, F.done, F.waiting}, *j;
		size_t i;

		for (i = 0; i < 3; i++)
			while ((j = lists[i])) {
				lists[i] = j->next;
				free(j->body);
				free(j);
			}
		F.todo = F.done = F.waiting = NULL;
	}
	snap_clear(&F.map);
	etcd_client_free(F.client);
	etcd_client_free(F.wclient);
	etcd_client_free(F.pclient);
	etcd_client_free(F.qclient);
	etcd_client_free(F.hclient);
	snap_clear(&F.hmap);
	free(F.hmap.keys);
	free(F.hmap.vals);
	json_object_put(F.hnodes);
	json_object_put(F.nodes);
	free(F.status);
}

uint64_t fleet_health_age_ms(const struct daemon *d)
{
	uint64_t t = atomic_load(&F.hconfirmed_ms);

	return mono_ms() - (t ? t : d->start_ms);
}

uint64_t fleet_input_age_ms(const struct daemon *d)
{
	uint64_t t = atomic_load(&F.confirmed_ms);

	/* Never confirmed: as old as this maglevd (what it holds came from the
	 * state file).
	 */
	return mono_ms() - (t ? t : d->start_ms);
}

json_object *fleet_json(struct daemon *d)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(fleet_enabled(d)));
	if (!fleet_enabled(d))
		return o;
	json_object_object_add(o, "etcd", json_object_new_string(d->cfg.fleet_etcd));
	json_object_object_add(o, "prefix", json_object_new_string(d->cfg.fleet_prefix));
	json_object_object_add(o, "node", json_object_new_string(d->cfg.fleet_node));
	json_object_object_add(o, "connected", json_object_new_boolean(F.loop_connected));
	if (!F.loop_connected)
		json_object_object_add(o, "error", json_object_new_string(F.loop_error));
	json_object_object_add(o, "revision", json_object_new_uint64(d->reg->fleet_rev));
	json_object_object_add(o, "endpoint", json_object_new_string(F.loop_endpoint));
	json_object_object_add(o, "input_age_ms", json_object_new_uint64(fleet_input_age_ms(d)));
	json_object_object_add(o, "input_confirmed",
			       json_object_new_boolean(atomic_load(&F.confirmed_ms) != 0));
	json_object_object_add(o, "applied", json_object_new_uint64(F.applied_total));
	if (F.applied_at_ms)
		json_object_object_add(o, "applied_at_ms", json_object_new_uint64(F.applied_at_ms));
	json_object_object_add(o, "refused", json_object_new_uint64(F.refused_total));
	json_object_object_add(o, "health_scope",
			       json_object_new_string(fleet_health_on(d) ? "fleet" : "local"));
	if (fleet_health_on(d)) {
		pthread_mutex_lock(&F.lock);
		json_object_object_add(o, "health", fleet_health_json(d, F.hnodes));
		json_object_object_add(o, "health_revision", json_object_new_int64(F.hnodes_rev));
		pthread_mutex_unlock(&F.lock);
		json_object_object_add(o, "health_input_age_ms",
				       json_object_new_uint64(fleet_health_age_ms(d)));
		json_object_object_add(o, "health_fallback",
				       json_object_new_boolean(F.health_fallback));
	}
	pthread_mutex_lock(&F.lock);
	if (F.node_conflict[0])
		json_object_object_add(o, "node_conflict", json_object_new_string(F.node_conflict));
	pthread_mutex_unlock(&F.lock);
	if (F.refused_error[0]) {
		json_object_object_add(o, "refused_revision", json_object_new_int64(F.refused_rev));
		json_object_object_add(o, "refused_error", json_object_new_string(F.refused_error));
	}
	return o;
}

void fleet_metrics(struct daemon *d, FILE *f)
{
	if (!fleet_enabled(d))
		return;
	fprintf(f,
		"# HELP maglev_fleet_connected 1 while the etcd watch of the desired state is "
		"up.\n# TYPE maglev_fleet_connected gauge\nmaglev_fleet_connected %d\n",
		F.loop_connected);
	fprintf(f,
		"# HELP maglev_fleet_revision The etcd revision of the desired state applied.\n"
		"# TYPE maglev_fleet_revision gauge\nmaglev_fleet_revision %" PRIu64 "\n",
		d->reg->fleet_rev);
	fprintf(f,
		"# HELP maglev_fleet_revisions_total Desired states from etcd by result.\n"
		"# TYPE maglev_fleet_revisions_total counter\n"
		"maglev_fleet_revisions_total{result=\"applied\"} %" PRIu64 "\n"
		"maglev_fleet_revisions_total{result=\"refused\"} %" PRIu64 "\n",
		F.applied_total, F.refused_total);
	fprintf(f,
		"# HELP maglev_fleet_input_age_seconds Age of the last linearizable read that "
		"confirmed the desired state watched is etcd's (since the start if none).\n"
		"# TYPE maglev_fleet_input_age_seconds gauge\nmaglev_fleet_input_age_seconds "
		"%.3f\n",
		(double)fleet_input_age_ms(d) / 1000);
	if (fleet_health_on(d))
		fprintf(f,
			"# HELP maglev_fleet_health_fallback 1 while the balancers' verdicts are "
			"older than health_fleet_max_age_ms and this balancer follows its own "
			"checks.\n# TYPE maglev_fleet_health_fallback gauge\n"
			"maglev_fleet_health_fallback %d\n"
			"# HELP maglev_fleet_health_input_age_seconds Age of the last "
			"linearizable "
			"read that confirmed the balancers' verdicts.\n"
			"# TYPE maglev_fleet_health_input_age_seconds gauge\n"
			"maglev_fleet_health_input_age_seconds %.3f\n",
			F.health_fallback, (double)fleet_health_age_ms(d) / 1000);
	fprintf(f,
		"# HELP maglev_fleet_node_conflict 1 while another balancer holds this one's "
		"status key (the same fleet_node): this one does not publish.\n"
		"# TYPE maglev_fleet_node_conflict gauge\nmaglev_fleet_node_conflict %d\n",
		F.node_conflict[0] != '\0');
}
