// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Typed members of a JSON object (see json_get.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_get.h"

static int fail(const struct json_get *g, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(const struct json_get *g, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->err, g->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* What a request's wrong type says it must be. */
static const char *wanted(json_type type)
{
	switch (type) {
	case json_type_string:
		return "a string";
	case json_type_int:
		return "an integer";
	case json_type_boolean:
		return "true or false";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	default:
		return "a number";
	}
}

int json_get_member(const struct json_get *g, json_object *o, const char *key, json_type type,
		    bool required, json_object **out)
{
	bool absent = !json_object_object_get_ex(o, key, out);

	/* A request's explicit null is a wrong type; the state file's, absent. */
	if (!absent && !*out && g->mode == JSON_GET_STATE)
		absent = true;
	if (absent) {
		*out = NULL;
		if (!required)
			return 0;
		return fail(g, -EINVAL, "missing '%s'", key);
	}
	if (!*out || !json_object_is_type(*out, type)) {
		if (g->mode == JSON_GET_STATE)
			return fail(g, -EINVAL, "'%s' has the wrong type", key);
		return fail(g, -EINVAL, "'%s' must be %s", key, wanted(type));
	}
	return 0;
}

int json_get_str(const struct json_get *g, json_object *o, const char *key, bool required,
		 const char **out)
{
	json_object *m;

	*out = NULL;
	if (json_get_member(g, o, key, json_type_string, required, &m))
		return -EINVAL;
	if (!m)
		return 0;
	*out = json_object_get_string(m);
	if (g->mode == JSON_GET_REQUEST && strlen(*out) != (size_t)json_object_get_string_len(m))
		return fail(g, -EINVAL, "'%s' holds a NUL byte", key);
	return 0;
}

/* v of member m is out of its range. */
static int range(const struct json_get *g, const char *key, json_object *m, long long lo,
		 unsigned long long hi)
{
	if (g->mode == JSON_GET_STATE)
		return fail(g, -ERANGE, "'%s' out of range", key);
	return fail(g, -EINVAL, "%s %s out of range %lld..%llu", key, json_object_to_json_string(m),
		    lo, hi);
}

int json_get_int(const struct json_get *g, json_object *o, const char *key, int64_t min,
		 int64_t max, int64_t *out, bool *present)
{
	json_object *m;
	int64_t v;

	*present = false;
	if (json_get_member(g, o, key, json_type_int, false, &m))
		return -EINVAL;
	if (!m)
		return 0;
	v = json_object_get_int64(m);
	/* INT64_MAX: json-c's saturation of a larger number, never a value. */
	if (v == INT64_MAX || v < min || v > max)
		return range(g, key, m, (long long)min, (unsigned long long)max);
	*out = v;
	*present = true;
	return 0;
}

int json_get_uint(const struct json_get *g, json_object *o, const char *key, bool required,
		  uint64_t max, uint64_t *out)
{
	json_object *m;
	uint64_t u;
	int64_t v;

	if (json_get_member(g, o, key, json_type_int, required, &m))
		return -EINVAL;
	if (!m)
		return 0;
	v = json_object_get_int64(m);
	if (v == INT64_MAX)
		u = json_object_get_uint64(m);
	else if (v < 0)
		return range(g, key, m, 0, max);
	else
		u = (uint64_t)v;
	if (u > max)
		return range(g, key, m, 0, max);
	*out = u;
	return 0;
}

int json_get_bool(const struct json_get *g, json_object *o, const char *key, bool *out,
		  bool *present)
{
	json_object *m;

	*present = false;
	if (json_get_member(g, o, key, json_type_boolean, false, &m))
		return -EINVAL;
	if (!m)
		return 0;
	*out = json_object_get_boolean(m);
	*present = true;
	return 0;
}

/* Member key of o, or NULL when o is NULL or the member absent or null. */
static json_object *peek(json_object *o, const char *key)
{
	json_object *m;

	if (!o || !json_object_object_get_ex(o, key, &m))
		return NULL;
	return m;
}

const char *jstr(json_object *o, const char *key)
{
	json_object *m = peek(o, key);

	return m ? json_object_get_string(m) : NULL;
}

int64_t jint(json_object *o, const char *key)
{
	json_object *m = peek(o, key);

	return m ? json_object_get_int64(m) : 0;
}

double jdbl(json_object *o, const char *key)
{
	json_object *m = peek(o, key);

	return m ? json_object_get_double(m) : 0;
}

bool jbool(json_object *o, const char *key)
{
	json_object *m = peek(o, key);

	return m ? json_object_get_boolean(m) : false;
}
