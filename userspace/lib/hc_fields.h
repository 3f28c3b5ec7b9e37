/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The health-check settings: the config's defaults, which a VIP may
 * override field by field. hc_fields[] is their one list: for each field
 * every name it goes by (the "check" object of the state file and of
 * status, the control request member, the maglevctl option, the
 * maglevd.conf key), its type and bounds, where it sits in struct
 * hc_params, and where each output puts it. maglevd (config, requests,
 * status, state file, fleet) and maglevctl (options, save, vip show)
 * iterate it, so a new field is one row here.
 */
#ifndef MAGLEV_HC_FIELDS_H
#define MAGLEV_HC_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hc_type { HC_NONE = 0, HC_TCP = 1, HC_HTTP = 2, HC_UDP = 3, HC_DNS = 4, HC_HTTPS = 5 };

/* https: the server certificate verified (the default) or not. */
enum hc_tls_verify { HC_TLS_VERIFY_ON = 0, HC_TLS_VERIFY_OFF = 1 };

/* What a backend that fails its checks keeps: nothing (its established
 * flows are re-picked, the IPVS/Katran default) or its established flows
 * (drained: no new flows).
 */
enum hc_on_fail { HC_ON_FAIL_REPICK = 0, HC_ON_FAIL_DRAIN = 1 };

/* Health-check settings: config defaults, overridable per VIP. */
struct hc_params {
	enum hc_type type;
	uint16_t port;	    /* 0: the VIP's port */
	uint16_t status;    /* expected HTTP status */
	char path[128];	    /* HTTP path */
	char payload[128];  /* udp: what to send, escaped text (hc_udp.h) */
	char expect[128];   /* udp: what the reply must hold; "": any reply */
	char dns_name[128]; /* dns: the name queried */
	char host[128];	    /* http, https: Host header and SNI; "": the address */
	char body[128];	    /* http, https: what the body must hold, escaped text */
	char ca_file[256];  /* https: the CAs to verify with; "": the system's */
	enum hc_tls_verify tls_verify;
	uint32_t interval_ms;
	uint32_t timeout_ms;
	uint32_t rise;
	uint32_t fall;
	enum hc_on_fail on_fail;
};

/* Which health-check fields a VIP overrides (the rest follow the config). */
enum {
	HCF_TYPE = 1 << 0,
	HCF_PORT = 1 << 1,
	HCF_PATH = 1 << 2,
	HCF_STATUS = 1 << 3,
	HCF_INTERVAL = 1 << 4,
	HCF_TIMEOUT = 1 << 5,
	HCF_RISE = 1 << 6,
	HCF_FALL = 1 << 7,
	HCF_ON_FAIL = 1 << 8,
	HCF_PAYLOAD = 1 << 9,
	HCF_EXPECT = 1 << 10,
	HCF_DNS_NAME = 1 << 11,
	HCF_HOST = 1 << 12,
	HCF_BODY = 1 << 13,
	HCF_CA_FILE = 1 << 14,
	HCF_TLS_VERIFY = 1 << 15,
};

enum hc_field_kind {
	HCK_UINT, /* uint16_t or uint32_t */
	HCK_STR,  /* char[size], NUL-terminated */
	HCK_ENUM, /* an enum, named by names[] */
};

/*
 * The orders the fields are taken in. Each reader and writer was written by
 * hand first and its order is part of a format (the state file, a maglevctl
 * save, status JSON) or decides which of several bad fields a request or
 * state file is refused for; they stay as they were, byte for byte.
 */
enum hc_order {
	HC_ORDER_STATE,	  /* written to the state file and the fleet's etcd values */
	HC_ORDER_SAVE,	  /* maglevctl save's options; read from the state file */
	HC_ORDER_REQUEST, /* read from vip.add and vip.set */
	HC_ORDER_STATUS,  /* the "check" object of status and vip show */
	HC_ORDERS,
};

#define HC_TYPES_ALL	 0x3fu		      /* every type, none too */
#define HC_TYPES_CHECKED (HC_TYPES_ALL & ~1u) /* every type but none */
#define HC_TYPE_BIT(t)	 (1u << (t))

struct hc_field {
	uint32_t bit;	  /* HCF_*: the VIP overrides this field */
	const char *key;  /* member of "check" in the state file and status */
	const char *req;  /* control request member (vip.add, vip.set) */
	const char *opt;  /* maglevctl option, without "--" */
	const char *conf; /* maglevd.conf key of the default */
	enum hc_field_kind kind;
	size_t off, size; /* in struct hc_params */
	/* HCK_UINT: a request takes req_lo..hi, maglevd.conf conf_lo..hi, the
	 * state file 0..hi (hc_params_check judges the effective set).
	 */
	uint32_t req_lo, conf_lo, hi;
	const char *const *names; /* HCK_ENUM: the names, by value */
	const char *choices;	  /* HCK_ENUM: the names, for errors */
	/* maglevd.conf only: a check of the value and what it wants */
	bool (*conf_ok)(const char *val);
	const char *conf_want;
	bool short_too_long;	/* a request's "<req> too long", without the limit */
	bool escaped;		/* escaped text (hc_udp.h): a maglevctl save line writes
				 * whitespace and '#' as \xNN */
	unsigned int shown_for; /* status shows it for these types (HC_TYPE_BIT) */
	/* maglevctl vip show: on the timing line as "<show> N<unit>" */
	const char *show, *unit;
	uint8_t rank[HC_ORDERS]; /* its place in each order */
};

#define HC_NFIELDS 16
extern const struct hc_field hc_fields[HC_NFIELDS];

/* The i-th field (0..HC_NFIELDS-1) of an order. */
const struct hc_field *hc_field_at(enum hc_order o, size_t i);
/* The field whose maglevd.conf key is key, or NULL. */
const struct hc_field *hc_field_by_conf(const char *key);
/* The field whose control-request member is member, or NULL. */
const struct hc_field *hc_field_by_req(const char *member);

/* HCK_UINT: the value. */
uint32_t hc_field_uint(const struct hc_params *p, const struct hc_field *f);
void hc_field_set_uint(struct hc_params *p, const struct hc_field *f, uint32_t v);
/* HCK_STR: the string; HCK_ENUM: the value's name. */
const char *hc_field_str(const struct hc_params *p, const struct hc_field *f);
/* HCK_STR: copy s (-ENAMETOOLONG, nothing changed, when it does not fit);
 * HCK_ENUM: parse it (-EINVAL when it names no value).
 */
int hc_field_set_str(struct hc_params *p, const struct hc_field *f, const char *s);
/* dst's field f := src's. */
void hc_field_copy(struct hc_params *dst, const struct hc_params *src, const struct hc_field *f);

const char *hc_type_name(enum hc_type t);
int hc_type_parse(const char *s, enum hc_type *t);
const char *hc_on_fail_name(enum hc_on_fail f);
int hc_on_fail_parse(const char *s, enum hc_on_fail *f);
/* The path goes into the request line as is: '/' then visible ASCII only. */
bool hc_http_path_ok(const char *path);
/* A Host/SNI name: dotted labels of letters, digits, '-' and '_'. */
bool hc_http_host_ok(const char *host);
/* A CA file is named by an absolute path. */
bool hc_ca_file_ok(const char *path);

#endif /* MAGLEV_HC_FIELDS_H */
