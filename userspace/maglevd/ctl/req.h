/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the control request files share: requests.c (the envelope),
 * req_args.c, req_changes.c, req_queries.c and flows_guard.c.
 */
#ifndef MAGLEVD_REQ_H
#define MAGLEVD_REQ_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "core/daemon.h"

struct req_err {
	char msg[300];
	bool deferred; /* no answer yet: fleet.c gives it */
};

/* req_args.c: each fails with a message naming the field. */
int req_fail(struct req_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int req_check_keys(json_object *req, const char *const *allowed, struct req_err *e);
/* req_check_keys, and every health-check override (hc_fields[].req) allowed too. */
int req_check_keys_hc(json_object *req, const char *const *allowed, struct req_err *e);
int req_get_str(json_object *req, const char *key, bool required, const char **out,
		struct req_err *e);
int req_get_int(json_object *req, const char *key, int64_t min, int64_t max, int64_t *out,
		bool *present, struct req_err *e);
int req_get_bool(json_object *req, const char *key, bool *out, bool *present, struct req_err *e);
const char *req_addr_unusable(uint8_t family, const uint32_t *addr);
int req_get_vip(struct daemon *d, struct registry *r, json_object *req, struct vip **v,
		struct req_err *e);
int req_get_backend(json_object *req, struct ctl_addr *a, struct req_err *e);
const char *req_cmd(json_object *req);

/* req_changes.c: a change applied to the clone r. */
typedef int (*req_change_fn)(struct daemon *d, struct registry *r, json_object *req,
			     struct req_err *e);
req_change_fn req_find_change(const char *cmd);
/* One change or a "batch" of them. */
int req_apply_change(struct daemon *d, struct registry *r, const char *cmd, json_object *req,
		     struct req_err *e);

/* req_queries.c */
struct req_query {
	const char *cmd;
	json_object *(*fn)(struct daemon *d, json_object *req, struct req_err *e);
	bool (*is_change)(json_object *req); /* NULL: a query only */
};
const struct req_query *req_find_query(const char *cmd);
json_object *req_dump_reply(const struct registry *r);

/* flows_guard.c: refused (unless "force") when next takes a backend that
 * carries live flows out of a VIP that stays.
 */
int req_guard_flows(struct daemon *d, const struct registry *next, struct req_err *e);

/* requests.c */
json_object *req_ok_reply(void);

#endif /* MAGLEVD_REQ_H */
