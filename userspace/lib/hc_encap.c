// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Load, attach and feed bpf/maglev_hc.bpf.c (see hc_encap.h). The filter is
 * a direct-action cls_bpf on clsact egress (netlink, so it works on 6.1 as
 * well as on kernels with tcx); it stays after maglevd exits, harmless since
 * it only touches marked packets, and a new maglevd replaces it in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hc_encap.h"
#include "maglev_hc.skel.h"

struct hc_encap {
	struct maglev_hc *skel;
};

int hc_encap_open(struct hc_encap **out, int cfg_map_fd, int ifl2_map_fd, char *err, size_t errlen)
{
	struct hc_encap *h;
	int r;

	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	h->skel = maglev_hc__open();
	if (!h->skel) {
		r = -errno;
		snprintf(err, errlen, "opening the health-check program: %s", strerror(-r));
		goto fail;
	}
	r = bpf_map__reuse_fd(h->skel->maps.maglev_cfg, cfg_map_fd);
	if (r) {
		snprintf(err, errlen, "reusing the balancer's config map: %s", strerror(-r));
		goto fail;
	}
	r = bpf_map__reuse_fd(h->skel->maps.maglev_ifl2, ifl2_map_fd);
	if (r) {
		snprintf(err, errlen, "reusing the balancer's interface map: %s", strerror(-r));
		goto fail;
	}
	r = maglev_hc__load(h->skel);
	if (r) {
		snprintf(err, errlen, "loading the health-check program: %s", strerror(-r));
		goto fail;
	}
	*out = h;
	return 0;
fail:
	hc_encap_close(h);
	return r;
}

void hc_encap_close(struct hc_encap *h)
{
	if (!h)
		return;
	maglev_hc__destroy(h->skel);
	free(h);
}

int hc_encap_attach(struct hc_encap *h, int ifindex, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MAGLEV_HC_TC_HANDLE,
		    .priority = MAGLEV_HC_TC_PRIORITY, .flags = BPF_TC_F_REPLACE,
		    .prog_fd = bpf_program__fd(h->skel->progs.maglev_hc));
	int r;

	r = bpf_tc_hook_create(&hook);
	if (r && r != -EEXIST) {
		snprintf(err, errlen, "creating the clsact qdisc: %s", strerror(-r));
		return r;
	}
	r = bpf_tc_attach(&hook, &opts);
	if (r) {
		snprintf(err, errlen, "attaching the TC egress filter: %s", strerror(-r));
		return r;
	}
	return 0;
}

int hc_encap_detach(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MAGLEV_HC_TC_HANDLE,
		    .priority = MAGLEV_HC_TC_PRIORITY);
	int r;

	r = bpf_tc_detach(&hook, &opts);
	/* No clsact qdisc (EINVAL) or no such filter (ENOENT): nothing to do. */
	if (r == -ENOENT || r == -EINVAL)
		return 0;
	return r;
}

int hc_encap_set(struct hc_encap *h, uint32_t idx, const struct maglev_hc_target *t)
{
	if (bpf_map__update_elem(h->skel->maps.maglev_hc_targets, &idx, sizeof(idx), t, sizeof(*t),
				 BPF_ANY))
		return -errno;
	return 0;
}

int hc_encap_clear(struct hc_encap *h, uint32_t idx)
{
	if (bpf_map__delete_elem(h->skel->maps.maglev_hc_targets, &idx, sizeof(idx), 0) &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

int hc_encap_counters(struct hc_encap *h, uint64_t out[MAGLEV_HC_CTR_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), fd, c;
	uint32_t k;
	uint64_t *v;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	fd = bpf_map__fd(h->skel->maps.maglev_hc_cnt);
	for (k = 0; k < MAGLEV_HC_CTR_MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += v[c];
	}
	free(v);
	return 0;
}
