/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small client of etcd's v3 API through its JSON gateway (/v3/kv/range,
 * /v3/watch), over libcurl: keys and values are base64 in the JSON, 64-bit
 * numbers are strings. Every call blocks: fleet.c runs them on its own
 * thread, never on the event loop.
 */
#ifndef MAGLEVD_ETCD_CLIENT_H
#define MAGLEVD_ETCD_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

struct etcd_client;

struct etcd_tls {
	const char *ca, *cert, *key; /* "" or NULL: not given */
};

/* endpoints: comma-separated URLs, tried in turn. stop: set to abort a call. */
struct etcd_client *etcd_client_new(const char *endpoints, const struct etcd_tls *tls,
				    atomic_bool *stop);
void etcd_client_free(struct etcd_client *c);

struct etcd_kv {
	char *key, *value; /* decoded, NUL-terminated */
	size_t value_len;
	int64_t mod_revision;
};

/* Every key under prefix at the current revision (*rev). */
int etcd_range_prefix(struct etcd_client *c, const char *prefix, struct etcd_kv **kvs, size_t *n,
		      int64_t *rev, char *err, size_t errlen);
void etcd_kvs_free(struct etcd_kv *kvs, size_t n);

/*
 * One watch response: its revision and events (puts carry a value; a delete
 * has value NULL). compacted: the start revision is gone (re-read).
 */
struct etcd_watch_msg {
	int64_t revision;
	struct etcd_kv *events;
	size_t n;
	bool compacted, created;
};

/*
 * Watch prefix from start_rev, calling cb for each response until cb
 * returns non-zero (its value is returned), the connection ends (-1, err)
 * or stop is set (0). A message that is not JSON ends it with
 * ETCD_WATCH_REREAD and err saying so: the caller reads everything again.
 */
#define ETCD_WATCH_REREAD 1
int etcd_watch_prefix(struct etcd_client *c, const char *prefix, int64_t start_rev,
		      int (*cb)(const struct etcd_watch_msg *m, void *arg), void *arg, char *err,
		      size_t errlen);

/*
 * One transaction (/v3/kv/txn): body is its JSON (compare, success,
 * failure). On 0, *rev is the store's revision after it and *succeeded
 * whether the compares held (and the success ops ran); got (if non-NULL)
 * the first key the ops that ran read (a request_range), key NULL if none:
 * the caller frees key and value. On -1, etcd_client_maybe_sent() tells
 * whether it may have been applied all the same (its answer was lost).
 */
int etcd_txn(struct etcd_client *c, const char *body, int64_t *rev, bool *succeeded,
	     struct etcd_kv *got, char *err, size_t errlen);
bool etcd_client_maybe_sent(const struct etcd_client *c);
/* Leases (/v3/lease/grant, keepalive, revoke): *id, *ttl (0: expired). */
int etcd_lease_grant(struct etcd_client *c, int64_t ttl_s, int64_t *id, char *err, size_t errlen);
int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl, char *err, size_t errlen);
void etcd_lease_revoke(struct etcd_client *c, int64_t id);
/* Put key = value (attached to lease if non-zero). */
int etcd_put(struct etcd_client *c, const char *key, const char *value, int64_t lease, char *err,
	     size_t errlen);

/* The members of a range over every key starting with prefix ("key", "range_end"). */
int etcd_add_prefix(json_object *o, const char *prefix);

/* The endpoint of the last call that reached etcd. */
const char *etcd_client_endpoint(const struct etcd_client *c);
/* Make c's next call go to the endpoint other is on. */
void etcd_client_follow(struct etcd_client *c, const struct etcd_client *other);
/* From another thread: end c's call under way (a watch: -1, err = why; the
 * next call goes to the next endpoint).
 */
void etcd_client_abort(struct etcd_client *c, const char *why);
/*
 * A linearizable read (count only) of prefix on the current endpoint alone,
 * within timeout_ms: 0 when that member answers for the cluster (*rev its
 * revision), -1 with err (no leader, cut off, down).
 */
int etcd_probe(struct etcd_client *c, const char *prefix, long timeout_ms, int64_t *rev, char *err,
	       size_t errlen);

/* base64 (standard alphabet, padded) of len bytes: malloc'ed, NULL when out of memory. */
char *etcd_b64(const void *data, size_t len);
/* Decode: malloc'ed with a NUL after *len bytes, NULL when invalid. */
char *etcd_unb64(const char *s, size_t *len);

#endif /* MAGLEVD_ETCD_CLIENT_H */
