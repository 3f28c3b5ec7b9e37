/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Typed members of a JSON object, one set for every reader: maglevd's
 * control requests and state file, and the answers maglevctl prints.
 *
 * The strict getters fail with a message naming the member, worded the way
 * its reader has always worded it (the mode): control clients, the tests
 * and the fuzzers compare these texts. The lenient ones (jstr, jint, jdbl,
 * jbool) read an answer maglevd wrote: absent or null gives NULL, 0 or false.
 */
#ifndef MAGLEV_JSON_GET_H
#define MAGLEV_JSON_GET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

enum json_get_mode {
	/* Control requests: an explicit null is a wrong type, not an absent
	 * member; a string may not hold a NUL byte; a wrong type says the type
	 * wanted ("'weight' must be an integer"); a bad number, its value and
	 * the range ("weight 100000 out of range 0..65535"); failures are -EINVAL.
	 */
	JSON_GET_REQUEST,
	/* The state file: null is absent; "'id' has the wrong type", "'id' out
	 * of range" (-ERANGE).
	 */
	JSON_GET_STATE,
};

/* Where a getter's failure goes. */
struct json_get {
	enum json_get_mode mode;
	char *err;
	size_t errlen;
};

/* Member key of o, of the given type; *out NULL (and 0 returned) when it is
 * absent and not required.
 */
int json_get_member(const struct json_get *g, json_object *o, const char *key, json_type type,
		    bool required, json_object **out);
/* A string member; *out NULL when absent and not required. */
int json_get_str(const struct json_get *g, json_object *o, const char *key, bool required,
		 const char **out);
/* An optional integer in [min, max]; *present says whether it was given. */
int json_get_int(const struct json_get *g, json_object *o, const char *key, int64_t min,
		 int64_t max, int64_t *out, bool *present);
/* An unsigned integer up to max (all of uint64_t's range); *out untouched
 * when absent and not required.
 */
int json_get_uint(const struct json_get *g, json_object *o, const char *key, bool required,
		  uint64_t max, uint64_t *out);
/* An optional boolean; *present says whether it was given. */
int json_get_bool(const struct json_get *g, json_object *o, const char *key, bool *out,
		  bool *present);

/* Lenient: o may be NULL; absent or null members give NULL, 0 or false and
 * a member of another type its json-c conversion.
 */
const char *jstr(json_object *o, const char *key);
int64_t jint(json_object *o, const char *key);
double jdbl(json_object *o, const char *key);
bool jbool(json_object *o, const char *key);

#endif /* MAGLEV_JSON_GET_H */
