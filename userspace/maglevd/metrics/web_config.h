/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The metrics endpoint's web configuration, in the format of Prometheus's
 * exporter-toolkit (--web.config.file), so that one file serves maglevd and
 * the other exporters of a host:
 *
 *   tls_server_config:
 *     cert_file: /etc/maglev/metrics.crt   # relative paths: to the file's directory
 *     key_file: /etc/maglev/metrics.key
 *   basic_auth_users:
 *     prometheus: $2y$10$...               # bcrypt (htpasswd -B), checked with crypt(3)
 *
 * What maglevd does not implement (client certificates, cipher and version
 * choices, http_server_config) is refused by name rather than ignored.
 */
#ifndef MAGLEVD_WEB_CONFIG_H
#define MAGLEVD_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define WEB_CONFIG_MAX_USERS 64

struct web_config {
	char *cert_pem, *key_pem; /* both NULL: plain HTTP */
	unsigned int nusers;	  /* 0: no authentication */
	struct {
		char *name, *hash;
	} users[WEB_CONFIG_MAX_USERS];
};

/* Read and check PATH (certificate and key read, hashes checked); 0 or -errno, err says what and
 * where. */
int web_config_load(const char *path, struct web_config *wc, char *err, size_t errlen);
void web_config_free(struct web_config *wc);
/* Whether USER with PASSWORD is one of the basic_auth_users (bcrypt: tens of ms). Any thread. */
bool web_config_auth(const struct web_config *wc, const char *user, const char *password);

#endif /* MAGLEVD_WEB_CONFIG_H */
