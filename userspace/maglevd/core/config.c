// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "ctl_proto.h"
#include "health/hc_udp.h"
#include "core/log.h"
#include "maglev_conn.h"
#include "maglev_maps.h"
#include "maglev_hot.h"
#include "maglev_second.h"
#include "maglev_table.h"

#define CFG_MAX_FILE (1u << 20)

void config_defaults(struct maglevd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed.k0 = MAGLEV_DEFAULT_SEED_K0;
	cfg->seed.k1 = MAGLEV_DEFAULT_SEED_K1;
	cfg->seed_default = true;
	cfg->nexthop_auto = true;
	cfg->udp_idle_ms = 30000;
	cfg->new_flow_limit = MAGLEV_NEW_FLOW_LIMIT_DEFAULT;
	cfg->slow_path_limit = MAGLEV_SLOW_PATH_LIMIT_DEFAULT;
	cfg->tcp_closed_ms = MAGLEV_TCP_CLOSED_NS_DEFAULT / 1000000;
	cfg->second_chance_ms = MAGLEV_SECOND_CHANCE_MS_DEFAULT;
	cfg->damping_suppress = 2000;
	cfg->damping_reuse = 750;
	cfg->damping_half_life_ms = 15000;
	cfg->conn_table_size = MAGLEV_CONN_TABLE_SIZE;
	cfg->max_vips = MAGLEV_MAX_VIPS;
	cfg->max_backends_per_vip = 4096;
	cfg->hc.type = HC_TCP;
	cfg->hc.status = 200;
	strcpy(cfg->hc.path, "/");
	cfg->hc.interval_ms = 2000;
	cfg->hc.timeout_ms = 1000;
	cfg->hc.rise = 2;
	cfg->hc.fall = 3;
	cfg->hc_via_encap = true;
	strcpy(cfg->metrics_listen, "127.0.0.1:9478");
	cfg->metrics_per_backend = true;
	cfg->hot_flows_sample = MAGLEV_HOT_SAMPLE_DEFAULT;
	cfg->hot_flows_metrics_top = 5;
	strcpy(cfg->state_file, "/var/lib/maglev/state.json");
	strcpy(cfg->control_socket, CTL_DEFAULT_SOCKET);
	strcpy(cfg->pin_dir, MAGLEV_PIN_DIR);
	cfg->log_level = LOG_INFO;
	cfg->announce_protocol = 250;
	cfg->announce_min_backends = 1;
	cfg->announce_stop_grace_ms = 5000;
	cfg->health_fleet_max_age_ms = 15000;
	strcpy(cfg->fleet_prefix, "/maglev/");
	if (gethostname(cfg->fleet_node, sizeof(cfg->fleet_node)))
		strcpy(cfg->fleet_node, "maglevd");
	cfg->fleet_node[sizeof(cfg->fleet_node) - 1] = '\0';
}

/* fleet_etcd: http:// or https:// URLs, comma-separated, no spaces. */
static int check_endpoints(const char *v, char *e, size_t elen)
{
	const char *p = v;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (!n || (strncmp(p, "http://", 7) && strncmp(p, "https://", 8)) ||
		    memchr(p, ' ', n)) {
			snprintf(e, elen,
				 "want comma-separated http:// or https:// URLs, got '%.*s'",
				 (int)(n > 80 ? 80 : n), p);
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* The datagram checks' settings: well-formed whatever the type (they are
 * kept), present for the type that needs them.
 */
static int hc_udp_params_check(const struct hc_params *p, char *err, size_t errlen)
{
	uint8_t buf[HC_UDP_MAX];
	char e[80];
	int n;

	n = hc_udp_decode(p->payload, buf, sizeof(buf), e, sizeof(e));
	if (n < 0) {
		snprintf(err, errlen, "UDP check payload: %s", e);
		return -EINVAL;
	}
	if (!n && p->type == HC_UDP) {
		snprintf(err, errlen,
			 "a udp check needs a payload to send (check_payload / "
			 "health_udp_payload)");
		return -EINVAL;
	}
	if (hc_udp_decode(p->expect, buf, sizeof(buf), e, sizeof(e)) < 0) {
		snprintf(err, errlen, "UDP check expect: %s", e);
		return -EINVAL;
	}
	if (hc_udp_decode(p->body, buf, sizeof(buf), e, sizeof(e)) < 0) {
		snprintf(err, errlen, "HTTP check body: %s", e);
		return -EINVAL;
	}
	if (p->dns_name[0] && !hc_dns_name_ok(p->dns_name)) {
		snprintf(err, errlen,
			 "DNS check name '%.60s' is not a host name (dotted labels of letters, "
			 "digits, '-' and '_', 1..63 bytes each)",
			 p->dns_name);
		return -EINVAL;
	}
	if (!p->dns_name[0] && p->type == HC_DNS) {
		snprintf(err, errlen,
			 "a dns check needs a name to query (check_dns_name / health_dns_name)");
		return -EINVAL;
	}
	return 0;
}

int hc_params_check(const struct hc_params *p, char *err, size_t errlen)
{
	if (p->interval_ms < 100 || p->interval_ms > 3600000) {
		snprintf(err, errlen, "health-check interval must be 100..3600000 ms");
		return -EINVAL;
	}
	if (p->timeout_ms < 10 || p->timeout_ms > p->interval_ms) {
		snprintf(err, errlen, "health-check timeout must be 10 ms..interval (%u ms)",
			 p->interval_ms);
		return -EINVAL;
	}
	if (p->rise < 1 || p->rise > 100 || p->fall < 1 || p->fall > 100) {
		snprintf(err, errlen, "health-check rise and fall must be 1..100");
		return -EINVAL;
	}
	if (p->status < 100 || p->status > 599) {
		snprintf(err, errlen, "expected HTTP status must be 100..599");
		return -EINVAL;
	}
	if (!hc_http_path_ok(p->path)) {
		snprintf(err, errlen,
			 "HTTP check path must start with '/' and hold no spaces or control "
			 "characters");
		return -EINVAL;
	}
	if (p->host[0] && !hc_http_host_ok(p->host)) {
		snprintf(err, errlen,
			 "HTTP check host '%.60s' is not a host name (dotted labels of letters, "
			 "digits, '-' and '_')",
			 p->host);
		return -EINVAL;
	}
	if (p->ca_file[0] && !hc_ca_file_ok(p->ca_file)) {
		snprintf(err, errlen, "HTTPS check CA file '%.60s' must be an absolute path",
			 p->ca_file);
		return -EINVAL;
	}
	return hc_udp_params_check(p, err, errlen);
}

static int parse_hex64(const char *s, __u64 *out)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 16; i++) {
		int c = s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	/* Exactly xx:xx:xx:xx:xx:xx: sscanf alone would take "-1" or " 1". */
	if (strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 17; i++)
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return -EINVAL;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/* "203.0.113.0/24" or "2001:db8:1::/64"; family must match want. */
static int parse_prefix(const char *s, int want, uint32_t *addr, uint32_t *plen)
{
	char host[64];
	const char *slash = strchr(s, '/');
	uint64_t len;
	char e[64];
	int max = want == AF_INET ? 32 : 128;

	if (!slash || (size_t)(slash - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, (size_t)(slash - s));
	host[slash - s] = '\0';
	if (inet_pton(want, host, addr) != 1)
		return -EINVAL;
	if (ctl_parse_uint(slash + 1, "prefix length", 0, (uint64_t)max, &len, e, sizeof(e)))
		return -EINVAL;
	*plen = (uint32_t)len;
	return 0;
}

static int set_string(char *dst, size_t cap, const char *v)
{
	if (strlen(v) >= cap)
		return -ENAMETOOLONG;
	strcpy(dst, v);
	return 0;
}

/* One health-check default (hc_fields.h); e says what a bad value wants. */
static int hc_conf_apply(struct hc_params *hc, const struct hc_field *f, const char *val, char *e,
			 size_t elen)
{
	uint64_t u;
	int r;

	if (f->kind == HCK_UINT) {
		if (ctl_parse_uint(val, f->conf, f->conf_lo, f->hi, &u, e, elen))
			return -EINVAL;
		hc_field_set_uint(hc, f, (uint32_t)u);
		return 0;
	}
	if (f->conf_ok && !f->conf_ok(val)) {
		snprintf(e, elen, "%s", f->conf_want);
		return -EINVAL;
	}
	r = hc_field_set_str(hc, f, val);
	if (r == -EINVAL)
		snprintf(e, elen, "want %s", f->choices);
	return r;
}

#define U(key_name, field, lo, hi)                                           \
	else if (!strcmp(key, key_name))                                     \
	{                                                                    \
		if (ctl_parse_uint(val, key_name, lo, hi, &u, e, sizeof(e))) \
			goto bad_value;                                      \
		field = u;                                                   \
	}

/* ctl_parse_uint's "bad KEY 'VAL': why" without the key and value, which the
 * config error names already: "why".
 */
static const char *reason_only(const char *e, const char *key, const char *val)
{
	const char *p = e;

	if (strncmp(p, "bad ", 4))
		return e;
	p += 4;
	if (strncmp(p, key, strlen(key)))
		return e;
	p += strlen(key);
	if (strncmp(p, " '", 2) || strncmp(p + 2, val, strlen(val)))
		return e;
	p += 2 + strlen(val);
	return strncmp(p, "': ", 3) ? e : p + 3;
}

/* Apply one "key value" line. */
static int config_apply(struct maglevd_config *cfg, char *key, char *val, char *err, size_t errlen)
{
	const struct hc_field *hf;
	char e[160] = "";
	const char *why;
	uint64_t u;

	if (!*val) {
		snprintf(err, errlen, "'%.40s' needs a value", key);
		return -EINVAL;
	}
	if (!strcmp(key, "interface") || !strcmp(key, "interfaces")) {
		char *save = NULL, *tok;

		for (tok = strtok_r(val, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
			if (strlen(tok) >= IF_NAMESIZE) {
				snprintf(err, errlen, "interface name '%s' too long", tok);
				return -EINVAL;
			}
			if (config_has_iface(cfg, tok))
				continue;
			if (cfg->n_ifaces == CFG_MAX_IFACES) {
				snprintf(err, errlen, "more than %d interfaces", CFG_MAX_IFACES);
				return -EINVAL;
			}
			strcpy(cfg->ifaces[cfg->n_ifaces++], tok);
		}
	} else if (!strcmp(key, "xdp_mode")) {
		if (!strcmp(val, "native"))
			cfg->xdp_generic = false;
		else if (!strcmp(val, "generic"))
			cfg->xdp_generic = true;
		else {
			snprintf(e, sizeof(e), "want native or generic");
			goto bad_value;
		}
	} else if (!strcmp(key, "seed")) {
		if (strlen(val) != 32 || parse_hex64(val, &cfg->seed.k0) ||
		    parse_hex64(val + 16, &cfg->seed.k1)) {
			snprintf(e, sizeof(e), "want 32 hex digits (128 bits)");
			goto bad_value;
		}
		cfg->seed_default = false;
	} else if (!strcmp(key, "nexthop_mac")) {
		if (!strcmp(val, "auto")) {
			cfg->nexthop_auto = true;
		} else if (parse_mac(val, cfg->nexthop_mac)) {
			snprintf(e, sizeof(e), "want aa:bb:cc:dd:ee:ff or auto");
			goto bad_value;
		} else {
			cfg->nexthop_auto = false;
		}
	} else if (!strcmp(key, "src4_prefix")) {
		if (parse_prefix(val, AF_INET, &cfg->src4_prefix, &cfg->src4_plen)) {
			snprintf(e, sizeof(e), "want an IPv4 prefix like 203.0.113.0/24");
			goto bad_value;
		}
		cfg->src4_set = true;
	} else if (!strcmp(key, "src6_prefix")) {
		if (parse_prefix(val, AF_INET6, cfg->src6_prefix, &cfg->src6_plen)) {
			snprintf(e, sizeof(e), "want an IPv6 prefix like 2001:db8:ff::/64");
			goto bad_value;
		}
		cfg->src6_set = true;
	}
	U("mtu", cfg->mtu, 0, 65535)
	U("new_flow_limit", cfg->new_flow_limit, 0, UINT32_MAX)
	U("slow_path_limit", cfg->slow_path_limit, 0, UINT32_MAX)
	U("udp_idle_timeout_ms", cfg->udp_idle_ms, 1000, 86400000)
	U("tcp_closed_timeout_ms", cfg->tcp_closed_ms, 100, 86400000)
	U("second_chance_ms", cfg->second_chance_ms, 100, 86400000)
	U("settle_ms", cfg->settle_ms, 0, 86400000)
	U("slow_start_ms", cfg->slow_start_ms, 0, 86400000)
	U("damping_penalty", cfg->damping_penalty, 0, 100000)
	U("damping_suppress", cfg->damping_suppress, 1, 1000000)
	U("damping_reuse", cfg->damping_reuse, 1, 1000000)
	U("damping_half_life_ms", cfg->damping_half_life_ms, 1000, 86400000)
	U("conn_table_size", cfg->conn_table_size, 1024, 1u << 28)
	U("max_vips", cfg->max_vips, 1, MAGLEV_MAX_VIPS)
	U("max_backends_per_vip", cfg->max_backends_per_vip, 1, MAGLEV_MAX_BACKENDS - 1)
	U("announce_min_backends", cfg->announce_min_backends, 1, 65535)
	U("announce_stop_grace_ms", cfg->announce_stop_grace_ms, 0, 600000)
	U("health_fleet_max_age_ms", cfg->health_fleet_max_age_ms, 0, 86400000)
	else if (!strcmp(key, "announce_table"))
	{
		if (!strcmp(val, "off")) {
			cfg->announce_table = 0;
		} else if (ctl_parse_uint(val, key, 1, UINT32_MAX, &u, e, sizeof(e))) {
			goto bad_value;
		} else if (u >= 253 && u <= 255) {
			/* The kernel's own default, main and local tables: routes there
			 * would steer this host's traffic, not only signal readiness.
			 */
			snprintf(e, sizeof(e),
				 "253, 254 and 255 are the kernel's default, main "
				 "and local tables: take a table of its own");
			goto bad_value;
		} else {
			cfg->announce_table = (uint32_t)u;
		}
	}
	else if (!strcmp(key, "announce_protocol"))
	{
		if (ctl_parse_uint(val, key, 5, 255, &u, e, sizeof(e)))
			goto bad_value;
		/* Routing daemons take routes of their own protocol for their own. */
		if (u == 11 || u == 12 || (u >= 186 && u <= 192)) {
			snprintf(e, sizeof(e),
				 "%llu belongs to a routing daemon (zebra, bird, frr)",
				 (unsigned long long)u);
			goto bad_value;
		}
		cfg->announce_protocol = (uint32_t)u;
	}
	else if ((hf = hc_field_by_conf(key)))
	{
		int r = hc_conf_apply(&cfg->hc, hf, val, e, sizeof(e));

		if (r == -ENAMETOOLONG)
			goto too_long;
		if (r)
			goto bad_value;
	}
	else if (!strcmp(key, "health_via_encap"))
	{
		if (strcmp(val, "yes") && strcmp(val, "no")) {
			snprintf(e, sizeof(e), "want yes or no");
			goto bad_value;
		}
		cfg->hc_via_encap = !strcmp(val, "yes");
	}
	else if (!strcmp(key, "hot_flows"))
	{
		if (strcmp(val, "on") && strcmp(val, "off")) {
			snprintf(e, sizeof(e), "want on or off");
			goto bad_value;
		}
		cfg->hot_flows = !strcmp(val, "on");
	}
	U("hot_flows_sample", cfg->hot_flows_sample, 1, 65536)
	U("hot_flows_threshold", cfg->hot_flows_threshold, 0, 100)
	U("hot_flows_metrics_top", cfg->hot_flows_metrics_top, 0, 20)
	else if (!strcmp(key, "metrics_per_backend"))
	{
		if (strcmp(val, "yes") && strcmp(val, "no")) {
			snprintf(e, sizeof(e), "want yes or no");
			goto bad_value;
		}
		cfg->metrics_per_backend = !strcmp(val, "yes");
	}
	else if (!strcmp(key, "metrics_listen"))
	{
		struct ctl_addr a;
		uint16_t port;

		if (!strcmp(val, "off")) {
			cfg->metrics_listen[0] = '\0';
		} else if (ctl_parse_endpoint(val, &a, &port, e, sizeof(e))) {
			goto bad_value;
		} else if (set_string(cfg->metrics_listen, sizeof(cfg->metrics_listen), val)) {
			goto too_long;
		}
	}
	else if (!strcmp(key, "metrics_web_config"))
	{
		if (!strcmp(val, "none")) {
			cfg->metrics_web_config[0] = '\0';
		} else if (val[0] != '/') {
			snprintf(e, sizeof(e), "want an absolute path or none");
			goto bad_value;
		} else if (set_string(cfg->metrics_web_config, sizeof(cfg->metrics_web_config),
				      val)) {
			goto too_long;
		}
	}
	else if (!strcmp(key, "fleet_etcd"))
	{
		if (check_endpoints(val, e, sizeof(e)))
			goto bad_value;
		if (set_string(cfg->fleet_etcd, sizeof(cfg->fleet_etcd), val))
			goto too_long;
	}
	else if (!strcmp(key, "fleet_prefix"))
	{
		size_t n = strlen(val);

		if (val[0] != '/' || val[n - 1] != '/' || strpbrk(val, " \"")) {
			snprintf(e, sizeof(e), "want a key prefix starting and ending with '/'");
			goto bad_value;
		}
		if (set_string(cfg->fleet_prefix, sizeof(cfg->fleet_prefix), val))
			goto too_long;
	}
	else if (!strcmp(key, "fleet_node"))
	{
		size_t i;

		for (i = 0; val[i]; i++)
			if (!isalnum((unsigned char)val[i]) && !strchr("-_.", val[i]))
				break;
		if (val[i]) {
			snprintf(e, sizeof(e), "want letters, digits, '-', '_' or '.'");
			goto bad_value;
		}
		if (set_string(cfg->fleet_node, sizeof(cfg->fleet_node), val))
			goto too_long;
	}
	else if (!strcmp(key, "health_scope"))
	{
		if (strcmp(val, "local") && strcmp(val, "fleet")) {
			snprintf(e, sizeof(e), "want local or fleet");
			goto bad_value;
		}
		cfg->health_fleet = !strcmp(val, "fleet");
	}
	else if (!strcmp(key, "fleet_etcd_ca") || !strcmp(key, "fleet_etcd_cert") ||
		 !strcmp(key, "fleet_etcd_key"))
	{
		char *dst = !strcmp(key, "fleet_etcd_ca")     ? cfg->fleet_ca
			    : !strcmp(key, "fleet_etcd_cert") ? cfg->fleet_cert
							      : cfg->fleet_key;

		if (val[0] != '/') {
			snprintf(e, sizeof(e), "want an absolute path");
			goto bad_value;
		}
		if (set_string(dst, CFG_PATH_MAX, val))
			goto too_long;
	}
	else if (!strcmp(key, "state_file"))
	{
		if (val[0] != '/') {
			snprintf(e, sizeof(e), "want an absolute path");
			goto bad_value;
		}
		if (set_string(cfg->state_file, sizeof(cfg->state_file), val))
			goto too_long;
	}
	else if (!strcmp(key, "control_socket"))
	{
		if (val[0] != '/') {
			snprintf(e, sizeof(e), "want an absolute path");
			goto bad_value;
		}
		if (set_string(cfg->control_socket, sizeof(cfg->control_socket), val))
			goto too_long;
	}
	else if (!strcmp(key, "control_group"))
	{
		struct group *g = getgrnam(val);

		if (!g) {
			snprintf(e, sizeof(e), "no such group");
			goto bad_value;
		}
		if (set_string(cfg->control_group, sizeof(cfg->control_group), val))
			goto too_long;
		cfg->has_group = true;
		cfg->control_gid = g->gr_gid;
	}
	else if (!strcmp(key, "pin_dir"))
	{
		if (val[0] != '/') {
			snprintf(e, sizeof(e), "want an absolute path");
			goto bad_value;
		}
		if (set_string(cfg->pin_dir, sizeof(cfg->pin_dir), val))
			goto too_long;
	}
	else if (!strcmp(key, "log_level"))
	{
		int l = log_parse_level(val);

		if (l < 0) {
			snprintf(e, sizeof(e), "want err, warn, info or debug");
			goto bad_value;
		}
		cfg->log_level = l;
	}
	else
	{
		snprintf(err, errlen, "unknown key '%.40s'", key);
		return -EINVAL;
	}
	return 0;

bad_value:
	why = reason_only(e, key, val);
	snprintf(err, errlen, "bad value '%.60s' for %.40s%s%s", val, key, why[0] ? ": " : "", why);
	return -EINVAL;
too_long:
	snprintf(err, errlen, "value of %.40s too long", key);
	return -EINVAL;
}

int config_parse(const char *text, size_t len, struct maglevd_config *cfg, char *err, size_t errlen)
{
	char line[1024], e[200];
	size_t pos = 0;
	int lineno = 0;

	while (pos < len) {
		size_t n = 0;
		char *p, *key, *val, *end;

		lineno++;
		while (pos < len && text[pos] != '\n') {
			if (n + 1 >= sizeof(line)) {
				snprintf(err, errlen, "line %d: too long", lineno);
				return -EINVAL;
			}
			if (text[pos] == '\0') {
				snprintf(err, errlen, "line %d: NUL byte", lineno);
				return -EINVAL;
			}
			line[n++] = text[pos++];
		}
		pos++;
		line[n] = '\0';
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		key = line;
		while (isspace((unsigned char)*key))
			key++;
		if (!*key)
			continue;
		val = key;
		while (*val && !isspace((unsigned char)*val))
			val++;
		if (*val)
			*val++ = '\0';
		while (isspace((unsigned char)*val))
			val++;
		end = val + strlen(val);
		while (end > val && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (config_apply(cfg, key, val, e, sizeof(e))) {
			snprintf(err, errlen, "line %d: %s", lineno, e);
			return -EINVAL;
		}
	}
	if (hc_params_check(&cfg->hc, e, sizeof(e))) {
		snprintf(err, errlen, "%s", e);
		return -EINVAL;
	}
	if (!cfg->fleet_cert[0] != !cfg->fleet_key[0]) {
		snprintf(err, errlen, "fleet_etcd_cert and fleet_etcd_key go together: give both");
		return -EINVAL;
	}
	if (cfg->damping_reuse >= cfg->damping_suppress) {
		snprintf(err, errlen,
			 "damping_reuse %u must be below damping_suppress %u: a suppressed backend "
			 "would never be reused",
			 cfg->damping_reuse, cfg->damping_suppress);
		return -EINVAL;
	}
	if (cfg->health_fleet && !cfg->fleet_etcd[0]) {
		snprintf(err, errlen,
			 "health_scope fleet needs fleet_etcd: the verdicts are shared through "
			 "etcd");
		return -EINVAL;
	}
	return 0;
}

bool config_has_iface(const struct maglevd_config *cfg, const char *name)
{
	int i;

	for (i = 0; i < cfg->n_ifaces; i++)
		if (!strcmp(cfg->ifaces[i], name))
			return true;
	return false;
}

int config_load(const char *path, struct maglevd_config *cfg, char *err, size_t errlen)
{
	char *buf;
	size_t off = 0;
	ssize_t n;
	int fd, r;

	config_defaults(cfg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	buf = malloc(CFG_MAX_FILE);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while ((n = read(fd, buf + off, CFG_MAX_FILE - off)) > 0) {
		off += (size_t)n;
		if (off == CFG_MAX_FILE)
			break;
	}
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	} else if (off == CFG_MAX_FILE) {
		snprintf(err, errlen, "%s: larger than %u bytes", path, CFG_MAX_FILE);
		r = -EFBIG;
	} else {
		char e[240];

		r = config_parse(buf, off, cfg, e, sizeof(e));
		if (r)
			snprintf(err, errlen, "%s: %s", path, e);
	}
	free(buf);
	return r;
}

/*
 * The keys bound at start: the datapath's maps and attachment, the files
 * and sockets, the announce table, the etcd thread. One table, so a reload
 * names exactly the ones that changed (config_keep_restart_only).
 */
#define RK(name, field, str)                                             \
	{                                                                \
		name, offsetof(struct maglevd_config, field),            \
			sizeof(((struct maglevd_config *)0)->field), str \
	}
static const struct restart_key {
	const char *name;
	size_t off, size;
	bool str; /* a NUL-terminated string: compared up to the NUL */
} restart_keys[] = {
	RK("state_file", state_file, true),
	RK("pin_dir", pin_dir, true),
	RK("control_socket", control_socket, true),
	RK("conn_table_size", conn_table_size, false),
	RK("xdp_mode", xdp_generic, false),
	RK("tcp_closed_timeout_ms", tcp_closed_ms, false),
	RK("announce_table", announce_table, false),
	RK("announce_protocol", announce_protocol, false),
	RK("fleet_etcd", fleet_etcd, true),
	RK("fleet_prefix", fleet_prefix, true),
	RK("fleet_node", fleet_node, true),
	RK("fleet_ca", fleet_ca, true),
	RK("fleet_cert", fleet_cert, true),
	RK("fleet_key", fleet_key, true),
	RK("health_scope", health_fleet, false),
	RK("hot_flows", hot_flows, false),
};
#undef RK

size_t config_keep_restart_only(struct maglevd_config *nc, const struct maglevd_config *run,
				char *changed, size_t len)
{
	size_t i, n = 0, off = 0;

	if (len)
		changed[0] = '\0';
	for (i = 0; i < sizeof(restart_keys) / sizeof(restart_keys[0]); i++) {
		const struct restart_key *k = &restart_keys[i];
		char *to = (char *)nc + k->off;
		const char *from = (const char *)run + k->off;

		if (k->str ? !strncmp(to, from, k->size) : !memcmp(to, from, k->size))
			continue;
		memcpy(to, from, k->size);
		if (off < len)
			off += (size_t)snprintf(changed + off, len - off, "%s%s", n ? " " : "",
						k->name);
		n++;
	}
	return n;
}
