// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "fleet/etcd_client.h"

#define ETCD_MAX_ENDPOINTS 8
/* A range answer larger than this is refused rather than buffered. */
#define ETCD_MAX_BODY (256u << 20)

struct etcd_client {
	char *eps[ETCD_MAX_ENDPOINTS];
	int n_eps;
	atomic_int cur; /* read by another client's etcd_client_follow */
	char *ca, *cert, *key;
	atomic_bool *stop;
	bool maybe_sent; /* the last call's request may have reached etcd */
	/* etcd_client_abort: the call under way ends, err says why. */
	atomic_bool abort;
	char abort_why[300];
};

struct buf {
	char *p;
	size_t len, cap;
	bool too_big;
};

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *etcd_b64(const void *data, size_t len)
{
	const unsigned char *s = data;
	char *o = malloc((len + 2) / 3 * 4 + 1), *p = o;
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		*p++ = b64chars[s[i] >> 2];
		*p++ = b64chars[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*p++ = b64chars[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)];
		*p++ = b64chars[s[i + 2] & 63];
	}
	if (i < len) {
		*p++ = b64chars[s[i] >> 2];
		if (i + 1 < len) {
			*p++ = b64chars[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
			*p++ = b64chars[(s[i + 1] & 15) << 2];
		} else {
			*p++ = b64chars[(s[i] & 3) << 4];
			*p++ = '=';
		}
		*p++ = '=';
	}
	*p = '\0';
	return o;
}

char *etcd_unb64(const char *s, size_t *len)
{
	size_t n = strlen(s), i, o = 0;
	unsigned int acc = 0;
	int bits = 0;
	char *out = malloc(n / 4 * 3 + 4);

	if (!out)
		return NULL;
	for (i = 0; i < n && s[i] != '='; i++) {
		const char *c = strchr(b64chars, s[i]);

		if (!c || !s[i]) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned int)(c - b64chars);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

struct etcd_client *etcd_client_new(const char *endpoints, const struct etcd_tls *tls,
				    atomic_bool *stop)
{
	struct etcd_client *c = calloc(1, sizeof(*c));
	const char *p = endpoints;

	if (!c)
		return NULL;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	while (*p && c->n_eps < ETCD_MAX_ENDPOINTS) {
		size_t n = strcspn(p, ",");

		/* Without a trailing '/': paths are appended. */
		c->eps[c->n_eps] = strndup(p, n && p[n - 1] == '/' ? n - 1 : n);
		if (!c->eps[c->n_eps])
			goto fail;
		c->n_eps++;
		p += n;
		if (*p == ',')
			p++;
	}
	if (tls && tls->ca && tls->ca[0] && !(c->ca = strdup(tls->ca)))
		goto fail;
	if (tls && tls->cert && tls->cert[0] &&
	    (!(c->cert = strdup(tls->cert)) || !(c->key = strdup(tls->key))))
		goto fail;
	c->stop = stop;
	return c;
fail:
	etcd_client_free(c);
	return NULL;
}

void etcd_client_free(struct etcd_client *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->n_eps; i++)
		free(c->eps[i]);
	free(c->ca);
	free(c->cert);
	free(c->key);
	free(c);
}

const char *etcd_client_endpoint(const struct etcd_client *c)
{
	return c->n_eps ? c->eps[c->cur] : "";
}

static size_t collect(char *data, size_t sz, size_t nm, void *arg)
{
	struct buf *b = arg;
	size_t n = sz * nm;

	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (cap > ETCD_MAX_BODY) {
			b->too_big = true;
			return 0;
		}
		p = realloc(b->p, cap);
		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

static int progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct etcd_client *cl = arg;

	(void)a, (void)b, (void)c, (void)d;
	return (cl->stop && atomic_load(cl->stop)) || atomic_load(&cl->abort);
}

void etcd_client_abort(struct etcd_client *c, const char *why)
{
	snprintf(c->abort_why, sizeof(c->abort_why), "%s", why);
	atomic_store(&c->abort, true);
}

void etcd_client_follow(struct etcd_client *c, const struct etcd_client *other)
{
	atomic_store(&c->cur, atomic_load(&other->cur) % c->n_eps);
}

static CURL *easy(struct etcd_client *c, const char *path, const char *body,
		  struct curl_slist **hdrs, char *url, size_t urlen)
{
	CURL *h = curl_easy_init();

	if (!h)
		return NULL;
	snprintf(url, urlen, "%s%s", c->eps[c->cur], path);
	*hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	/* etcd's WithRequireLeader, through the gateway's metadata headers: a
	 * member cut off from the leader refuses calls and ends watches ("no
	 * leader") rather than answer from a state that no longer moves.
	 */
	*hdrs = curl_slist_append(*hdrs, "Grpc-Metadata-hasleader: true");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	/* A dead peer without a FIN: the keepalives notice it within seconds. */
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 2L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
	if (c->cert) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	}
	return h;
}

/* The end of the range of keys starting with prefix: prefix + 1 in its last byte. */
static char *prefix_end(const char *prefix)
{
	size_t n = strlen(prefix);
	char *e = strdup(prefix);

	if (!e)
		return NULL;
	while (n && (unsigned char)e[n - 1] == 0xff)
		n--;
	if (n)
		e[n - 1]++;
	e[n] = '\0';
	return e;
}

/* {"key": b64(prefix), "range_end": b64(end) ...}: the members of a range over prefix. */
int etcd_add_prefix(json_object *o, const char *prefix)
{
	char *end = prefix_end(prefix), *k = etcd_b64(prefix, strlen(prefix)),
	     *e = end ? etcd_b64(end, strlen(end)) : NULL;
	int r = k && e ? 0 : -1;

	if (!r) {
		json_object_object_add(o, "key", json_object_new_string(k));
		json_object_object_add(o, "range_end", json_object_new_string(e));
	}
	free(end);
	free(k);
	free(e);
	return r;
}

/* int64 members are strings in the gateway's JSON (proto3 mapping). */
static int64_t jint64(json_object *o, const char *key)
{
	json_object *m;

	if (!o || !json_object_object_get_ex(o, key, &m))
		return 0;
	return json_object_get_int64(m);
}

static int parse_kv(json_object *kv, struct etcd_kv *out)
{
	json_object *k, *v;
	size_t klen;

	memset(out, 0, sizeof(*out));
	if (!json_object_object_get_ex(kv, "key", &k) ||
	    !(out->key = etcd_unb64(json_object_get_string(k), &klen)))
		return -1;
	out->mod_revision = jint64(kv, "mod_revision");
	/* An empty value is left out of the JSON. */
	if (!json_object_object_get_ex(kv, "value", &v))
		out->value = strdup("");
	else
		out->value = etcd_unb64(json_object_get_string(v), &out->value_len);
	return out->value ? 0 : -1;
}

void etcd_kvs_free(struct etcd_kv *kvs, size_t n)
{
	size_t i;

	for (i = 0; kvs && i < n; i++) {
		free(kvs[i].key);
		free(kvs[i].value);
	}
	free(kvs);
}

/* The gateway's error object ({"error": ..., "message": ...}) as text. */
static void gw_error(json_object *root, const char *what, char *err, size_t errlen)
{
	json_object *m;

	if (json_object_object_get_ex(root, "message", &m) ||
	    json_object_object_get_ex(root, "error", &m))
		snprintf(err, errlen, "%s: etcd: %.200s", what, json_object_get_string(m));
	else
		snprintf(err, errlen, "%s: unexpected answer from etcd", what);
}

/*
 * POST body to path, trying each endpoint in turn (or only the current one,
 * with one), each for up to timeout_ms; the parsed answer, or NULL with err.
 */
static json_object *post_to(struct etcd_client *c, const char *path, const char *body, bool one,
			    long timeout_ms, char *err, size_t errlen)
{
	struct buf b = {0};
	json_object *root = NULL;
	int tries;

	c->maybe_sent = false;
	atomic_store(&c->abort, false);
	for (tries = 0; tries < (one ? 1 : c->n_eps); tries++) {
		struct curl_slist *hdrs = NULL;
		char url[600];
		CURL *h = easy(c, path, body, &hdrs, url, sizeof(url));
		CURLcode cc;

		if (!h) {
			snprintf(err, errlen, "out of memory");
			break;
		}
		b.len = 0;
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
		cc = curl_easy_perform(h);
		curl_easy_cleanup(h);
		curl_slist_free_all(hdrs);
		/* Connected: what was sent may have been applied, answer or not. */
		if (cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST &&
		    cc != CURLE_COULDNT_RESOLVE_PROXY)
			c->maybe_sent = true;
		if (cc == CURLE_OK && b.p) {
			root = json_tokener_parse(b.p);
			if (!root)
				snprintf(err, errlen, "%s: not JSON", url);
			break;
		}
		snprintf(err, errlen, "%s: %s", url,
			 b.too_big ? "answer too large" : curl_easy_strerror(cc));
		if (c->stop && atomic_load(c->stop))
			break;
		if (!one)
			c->cur = (c->cur + 1) % c->n_eps;
	}
	free(b.p);
	return root;
}

static json_object *post(struct etcd_client *c, const char *path, const char *body, char *err,
			 size_t errlen)
{
	return post_to(c, path, body, false, 5000, err, errlen);
}

int etcd_probe(struct etcd_client *c, const char *prefix, long timeout_ms, int64_t *rev, char *err,
	       size_t errlen)
{
	json_object *req = json_object_new_object(), *root = NULL, *hdr;
	int r = -1;

	if (etcd_add_prefix(req, prefix)) {
		snprintf(err, errlen, "out of memory");
		json_object_put(req);
		return -1;
	}
	/* Linearizable (the default): the member asks the leader. */
	json_object_object_add(req, "count_only", json_object_new_boolean(1));
	root = post_to(c, "/v3/kv/range", json_object_to_json_string(req), true, timeout_ms, err,
		       errlen);
	if (root && json_object_object_get_ex(root, "header", &hdr)) {
		*rev = jint64(hdr, "revision");
		r = 0;
	} else if (root) {
		gw_error(root, "linearizable read", err, errlen);
	}
	json_object_put(root);
	json_object_put(req);
	return r;
}

int etcd_range_prefix(struct etcd_client *c, const char *prefix, struct etcd_kv **kvs, size_t *n,
		      int64_t *rev, char *err, size_t errlen)
{
	json_object *req = json_object_new_object(), *root = NULL, *hdr, *arr;
	size_t i, cnt;
	int r = -1;

	*kvs = NULL;
	*n = 0;
	if (etcd_add_prefix(req, prefix)) {
		snprintf(err, errlen, "out of memory");
		json_object_put(req);
		return -1;
	}
	root = post(c, "/v3/kv/range", json_object_to_json_string(req), err, errlen);
	if (!root)
		goto out;
	if (!json_object_object_get_ex(root, "header", &hdr)) {
		gw_error(root, "range", err, errlen);
		goto out;
	}
	*rev = jint64(hdr, "revision");
	cnt = json_object_object_get_ex(root, "kvs", &arr) ? json_object_array_length(arr) : 0;
	*kvs = calloc(cnt ? cnt : 1, sizeof(**kvs));
	if (!*kvs) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < cnt; i++) {
		if (parse_kv(json_object_array_get_idx(arr, i), &(*kvs)[i])) {
			snprintf(err, errlen, "range: key %zu: bad base64 from etcd", i);
			etcd_kvs_free(*kvs, i + 1);
			*kvs = NULL;
			goto out;
		}
	}
	*n = cnt;
	r = 0;
out:
	json_object_put(root);
	json_object_put(req);
	return r;
}

bool etcd_client_maybe_sent(const struct etcd_client *c)
{
	return c->maybe_sent;
}

/* The first key of the first range among a txn's responses into *got. */
static void txn_range(json_object *root, struct etcd_kv *got)
{
	json_object *res, *rr, *kvs;

	if (json_object_object_get_ex(root, "responses", &res) &&
	    json_object_is_type(res, json_type_array) && json_object_array_length(res) &&
	    json_object_object_get_ex(json_object_array_get_idx(res, 0), "response_range", &rr) &&
	    json_object_object_get_ex(rr, "kvs", &kvs) &&
	    json_object_is_type(kvs, json_type_array) && json_object_array_length(kvs) &&
	    parse_kv(json_object_array_get_idx(kvs, 0), got)) {
		free(got->key);
		free(got->value);
		memset(got, 0, sizeof(*got));
	}
}

int etcd_txn(struct etcd_client *c, const char *body, int64_t *rev, bool *succeeded,
	     struct etcd_kv *got, char *err, size_t errlen)
{
	json_object *root, *hdr, *m;

	if (got)
		memset(got, 0, sizeof(*got));
	root = post(c, "/v3/kv/txn", body, err, errlen);
	if (!root)
		return -1;
	if (!json_object_object_get_ex(root, "header", &hdr)) {
		gw_error(root, "txn", err, errlen);
		json_object_put(root);
		return -1;
	}
	*rev = jint64(hdr, "revision");
	/* false is proto3's default: left out of the JSON. */
	*succeeded = json_object_object_get_ex(root, "succeeded", &m) && json_object_get_boolean(m);
	if (got)
		txn_range(root, got);
	json_object_put(root);
	return 0;
}

int etcd_lease_grant(struct etcd_client *c, int64_t ttl_s, int64_t *id, char *err, size_t errlen)
{
	char body[64];
	json_object *root;

	snprintf(body, sizeof(body), "{\"TTL\":%lld}", (long long)ttl_s);
	root = post(c, "/v3/lease/grant", body, err, errlen);
	if (!root)
		return -1;
	*id = jint64(root, "ID");
	if (!*id)
		gw_error(root, "lease grant", err, errlen);
	json_object_put(root);
	return *id ? 0 : -1;
}

int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl, char *err, size_t errlen)
{
	char body[64];
	json_object *root, *res;

	/* A stream in gRPC; one request in the body gets one answer. */
	snprintf(body, sizeof(body), "{\"ID\":%lld}", (long long)id);
	root = post(c, "/v3/lease/keepalive", body, err, errlen);
	if (!root)
		return -1;
	if (!json_object_object_get_ex(root, "result", &res)) {
		gw_error(root, "lease keepalive", err, errlen);
		json_object_put(root);
		return -1;
	}
	*ttl = jint64(res, "TTL");
	json_object_put(root);
	return 0;
}

void etcd_lease_revoke(struct etcd_client *c, int64_t id)
{
	char body[64], err[200];

	snprintf(body, sizeof(body), "{\"ID\":%lld}", (long long)id);
	json_object_put(post(c, "/v3/lease/revoke", body, err, sizeof(err)));
}

int etcd_put(struct etcd_client *c, const char *key, const char *value, int64_t lease, char *err,
	     size_t errlen)
{
	json_object *req = json_object_new_object(), *root;
	char *k = etcd_b64(key, strlen(key)), *v = etcd_b64(value, strlen(value));
	int r = -1;

	if (k && v) {
		json_object_object_add(req, "key", json_object_new_string(k));
		json_object_object_add(req, "value", json_object_new_string(v));
		if (lease)
			json_object_object_add(req, "lease", json_object_new_int64(lease));
		root = post(c, "/v3/kv/put", json_object_to_json_string(req), err, errlen);
		if (root && json_object_object_get_ex(root, "header", NULL))
			r = 0;
		else if (root)
			gw_error(root, "put", err, errlen);
		json_object_put(root);
	} else {
		snprintf(err, errlen, "out of memory");
	}
	free(k);
	free(v);
	json_object_put(req);
	return r;
}

struct watch_ctx {
	struct buf b;
	int (*cb)(const struct etcd_watch_msg *m, void *arg);
	void *arg;
	int ret;
	char *err;
	size_t errlen;
};

/* One streamed message: {"result": {header, events, created, canceled, compact_revision}}. */
static int watch_msg(struct watch_ctx *w, const char *line)
{
	json_object *root = json_tokener_parse(line), *res, *evs, *m;
	struct etcd_watch_msg msg = {0};
	size_t i, n;
	int r;

	if (!root) {
		const char *c = line;

		while (*c == ' ' || *c == '\t' || *c == '\r')
			c++;
		if (!*c)
			return 0; /* blank keep-alive line */
		/* A message lost to garbling may have carried a change: no
		 * event after it can be trusted to complete the map.
		 */
		snprintf(w->err, w->errlen, "watch: a message from etcd is not JSON (%.60s)", c);
		return ETCD_WATCH_REREAD;
	}
	if (!json_object_object_get_ex(root, "result", &res)) {
		json_object *e;

		if (json_object_object_get_ex(root, "error", &e))
			gw_error(json_object_is_type(e, json_type_object) ? e : root, "watch",
				 w->err, w->errlen);
		else
			gw_error(root, "watch", w->err, w->errlen);
		json_object_put(root);
		return -1;
	}
	msg.revision = json_object_object_get_ex(res, "header", &m) ? jint64(m, "revision") : 0;
	msg.created = json_object_object_get_ex(res, "created", &m) && json_object_get_boolean(m);
	msg.compacted = jint64(res, "compact_revision") > 0;
	if (json_object_object_get_ex(res, "canceled", &m) && json_object_get_boolean(m) &&
	    !msg.compacted) {
		snprintf(w->err, w->errlen, "watch canceled by etcd: %.200s",
			 json_object_object_get_ex(res, "cancel_reason", &m)
				 ? json_object_get_string(m)
				 : "no reason given");
		json_object_put(root);
		return -1;
	}
	n = json_object_object_get_ex(res, "events", &evs) ? json_object_array_length(evs) : 0;
	msg.events = calloc(n ? n : 1, sizeof(*msg.events));
	if (!msg.events) {
		json_object_put(root);
		snprintf(w->err, w->errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		json_object *ev = json_object_array_get_idx(evs, i), *kv, *t;

		if (!json_object_object_get_ex(ev, "kv", &kv) || parse_kv(kv, &msg.events[i])) {
			etcd_kvs_free(msg.events, i + 1);
			json_object_put(root);
			snprintf(w->err, w->errlen, "watch: bad event from etcd");
			return -1;
		}
		/* PUT is the default and left out; DELETE is named. */
		if (json_object_object_get_ex(ev, "type", &t) &&
		    !strcmp(json_object_get_string(t), "DELETE")) {
			free(msg.events[i].value);
			msg.events[i].value = NULL;
		}
	}
	msg.n = n;
	r = w->cb(&msg, w->arg);
	etcd_kvs_free(msg.events, n);
	json_object_put(root);
	return r;
}

/* The gateway separates streamed messages with newlines. */
static size_t watch_data(char *data, size_t sz, size_t nm, void *arg)
{
	struct watch_ctx *w = arg;
	size_t n = sz * nm, start = 0, i;

	if (collect(data, sz, nm, &w->b) != n)
		return 0;
	for (i = 0; i < w->b.len; i++) {
		if (w->b.p[i] != '\n')
			continue;
		w->b.p[i] = '\0';
		w->ret = watch_msg(w, w->b.p + start);
		start = i + 1;
		if (w->ret)
			return 0; /* ends the transfer */
	}
	memmove(w->b.p, w->b.p + start, w->b.len - start);
	w->b.len -= start;
	return n;
}

int etcd_watch_prefix(struct etcd_client *c, const char *prefix, int64_t start_rev,
		      int (*cb)(const struct etcd_watch_msg *m, void *arg), void *arg, char *err,
		      size_t errlen)
{
	json_object *req = json_object_new_object(), *cr = json_object_new_object();
	struct watch_ctx w = {.cb = cb, .arg = arg, .err = err, .errlen = errlen};
	struct curl_slist *hdrs = NULL;
	char url[600];
	CURLcode cc;
	CURL *h;

	err[0] = '\0';
	atomic_store(&c->abort, false);
	if (etcd_add_prefix(cr, prefix)) {
		json_object_put(cr);
		json_object_put(req);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_object_object_add(cr, "start_revision", json_object_new_int64(start_rev));
	json_object_object_add(req, "create_request", cr);
	h = easy(c, "/v3/watch", json_object_to_json_string(req), &hdrs, url, sizeof(url));
	if (!h) {
		json_object_put(req);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, watch_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &w);
	cc = curl_easy_perform(h);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	json_object_put(req);
	free(w.b.p);
	if (w.ret > 0)
		return w.ret;
	if (c->stop && atomic_load(c->stop))
		return 0;
	if (w.ret < 0)
		return -1;
	if (atomic_load(&c->abort))
		snprintf(err, errlen, "%s: %s", url, c->abort_why);
	if (!err[0])
		snprintf(err, errlen, "%s: %s", url,
			 cc == CURLE_OK ? "watch ended" : curl_easy_strerror(cc));
	c->cur = (c->cur + 1) % c->n_eps;
	return -1;
}
