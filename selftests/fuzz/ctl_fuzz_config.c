// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: the maglevd configuration file parser (config_parse,
 * what "maglevd -c FILE" and SIGHUP run; docs/maglevd.conf.example).
 *
 * Oracles, besides ASan/UBSan/LSan: a rejection names a reason; an accepted
 * file gives a configuration within the documented limits (health-check
 * settings consistent, strings terminated, interface list bounded), and
 * parsing the same text again gives the same configuration.
 */
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "ctl_fuzz.h"
#include "core/log.h"
#include "maglev_maps.h"

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static void check_config(const struct maglevd_config *c)
{
	char e[200];
	int i;

	if (hc_params_check(&c->hc, e, sizeof(e)))
		ctl_fuzz_die("accepted config fails its own check: %s", e);
	if (c->n_ifaces < 0 || c->n_ifaces > CFG_MAX_IFACES)
		ctl_fuzz_die("%d interfaces", c->n_ifaces);
	for (i = 0; i < c->n_ifaces; i++)
		if (!TERMINATED(c->ifaces[i]) || !c->ifaces[i][0])
			ctl_fuzz_die("interface %d name is empty or unterminated", i);
	if (!TERMINATED(c->metrics_listen) || !TERMINATED(c->state_file) ||
	    !TERMINATED(c->control_socket) || !TERMINATED(c->control_group) ||
	    !TERMINATED(c->pin_dir) || !TERMINATED(c->hc.path))
		ctl_fuzz_die("unterminated string setting");
	if (c->state_file[0] != '/' || c->control_socket[0] != '/' || c->pin_dir[0] != '/')
		ctl_fuzz_die("relative path accepted");
	if (c->max_vips < 1 || c->max_vips > MAGLEV_MAX_VIPS || c->max_backends_per_vip < 1 ||
	    c->max_backends_per_vip >= MAGLEV_MAX_BACKENDS || c->conn_table_size < 1024 ||
	    c->mtu > 65535 || c->src4_plen > 32 || c->src6_plen > 128)
		ctl_fuzz_die("limit out of its documented range");
	if (c->log_level != LOG_ERR && c->log_level != LOG_WARN && c->log_level != LOG_INFO &&
	    c->log_level != LOG_DEBUG)
		ctl_fuzz_die("log level %d", c->log_level);
}

/* Linked with the rest of the daemon's code; never reached from here. */
int daemon_commit(struct daemon *d, struct registry *next, enum commit_source src, char *err,
		  size_t errlen)
{
	ctl_fuzz_die("daemon_commit called by the config parser");
}

int daemon_commit_then(struct daemon *d, struct registry *next, enum commit_source src,
		       commit_done_fn done, void *arg, char *err, size_t errlen)
{
	ctl_fuzz_die("daemon_commit_then called by the config parser");
}

bool daemon_commit_busy(void)
{
	return false;
}

/* Commits here are written at once: the newest registry is the datapath's. */
const struct registry *daemon_applied(const struct daemon *d)
{
	return d->reg;
}

void daemon_commit_barrier(struct daemon *d, commit_done_fn done, void *arg)
{
	ctl_fuzz_die("daemon_commit_barrier called by the config parser");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init();
	log_set_level(LOG_ERR);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct maglevd_config a, b;
	char err[400] = "", err2[400] = "";
	int ra, rb;

	config_defaults(&a);
	config_defaults(&b);
	ra = config_parse((const char *)data, size, &a, err, sizeof(err));
	rb = config_parse((const char *)data, size, &b, err2, sizeof(err2));
	if (ra != rb || strcmp(err, err2))
		ctl_fuzz_die("parsing the same text twice differs");
	if (ra) {
		if (!err[0])
			ctl_fuzz_die("rejected without a reason");
		return 0;
	}
	if (memcmp(&a, &b, sizeof(a)))
		ctl_fuzz_die("parsing the same text twice gives different configurations");
	check_config(&a);
	return 0;
}
