// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The exporter-toolkit web configuration; see web_config.h. */
#include <crypt.h>
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "metrics/web_config.h"

/* The last user and password that matched, for web_config_auth(); under auth_lock. */
static pthread_mutex_t auth_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ok_user, *ok_pass;
static const struct web_config *ok_wc;

/* A PEM file is small: a certificate chain, a key. */
#define PEM_MAX (1 << 20)

static char *read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(PEM_MAX + 1);
	n = buf ? fread(buf, 1, PEM_MAX + 1, f) : 0;
	fclose(f);
	if (!buf || n > PEM_MAX || n == 0) {
		snprintf(err, errlen, "%s: %s", path,
			 !buf ? "out of memory"
			 : n  ? "larger than 1 MiB"
			      : "empty");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* PEM contents of NAME (relative: to the web config's directory). */
static char *read_pem(const char *cfg_path, const char *name, char *err, size_t errlen)
{
	char dir[4096], path[4096 + 256];

	if (name[0] == '/') {
		snprintf(path, sizeof(path), "%s", name);
	} else {
		snprintf(dir, sizeof(dir), "%s", cfg_path);
		snprintf(path, sizeof(path), "%s/%s", dirname(dir), name);
	}
	return read_file(path, err, errlen);
}

static const char *scalar(yaml_document_t *doc, yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A bcrypt hash crypt(3) takes: $2a$, $2b$ or $2y$ (htpasswd -B, Go's bcrypt). */
static bool bcrypt_ok(const char *hash)
{
	struct crypt_data *cd;
	const char *out;
	bool ok;

	if (strncmp(hash, "$2a$", 4) && strncmp(hash, "$2b$", 4) && strncmp(hash, "$2y$", 4))
		return false;
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	out = crypt_r("", hash, cd);
	ok = out && out[0] != '*' && strlen(out) == strlen(hash);
	free(cd);
	return ok;
}

static int load_tls(const char *path, yaml_document_t *doc, yaml_node_t *map, struct web_config *wc,
		    char *err, size_t errlen)
{
	const char *cert = NULL, *key = NULL;
	yaml_node_pair_t *p;

	if (map->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "%s: tls_server_config: want a mapping", path);
		return -EINVAL;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(doc, yaml_document_get_node(doc, p->key));
		const char *v = scalar(doc, yaml_document_get_node(doc, p->value));

		if (k && !strcmp(k, "cert_file") && v)
			cert = v;
		else if (k && !strcmp(k, "key_file") && v)
			key = v;
		else {
			snprintf(
				err, errlen,
				"%s: tls_server_config: %s%s%s: not supported by maglevd (it takes "
				"cert_file and key_file)",
				path, k ? "'" : "", k ? k : "a key that is no string",
				k ? "'" : "");
			return -EINVAL;
		}
	}
	if (!cert || !key || !cert[0] || !key[0]) {
		snprintf(err, errlen, "%s: tls_server_config needs cert_file and key_file", path);
		return -EINVAL;
	}
	wc->cert_pem = read_pem(path, cert, err, errlen);
	wc->key_pem = wc->cert_pem ? read_pem(path, key, err, errlen) : NULL;
	return wc->key_pem ? 0 : -EINVAL;
}

static int load_users(const char *path, yaml_document_t *doc, yaml_node_t *map,
		      struct web_config *wc, char *err, size_t errlen)
{
	yaml_node_pair_t *p;

	if (map->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "%s: basic_auth_users: want a mapping of user: bcrypt hash",
			 path);
		return -EINVAL;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *u = scalar(doc, yaml_document_get_node(doc, p->key));
		const char *h = scalar(doc, yaml_document_get_node(doc, p->value));

		if (!u || !u[0] || strchr(u, ':')) {
			snprintf(err, errlen,
				 "%s: basic_auth_users: a user name is empty or holds ':'", path);
			return -EINVAL;
		}
		if (!h || !bcrypt_ok(h)) {
			snprintf(err, errlen,
				 "%s: basic_auth_users: %s: not a bcrypt hash ($2a$, $2b$ or $2y$; "
				 "htpasswd -nBC 10 USER makes one)",
				 path, u);
			return -EINVAL;
		}
		if (wc->nusers == WEB_CONFIG_MAX_USERS) {
			snprintf(err, errlen, "%s: basic_auth_users: more than %d users", path,
				 WEB_CONFIG_MAX_USERS);
			return -EINVAL;
		}
		wc->users[wc->nusers].name = strdup(u);
		wc->users[wc->nusers].hash = strdup(h);
		if (!wc->users[wc->nusers].name || !wc->users[wc->nusers].hash) {
			wc->nusers++;
			snprintf(err, errlen, "%s: out of memory", path);
			return -ENOMEM;
		}
		wc->nusers++;
	}
	return 0;
}

int web_config_load(const char *path, struct web_config *wc, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *p;
	FILE *f;
	int r = 0;

	memset(wc, 0, sizeof(*wc));
	f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "web config %s: %s", path, strerror(errno));
		return -errno;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "%s: want a mapping (tls_server_config, basic_auth_users)",
			 path);
		r = -EINVAL;
	}
	for (p = root && !r ? root->data.mapping.pairs.start : NULL;
	     p && p < root->data.mapping.pairs.top && !r; p++) {
		const char *k = scalar(&doc, yaml_document_get_node(&doc, p->key));
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);

		if (k && !strcmp(k, "tls_server_config"))
			r = load_tls(path, &doc, v, wc, err, errlen);
		else if (k && !strcmp(k, "basic_auth_users"))
			r = load_users(path, &doc, v, wc, err, errlen);
		else {
			snprintf(err, errlen,
				 "%s: %s%s%s: not supported by maglevd (it takes tls_server_config "
				 "and basic_auth_users)",
				 path, k ? "'" : "", k ? k : "a key that is no string",
				 k ? "'" : "");
			r = -EINVAL;
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (r)
		web_config_free(wc);
	return r;
}

void web_config_free(struct web_config *wc)
{
	unsigned int i;

	/* Users may change with the next file: what matched before proves nothing then. */
	pthread_mutex_lock(&auth_lock);
	if (ok_wc == wc)
		ok_wc = NULL;
	pthread_mutex_unlock(&auth_lock);

	free(wc->cert_pem);
	free(wc->key_pem);
	for (i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	memset(wc, 0, sizeof(*wc));
}

/*
 * One bcrypt at a time (tens of ms of CPU each): a client that tries
 * passwords as fast as it can takes at most one CPU from forwarding and the
 * event loop. The last pair that matched is remembered, so that a scraper
 * pays one bcrypt, not one a scrape (exporter-toolkit caches alike).
 */

/* Equal strings, in time that depends on their lengths only. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

bool web_config_auth(const struct web_config *wc, const char *user, const char *password)
{
	/* An unknown user costs one bcrypt too: the time does not tell who exists. */
	static const char dummy[] = "$2b$10$abcdefghijklmnopqrstuu5Cb1ngi3u0RW8wCNZ7OIK4B8r3Zcu4.";
	const char *hash = dummy, *out;
	struct crypt_data *cd;
	unsigned int i;
	bool ok;

	pthread_mutex_lock(&auth_lock);
	if (ok_wc == wc && ok_user && same(ok_user, user) && same(ok_pass, password)) {
		pthread_mutex_unlock(&auth_lock);
		return true;
	}
	for (i = 0; i < wc->nusers; i++)
		if (!strcmp(wc->users[i].name, user))
			hash = wc->users[i].hash;
	cd = calloc(1, sizeof(*cd));
	out = cd ? crypt_r(password, hash, cd) : NULL;
	ok = hash != dummy && out && strlen(out) == strlen(hash) && same(out, hash);
	free(cd);
	if (ok) {
		free(ok_user);
		free(ok_pass);
		ok_user = strdup(user);
		ok_pass = strdup(password);
		ok_wc = ok_user && ok_pass ? wc : NULL;
	}
	pthread_mutex_unlock(&auth_lock);
	return ok;
}
