// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * userspace/lib/hc_fields.c is the one list of the health-check fields that
 * maglevd and maglevctl iterate for the state file, requests, status, the
 * config and maglevctl's options. A row with a rank used twice would make
 * hc_field_at() return NULL for some place of an order and every caller
 * crash or drop a field; two rows with one name would make a reader take
 * the wrong one. These checks catch that at build-test time, before a daemon
 * test does, and check that each accessor reads and writes the field its
 * row names.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "hc_fields.h"

TEST(every_order_is_a_permutation)
{
	for (int o = 0; o < HC_ORDERS; o++) {
		const struct hc_field *seen[HC_NFIELDS] = {0};

		for (size_t i = 0; i < HC_NFIELDS; i++) {
			const struct hc_field *f = hc_field_at(o, i);

			ASSERT_NE(NULL, f) TH_LOG("order %d has no field at %zu", o, i);
			for (size_t j = 0; j < i; j++) {
				ASSERT_NE(seen[j], f) TH_LOG("order %d: %s twice", o, f->key);
			}
			seen[i] = f;
		}
		ASSERT_EQ(NULL, hc_field_at(o, HC_NFIELDS));
	}
}

static void names_unique(struct __test_metadata *_metadata, size_t member)
{
	for (size_t i = 0; i < HC_NFIELDS; i++) {
		const char *a = *(const char *const *)((const char *)&hc_fields[i] + member);

		ASSERT_NE(NULL, a);
		ASSERT_NE('\0', a[0]);
		for (size_t j = 0; j < i; j++) {
			const char *b =
				*(const char *const *)((const char *)&hc_fields[j] + member);

			ASSERT_NE(0, strcmp(a, b)) TH_LOG("name %s in two rows", a);
		}
	}
}

TEST(names_and_bits_are_unique)
{
	uint32_t bits = 0;

	names_unique(_metadata, offsetof(struct hc_field, key));
	names_unique(_metadata, offsetof(struct hc_field, req));
	names_unique(_metadata, offsetof(struct hc_field, opt));
	names_unique(_metadata, offsetof(struct hc_field, conf));
	for (size_t i = 0; i < HC_NFIELDS; i++) {
		ASSERT_NE(0, hc_fields[i].bit);
		ASSERT_EQ(0, hc_fields[i].bit & (hc_fields[i].bit - 1))
		TH_LOG("%s: not one bit", hc_fields[i].key);
		ASSERT_EQ(0, bits & hc_fields[i].bit)
		TH_LOG("%s: bit used twice", hc_fields[i].key);
		bits |= hc_fields[i].bit;
		ASSERT_EQ(&hc_fields[i], hc_field_by_conf(hc_fields[i].conf));
	}
	ASSERT_EQ(NULL, hc_field_by_conf("health_nonsense"));
}

TEST(each_row_reads_and_writes_its_own_field)
{
	for (size_t i = 0; i < HC_NFIELDS; i++) {
		const struct hc_field *f = &hc_fields[i];
		struct hc_params p, q;
		unsigned char *a = (unsigned char *)&p;

		ASSERT_LE(f->off + f->size, sizeof(struct hc_params)) TH_LOG("%s", f->key);
		memset(&p, 0, sizeof(p));
		memset(&q, 0, sizeof(q));
		switch (f->kind) {
		case HCK_UINT:
			ASSERT_TRUE(f->size == 2 || f->size == 4) TH_LOG("%s", f->key);
			ASSERT_LE(f->req_lo, f->hi);
			hc_field_set_uint(&p, f, f->hi);
			ASSERT_EQ(f->hi, hc_field_uint(&p, f)) TH_LOG("%s", f->key);
			break;
		case HCK_STR: {
			char big[1024];

			ASSERT_LT(f->size, sizeof(big));
			ASSERT_EQ(0, hc_field_set_str(&p, f, "x1"));
			ASSERT_STREQ("x1", hc_field_str(&p, f));
			memset(big, 'a', f->size);
			big[f->size] = '\0';
			q = p;
			ASSERT_EQ(-ENAMETOOLONG, hc_field_set_str(&p, f, big)) TH_LOG("%s", f->key);
			ASSERT_EQ(0, memcmp(&p, &q, sizeof(p)))
			TH_LOG("%s changed on refusal", f->key);
			big[f->size - 1] = '\0';
			ASSERT_EQ(0, hc_field_set_str(&p, f, big));
			ASSERT_STREQ(big, hc_field_str(&p, f));
			memset(&q, 0, sizeof(q));
			break;
		}
		case HCK_ENUM: {
			size_t n;

			ASSERT_NE(NULL, f->names);
			ASSERT_NE(NULL, f->choices);
			for (n = 0; f->names[n]; n++) {
				ASSERT_EQ(0, hc_field_set_str(&p, f, f->names[n]))
				TH_LOG("%s", f->names[n]);
				ASSERT_STREQ(f->names[n], hc_field_str(&p, f));
				ASSERT_NE(NULL, strstr(f->choices, f->names[n]));
			}
			ASSERT_GT(n, 1);
			ASSERT_EQ(-EINVAL, hc_field_set_str(&p, f, "nonsense"));
			ASSERT_STREQ(f->names[n - 1], hc_field_str(&p, f));
			break;
		}
		}
		/* Only the row's own bytes changed; copying moves exactly them. */
		for (size_t k = 0; k < sizeof(p); k++) {
			if (k < f->off || k >= f->off + f->size) {
				ASSERT_EQ(0, a[k]) TH_LOG("%s wrote byte %zu", f->key, k);
			}
		}
		hc_field_copy(&q, &p, f);
		ASSERT_EQ(0, memcmp(&p, &q, sizeof(p))) TH_LOG("%s: copy", f->key);
	}
}

TEST_HARNESS_MAIN
